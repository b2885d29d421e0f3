//! Adversarial sandbox suite: escape attempts through every file tool's
//! public API (reads, searches, listings, writes and applies). Every one must
//! be refused with a clear error, leak nothing and change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use std::path::Path;

use serde_json::{Value, json};
use tools_support::Project;

const SECRET: &str = "TOPSECRET-4711";

struct World {
    p: Project,
    outside: tempfile::TempDir,
    outside_name: String,
}

fn world() -> World {
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    let out = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::write(out.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::create_dir(out.join("sub")).unwrap();
    std::fs::write(out.join("sub/deep.txt"), SECRET).unwrap();
    let outside_name = out.file_name().unwrap().to_string_lossy().into_owned();
    p.write("inside.txt", "inside x\n")
        .write("src/lib.rs", "pub fn x() {}\n")
        .write(".git/config", "[core]\n")
        .write(".north/allowlist.json", "{\"allowedCommands\": []}\n")
        .symlink(out.join("secret.txt"), "link_file_abs")
        .symlink(format!("../{outside_name}/secret.txt"), "link_file_rel")
        .symlink(&out, "link_dir_abs")
        .symlink(format!("../{outside_name}"), "link_dir_rel")
        .symlink("..", "up")
        .symlink("/etc", "etc_link")
        .symlink("/proc/self/root", "proc_root")
        .symlink("/", "slash")
        .symlink("loop_b", "loop_a")
        .symlink("loop_a", "loop_b")
        .symlink("self_loop", "self_loop")
        .symlink("chain2", "chain1")
        .symlink(out.join("secret.txt"), "chain2")
        .symlink("link_dir_abs", "chain_dir")
        .symlink(out.join("does-not-exist.txt"), "dangling_out")
        .symlink("../../../../../../../../../../../../tmp", "deep_up")
        .symlink(".north", "north_alias")
        .symlink(".git", "git_alias")
        .symlink("src", "src_alias")
        .symlink(format!("../../{outside_name}"), "src/nested_up");
    World {
        p,
        outside,
        outside_name,
    }
}

/// Paths that point outside the root (or are malformed) for reading.
fn read_escapes(w: &World) -> Vec<(String, &'static str)> {
    let out = std::fs::canonicalize(w.outside.path()).unwrap();
    let on = &w.outside_name;
    vec![
        ("../secret.txt".into(), "`..`"),
        ("../../../../etc/passwd".into(), "`..`"),
        ("src/../../x".into(), "`..`"),
        ("./../inside.txt".into(), "`..`"),
        ("..".into(), "`..`"),
        (format!("../{on}/secret.txt"), "`..`"),
        ("/etc/passwd".into(), "absolute"),
        ("//etc/passwd".into(), "absolute"),
        (out.join("secret.txt").display().to_string(), "absolute"),
        (w.p.path("inside.txt").display().to_string(), "absolute"),
        ("inside.txt\0../../etc/passwd".into(), "NUL"),
        ("\0".into(), "NUL"),
        ("a".repeat(5000), "too long"),
        (format!("src/{}", "b".repeat(300)), "too long"),
        ("link_file_abs".into(), "outside"),
        ("link_file_rel".into(), "outside"),
        ("link_dir_abs/secret.txt".into(), "outside"),
        ("link_dir_rel/sub/deep.txt".into(), "outside"),
        (format!("up/{on}/secret.txt"), "outside"),
        ("etc_link/passwd".into(), "outside"),
        ("proc_root/etc/passwd".into(), "outside"),
        ("slash/etc/hostname".into(), "outside"),
        ("loop_a".into(), "loop"),
        ("self_loop".into(), "loop"),
        ("chain1".into(), "outside"),
        ("chain_dir/secret.txt".into(), "outside"),
        ("dangling_out".into(), "dangling"),
        (format!("deep_up/{on}/secret.txt"), "outside"),
        // Refused for reads as for writes (the reference resolver's rule).
        ("".into(), "empty"),
    ]
}

/// Paths a write must refuse: escapes plus protected directories.
fn write_escapes(w: &World) -> Vec<(String, &'static str)> {
    let mut v = read_escapes(w);
    v.extend([
        ("link_dir_abs/new.txt".to_owned(), "outside"),
        ("link_dir_rel/brand/new/dir/file.txt".to_owned(), "outside"),
        ("up/new.txt".to_owned(), "outside"),
        ("src/nested_up/new.txt".to_owned(), "outside"),
        (".git/hooks/pre-commit".to_owned(), "may not write"),
        (".git/config".to_owned(), "may not write"),
        (".north/allowlist.json".to_owned(), "may not write"),
        ("./.north/allowlist.json".to_owned(), "may not write"),
        ("north_alias/allowlist.json".to_owned(), "may not write"),
        ("git_alias/hooks/post-checkout".to_owned(), "may not write"),
    ]);
    v
}

fn read_tools(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        (
            "read_file",
            json!({"path": path, "range": {"start": 1, "end": 2}}),
        ),
        ("fs.read_text", json!({"path": path})),
        ("read", json!({"path": path})),
        ("search_text", json!({"query": "TOPSECRET", "path": path})),
        ("fs.list_dir", json!({"path": path})),
    ]
}

