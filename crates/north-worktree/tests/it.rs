//! Worktrees through the crate's public interface, with the real git.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use north_worktree::{
    ChangeKind, CreateRequest, DirtyPolicy, Owner, Registry, WorktreeError, apply, changes, create,
    remove,
};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct Repo {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    registry: Registry,
}

fn repo() -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("proj");
    std::fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    std::fs::write(
        top.join("a.txt"),
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\n",
    )
    .unwrap();
    std::fs::write(top.join("b.txt"), "bee\n").unwrap();
    git(&top, &["add", "."]);
    git(&top, &["commit", "-qm", "first"]);
    let registry = Registry::at(tmp.path().join("data/worktrees"));
    Repo {
        top,
        registry,
        _tmp: tmp,
    }
}

fn request(top: &Path, name: &str) -> CreateRequest {
    CreateRequest {
        from: top.to_path_buf(),
        name: Some(name.into()),
        base: None,
        dirty: DirtyPolicy::Refuse,
        owner: Owner::Session,
    }
}

#[test]
fn a_worktree_is_a_real_git_worktree_on_its_own_branch_and_recorded() {
    let r = repo();
    let wt = create(&request(&r.top, "feat"), &r.registry).unwrap();
    assert_eq!(wt.path, r.top.parent().unwrap().join("proj.worktrees/feat"));
    assert_eq!(
        std::fs::read_to_string(wt.path.join("a.txt"))
            .unwrap()
            .lines()
            .count(),
        7
    );
    // The user's own git sees it, on its branch, and can commit there.
    let list = git(&r.top, &["worktree", "list", "--porcelain"]);
    assert!(list.contains(&wt.path.display().to_string()), "{list}");
    assert!(list.contains("branch refs/heads/north/feat"), "{list}");
    std::fs::write(wt.path.join("c.txt"), "new\n").unwrap();
    git(&wt.path, &["add", "c.txt"]);
    git(&wt.path, &["commit", "-qm", "in the worktree"]);
    assert!(
        git(&r.top, &["status", "--porcelain"]).is_empty(),
        "the main tree is untouched"
    );
    assert_eq!(r.registry.named(&r.top, "feat").unwrap(), wt);
    assert_eq!(r.registry.at_path(&wt.path).unwrap(), wt);
    // The name is taken now.
    assert!(matches!(
        create(&request(&r.top, "feat"), &r.registry),
        Err(WorktreeError::Exists(_))
    ));
}

#[test]
fn a_dirty_tree_is_refused_unless_its_changes_are_carried() {
    let r = repo();
    std::fs::write(r.top.join("a.txt"), "changed\n").unwrap();
    std::fs::write(r.top.join("new.txt"), "untracked\n").unwrap();
    std::fs::remove_file(r.top.join("b.txt")).unwrap();
    let err = create(&request(&r.top, "x"), &r.registry).unwrap_err();
    assert!(matches!(err, WorktreeError::Dirty(_)), "{err}");
    assert!(err.to_string().contains("--worktree-copy"), "{err}");
    let mut req = request(&r.top, "x");
    req.dirty = DirtyPolicy::Copy;
    let wt = create(&req, &r.registry).unwrap();
    assert_eq!(
        std::fs::read_to_string(wt.path.join("a.txt")).unwrap(),
        "changed\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.path.join("new.txt")).unwrap(),
        "untracked\n"
    );
    assert!(!wt.path.join("b.txt").exists());
    // The carried changes are the worktree's starting point: nothing to
    // bring back yet, and the user's git sees a clean worktree.
    assert!(changes(&wt).unwrap().is_empty());
    assert!(git(&wt.path, &["status", "--porcelain"]).is_empty());
    assert_eq!(git(&wt.path, &["rev-parse", "HEAD"]).trim(), wt.base);
}

