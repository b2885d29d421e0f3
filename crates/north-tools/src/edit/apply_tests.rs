//! Interrupted and failed applies: recovery and rollback, step by step.

use super::*;
use crate::edit::{CreateFileArgs, EditOp, ReplaceExactArgs, propose};

struct Fixture {
    _dir: tempfile::TempDir,
    sandbox: Sandbox,
    proposal: Proposal,
}

/// Three files change (two edited, one created in a new directory).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    std::fs::write(sandbox.root().join("a.txt"), "a old\n").unwrap();
    std::fs::write(sandbox.root().join("b.txt"), "b old\n").unwrap();
    let replace = |path: &str| {
        EditOp::ReplaceExact(ReplaceExactArgs {
            path: path.into(),
            old: "old".into(),
            new: "new".into(),
            expected_occurrences: Some(1),
        })
    };
    let ops = [
        replace("a.txt"),
        replace("b.txt"),
        EditOp::CreateFile(CreateFileArgs {
            path: "d/c.txt".into(),
            content: "c new\n".into(),
            overwrite: false,
        }),
    ];
    let proposal = propose(&sandbox, &ops, true).unwrap();
    Fixture {
        _dir: dir,
        sandbox,
        proposal,
    }
}

fn state(f: &Fixture) -> (String, String, Option<String>) {
    let read = |p: &str| std::fs::read_to_string(f.sandbox.root().join(p));
    (
        read("a.txt").unwrap(),
        read("b.txt").unwrap(),
        read("d/c.txt").ok(),
    )
}

fn old() -> (String, String, Option<String>) {
    ("a old\n".into(), "b old\n".into(), None)
}

fn new() -> (String, String, Option<String>) {
    ("a new\n".into(), "b new\n".into(), Some("c new\n".into()))
}

/// Names of every entry under the root but `.north`, to catch leftovers.
fn leftovers(f: &Fixture) -> Vec<String> {
    let mut names = Vec::new();
    for dir in [
        f.sandbox.root().to_path_buf(),
        f.sandbox.root().join("d"),
        f.sandbox.root().join(TXN_DIR),
    ] {
        if let Ok(read) = std::fs::read_dir(dir) {
            names.extend(
                read.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned()),
            );
        }
    }
    names.retain(|n| n.ends_with(".tmp") || n.ends_with(".json"));
    names
}

#[test]
fn killed_while_preparing_rolls_back() {
    let f = fixture();
    assert!(apply_inner(&f.proposal, &f.sandbox, Some(Stop::AfterPrepare)).is_err());
    assert_eq!(state(&f), old());
    assert!(
        !leftovers(&f).is_empty(),
        "the interrupted apply left its temps"
    );
    assert_eq!(super::super::recover(&f.sandbox).unwrap().settled.len(), 1);
    assert_eq!(state(&f), old());
    assert_eq!(leftovers(&f), Vec::<String>::new());
    assert!(
        !f.sandbox.root().join("d").exists(),
        "created directory removed"
    );
}

#[test]
fn killed_after_commit_rolls_forward() {
    for renames in 0..3 {
        let f = fixture();
        assert!(apply_inner(&f.proposal, &f.sandbox, Some(Stop::AfterRenames(renames))).is_err());
        assert_eq!(super::super::recover(&f.sandbox).unwrap().settled.len(), 1);
        assert_eq!(state(&f), new(), "after {renames} renames");
        assert_eq!(leftovers(&f), Vec::<String>::new());
    }
}

#[test]
fn a_failed_rename_restores_every_file() {
    for at in 0..3 {
        let f = fixture();
        let err = apply_inner(&f.proposal, &f.sandbox, Some(Stop::FailRename(at))).unwrap_err();
        assert!(matches!(err, ApplyError::RolledBack { .. }), "{err}");
        assert_eq!(state(&f), old(), "failure at rename {at}");
        assert_eq!(leftovers(&f), Vec::<String>::new());
        assert!(!f.sandbox.root().join("d").exists());
    }
}

#[test]
fn the_next_apply_recovers_first() {
    let f = fixture();
    assert!(apply_inner(&f.proposal, &f.sandbox, Some(Stop::AfterRenames(1))).is_err());
    // The proposal is now stale for a.txt (already new): refused, but the
    // interrupted transaction was finished first.
    assert!(matches!(
        apply(&f.proposal, &f.sandbox),
        Err(ApplyError::Stale { .. })
    ));
    assert_eq!(state(&f), new());
}