fn write_tools(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "edit_replace_exact",
            json!({"path": path, "old": SECRET, "new": "pwned"}),
        ),
        (
            "edit_insert_at_line",
            json!({"path": path, "line": 1, "content": "pwned"}),
        ),
        (
            "edit_create_file",
            json!({"path": path, "content": "pwned", "overwrite": true}),
        ),
        (
            "edit_apply_batch",
            json!({"edits": [
                {"toolName": "edit_create_file", "args": {"path": "ok.txt", "content": "fine"}},
                {"toolName": "edit_create_file", "args": {"path": path, "content": "pwned", "overwrite": true}},
            ]}),
        ),
        (
            "fs.write_text",
            json!({"path": path, "text": "pwned", "overwrite": true}),
        ),
        ("write", json!({"path": path, "content": "pwned"})),
    ]
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if entry.file_type().unwrap().is_dir() {
            for (name, bytes) in tree(&p) {
                out.push((
                    format!("{}/{name}", entry.file_name().to_string_lossy()),
                    bytes,
                ));
            }
        } else {
            out.push((
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

fn assert_refused(w: &World, tool: &str, args: Value, keyword: &str) {
    let out = w.p.call(tool, args.clone());
    let error = out.error.clone().unwrap_or_default();
    assert!(!out.ok, "{tool} {args} was allowed: {}", out.output);
    assert!(
        error.to_lowercase().contains(&keyword.to_lowercase()),
        "{tool} {args}: error does not explain the refusal ({keyword}): {error}"
    );
    assert!(
        !out.output.to_string().contains(SECRET),
        "{tool} leaked the secret"
    );
    assert!(
        !error.contains(SECRET),
        "{tool} leaked the secret in its error"
    );
}

#[test]
fn every_escape_attempt_is_refused() {
    let w = world();
    let outside_before = tree(w.outside.path());
    let inside_before = w.p.snapshot_tree();
    let mut attempts = 0;
    for (path, keyword) in read_escapes(&w) {
        for (tool, args) in read_tools(&path) {
            assert_refused(&w, tool, args, keyword);
            attempts += 1;
        }
    }
    for (path, keyword) in write_escapes(&w) {
        for (tool, args) in write_tools(&path) {
            assert_refused(&w, tool, args, keyword);
            attempts += 1;
        }
    }
    assert!(attempts >= 100, "only {attempts} attempts");
    assert_eq!(
        tree(w.outside.path()),
        outside_before,
        "something outside the root changed"
    );
    assert_eq!(
        w.p.snapshot_tree(),
        inside_before,
        "something inside the root changed"
    );
}

#[test]
fn whole_tree_tools_never_follow_symlinks_out() {
    let w = world();
    let found = w.p.ok("search_text", json!({"query": "TOPSECRET"}));
    assert_eq!(found, json!([]));
    let found = w.p.ok(
        "search_text",
        json!({"query": "TOP.*", "regex": true, "limit": 1000}),
    );
    assert_eq!(found, json!([]));
    let files = w.p.ok("find_files", json!({"pattern": "*secret*"}));
    assert_eq!(files, json!([]));
    let files = w.p.ok("find_files", json!({"pattern": "deep"}));
    assert_eq!(files, json!([]));
    let root = w.p.ok("list_root", json!({}));
    let names: Vec<_> = root
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect();
    // Links that stay inside are listed; the ones leading out are not.
    assert_eq!(
        names,
        ["git_alias", "north_alias", "src", "src_alias", "inside.txt"]
    );
    let langs = w.p.ok("detect_languages", json!({}));
    assert_eq!(langs[0]["bytes"], 14, "only src/lib.rs counts");
    let hot = w.p.ok("hotfiles", json!({}));
    let hot = hot.as_array().unwrap();
    assert!(
        hot.iter()
            .all(|h| !h["path"].as_str().unwrap().contains("secret"))
    );
}

#[test]
fn swapping_a_directory_for_an_outside_symlink_after_proposal_is_refused_at_apply() {
    let w = world();
    w.p.mkdir("work");
    let proposal =
        w.p.propose(
            "edit_create_file",
            json!({"path": "work/new.txt", "content": "data"}),
        )
        .unwrap();
    std::fs::remove_dir(w.p.path("work")).unwrap();
    std::os::unix::fs::symlink(w.outside.path(), w.p.path("work")).unwrap();
    let err = w.p.apply(&proposal).unwrap_err();
    assert!(err.to_string().contains("outside"), "{err}");
    assert!(!w.outside.path().join("new.txt").exists());
}

#[test]
fn swapping_a_file_for_an_outside_symlink_after_proposal_is_refused_at_apply() {
    let w = world();
    let proposal =
        w.p.propose(
            "edit_replace_exact",
            json!({"path": "inside.txt", "old": "x", "new": "y"}),
        )
        .unwrap();
    std::fs::remove_file(w.p.path("inside.txt")).unwrap();
    std::os::unix::fs::symlink(w.outside.path().join("secret.txt"), w.p.path("inside.txt"))
        .unwrap();
    assert!(w.p.apply(&proposal).is_err());
    assert_eq!(
        std::fs::read_to_string(w.outside.path().join("secret.txt")).unwrap(),
        format!("{SECRET}\n")
    );
}

#[test]
fn forged_journal_cannot_write_through_a_symlink() {
    let w = world();
    // A journal that would rename a planted file over the outside secret.
    w.p.write("planted.tmp", "pwned");
    w.p.write(
        ".north/txn/1-1-0.json",
        r#"{"state":"committed","entries":[{"target":"link_dir_abs/secret.txt","temp":"planted.tmp","backup":null}],"dirs":[]}"#,
    );
    let err = north_tools::edit::recover(&w.p.ctx.sandbox().unwrap()).unwrap_err();
    assert!(err.to_string().contains("outside"), "{err}");
    assert_eq!(
        std::fs::read_to_string(w.outside.path().join("secret.txt")).unwrap(),
        format!("{SECRET}\n")
    );
}

#[test]
fn symlinks_that_stay_inside_work() {
    let w = world();
    let out = w.p.ok("read_file", json!({"path": "src_alias/lib.rs"}));
    assert_eq!(out["path"], "src/lib.rs", "reported by its real path");
    w.p.propose_apply(
        "edit_create_file",
        json!({"path": "src_alias/new.rs", "content": "// new\n"}),
    );
    assert_eq!(w.p.read("src/new.rs"), "// new\n");
    assert!(
        w.p.path("src_alias").is_symlink(),
        "the link itself was not replaced"
    );
}