#[test]
fn ignored_files_named_in_worktreeinclude_are_copied_in() {
    let r = repo();
    std::fs::write(r.top.join(".gitignore"), ".env\n*.log\n").unwrap();
    std::fs::write(r.top.join(".worktreeinclude"), ".env\n").unwrap();
    git(&r.top, &["add", "."]);
    git(&r.top, &["commit", "-qm", "ignores"]);
    std::fs::write(r.top.join(".env"), "KEY=1\n").unwrap();
    std::fs::write(r.top.join("build.log"), "noise\n").unwrap();
    let wt = create(&request(&r.top, "inc"), &r.registry).unwrap();
    assert_eq!(
        std::fs::read_to_string(wt.path.join(".env")).unwrap(),
        "KEY=1\n"
    );
    assert!(!wt.path.join("build.log").exists());
}

#[test]
fn the_repositorys_hooks_and_config_never_run_during_create_or_merge() {
    let r = repo();
    let marker = r.top.parent().unwrap().join("ran");
    let script = r.top.parent().unwrap().join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch {}\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let s = script.display();
    for hook in ["post-checkout", "reference-transaction", "post-merge"] {
        let h = r.top.join(".git/hooks").join(hook);
        std::fs::write(&h, format!("#!/bin/sh\n{s}\n")).unwrap();
        std::fs::set_permissions(&h, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let mut config = std::fs::read_to_string(r.top.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[core]\n\tfsmonitor = {s}\n\thooksPath = .git/hooks\n[filter \"x\"]\n\tsmudge = {s}\n\tclean = {s}\n[merge \"x\"]\n\tdriver = {s} %O %A %B\n"
    ));
    std::fs::write(r.top.join(".git/config"), config).unwrap();
    std::fs::write(r.top.join(".gitattributes"), "*.txt filter=x merge=x\n").unwrap();
    // Committed without the hostile config (the test's own git must not run it).
    for args in [
        &["add", ".gitattributes"][..],
        &["commit", "-qm", "attrs", "--no-verify"],
    ] {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "core.hooksPath=/dev/null",
            ])
            .args(["-c", "core.fsmonitor=false", "-c", "filter.x.clean=cat"])
            .args(["-c", "filter.x.smudge=cat"])
            .args(args)
            .current_dir(&r.top)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_file(&marker);
    let wt = create(&request(&r.top, "safe"), &r.registry).unwrap();
    std::fs::write(
        wt.path.join("a.txt"),
        "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\n",
    )
    .unwrap();
    std::fs::write(
        r.top.join("a.txt"),
        "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n",
    )
    .unwrap();
    let all = changes(&wt).unwrap();
    apply(&wt, &all, &r.registry).unwrap();
    assert!(!marker.exists(), "a program from the repository's .git ran");
}

#[test]
fn changes_come_back_clean_merged_or_in_conflict_and_only_accepted_ones_are_written() {
    let r = repo();
    let wt = create(&request(&r.top, "m"), &r.registry).unwrap();
    // The worktree: one line changed, a file added, a file deleted, committed or not.
    std::fs::write(
        wt.path.join("a.txt"),
        "one\nTWO\nthree\nfour\nfive\nsix\nseven\n",
    )
    .unwrap();
    git(&wt.path, &["commit", "-qam", "two"]);
    std::fs::write(wt.path.join("new.txt"), "fresh\n").unwrap();
    std::fs::remove_file(wt.path.join("b.txt")).unwrap();
    // The main tree moved on elsewhere in a.txt.
    std::fs::write(
        r.top.join("a.txt"),
        "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n",
    )
    .unwrap();
    let all = changes(&wt).unwrap();
    let kinds: Vec<(&str, ChangeKind)> = all.iter().map(|c| (c.path.as_str(), c.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("a.txt", ChangeKind::Merged),
            ("b.txt", ChangeKind::Delete),
            ("new.txt", ChangeKind::Add)
        ]
    );
    assert_eq!(
        String::from_utf8_lossy(all[0].new.as_deref().unwrap()),
        "one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\n"
    );
    // Only a.txt is accepted.
    let applied = apply(&wt, &all[..1], &r.registry).unwrap();
    assert_eq!(applied.written, ["a.txt"]);
    assert_eq!(
        std::fs::read_to_string(r.top.join("a.txt")).unwrap(),
        "one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\n"
    );
    assert!(r.top.join("b.txt").exists());
    assert!(!r.top.join("new.txt").exists());
    // What is merged no longer shows.
    let left: Vec<String> = changes(&wt).unwrap().into_iter().map(|c| c.path).collect();
    assert_eq!(left, ["b.txt", "new.txt"]);
    // Work goes on in the worktree: the next merge of a.txt builds on what
    // was merged, not on the base (no conflict with its own earlier merge).
    std::fs::write(
        wt.path.join("a.txt"),
        "zero\none\nTWO\nthree\nfour\nfive\nsix\nseven\n",
    )
    .unwrap();
    let wt = r.registry.named(&r.top, "m").unwrap();
    let again = changes(&wt).unwrap();
    assert_eq!(again[0].kind, ChangeKind::Merged, "{again:?}");
    assert!(again[0].diff().contains("+zero"), "{}", again[0].diff());
    assert!(
        !again[0].diff().contains("-SEVEN"),
        "the main tree's own change stays: {}",
        again[0].diff()
    );
}

#[test]
fn two_worktrees_changing_the_same_lines_conflict_and_the_markers_are_shown_not_resolved() {
    let r = repo();
    let one = create(&request(&r.top, "one"), &r.registry).unwrap();
    let two = create(&request(&r.top, "two"), &r.registry).unwrap();
    std::fs::write(one.path.join("b.txt"), "bee from one\n").unwrap();
    std::fs::write(two.path.join("b.txt"), "bee from two\n").unwrap();
    let first = changes(&one).unwrap();
    assert_eq!(first[0].kind, ChangeKind::Modify);
    apply(&one, &first, &r.registry).unwrap();
    let second = changes(&two).unwrap();
    assert_eq!(second[0].kind, ChangeKind::Conflict, "{second:?}");
    let diff = second[0].diff();
    assert!(diff.contains("<<<<<<< main tree"), "{diff}");
    assert!(diff.contains(">>>>>>> worktree two"), "{diff}");
    assert_eq!(
        std::fs::read_to_string(r.top.join("b.txt")).unwrap(),
        "bee from one\n"
    );
}

#[test]
fn remove_takes_only_north_worktrees_and_never_follows_a_link() {
    let r = repo();
    // A worktree the user made with git is not North's.
    let theirs = r.top.parent().unwrap().join("theirs");
    git(&r.top, &["worktree", "add", "-q", theirs.to_str().unwrap()]);
    assert!(matches!(
        r.registry.named(&r.top, "theirs"),
        Err(WorktreeError::NotOwned(_))
    ));
    let wt = create(&request(&r.top, "gone"), &r.registry).unwrap();
    let outside = r.top.parent().unwrap().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink(&outside, wt.path.join("link")).unwrap();
    // Unmerged work keeps it.
    std::fs::write(wt.path.join("a.txt"), "work\n").unwrap();
    let err = remove(&wt, &r.registry, false).unwrap_err();
    assert!(matches!(err, WorktreeError::Unmerged { .. }), "{err}");
    // git's maintenance packed its branch meanwhile.
    git(&r.top, &["pack-refs", "--all"]);
    remove(&wt, &r.registry, true).unwrap();
    assert!(!wt.path.exists());
    assert!(!wt.admin.exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "mine\n"
    );
    assert!(theirs.join("a.txt").exists());
    assert!(r.registry.of_repo(&r.top).is_empty());
    let list = git(&r.top, &["worktree", "list"]);
    assert!(!list.contains("gone"), "{list}");
    let branches = git(&r.top, &["branch", "--list", "north/*"]);
    assert!(branches.trim().is_empty(), "{branches}");
}
