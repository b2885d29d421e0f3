//! `north tool` from the command line: every file tool runs with exit status
//! 0 on ok:true, write tools only propose unless `--apply`, and policy gates
//! hold. Crash safety of `--apply` is in `tool_apply_crash.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common;

/// The binary with its config, state and data dirs in a scratch home, so
/// trust decisions and logs never touch the user's.
fn north() -> Command {
    static HOME: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let home = HOME.get_or_init(|| tempfile::tempdir().unwrap()).path();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("north"));
    cmd.env_remove("GIT_DIR")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"));
    cmd
}

struct Run {
    code: i32,
    json: Value,
    stderr: String,
}

fn run_in(root: &Path, name: &str, args: Value, extra: &[&str]) -> Run {
    let out: Output = north()
        .arg("tool")
        .arg(name)
        .arg("--args")
        .arg(args.to_string())
        .arg("--path")
        .arg(root)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    Run {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(root: &Path, name: &str, args: Value, extra: &[&str]) -> Value {
    let r = run_in(root, name, args, extra);
    assert_eq!(r.code, 0, "north tool {name}: {} {}", r.json, r.stderr);
    assert_eq!(r.json["ok"], true);
    r.json["output"].clone()
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("README.md", "# Demo\n\nA demo project.\n");
    w("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n");
    w(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    w(".gitignore", "target/\n");
    w("target/junk.rs", "fn junk() {}\n");
    (dir, root)
}

#[test]
fn read_tools_from_the_command_line() {
    let (_d, root) = project();
    let r = &root;
    assert_eq!(
        ok(r, "list_root", json!({}), &[]),
        json!([
            {"path": "src", "type": "dir"},
            {"path": ".gitignore", "type": "file"},
            {"path": "README.md", "type": "file"}
        ])
    );
    assert_eq!(
        ok(
            r,
            "find_files",
            json!({"pattern": "*.rs", "limit": 10}),
            &[]
        ),
        json!(["src/lib.rs", "src/main.rs"])
    );
    assert_eq!(
        ok(
            r,
            "search_text",
            json!({"query": "println", "path": null, "regex": false, "limit": 5}),
            &[]
        ),
        json!([{"path": "src/main.rs", "line": 2, "column": 5, "preview": "    println!(\"hello\");"}])
    );
    let read = ok(
        r,
        "read_file",
        json!({"path": "src/lib.rs", "range": {"start": 2, "end": 2}}),
        &[],
    );
    assert_eq!(read["content"], "    a + b\n");
    assert_eq!(ok(r, "read_readme", json!({}), &[])["path"], "README.md");
    assert_eq!(
        ok(r, "detect_languages", json!({}), &[])[0]["language"],
        "Rust"
    );
    let hot = ok(r, "hotfiles", json!({"limit": 1}), &[]);
    assert_eq!(hot.as_array().unwrap().len(), 1);
    assert_eq!(
        ok(
            r,
            "fs.read_text",
            json!({"path": "src/lib.rs", "max_bytes": 6}),
            &[]
        )["text"],
        "pub fn"
    );
    assert_eq!(
        ok(r, "fs.list_dir", json!({"path": "src"}), &[])["entries"][0]["name"],
        "lib.rs"
    );
    assert_eq!(
        ok(r, "read", json!({"path": "src/main.rs"}), &[])["meta"]["role"],
        "source"
    );
}

#[test]
fn write_tools_propose_then_apply() {
    let (_d, root) = project();
    let r = &root;
    let before = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let args = json!({"path": "src/lib.rs", "old": "a + b", "new": "a.wrapping_add(b)", "expectedOccurrences": 1});
    let proposal = ok(r, "edit_replace_exact", args.clone(), &[]);
    assert_eq!(proposal["canApply"], true);
    insta::assert_snapshot!("replace_proposal_diff", proposal["diff"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        before,
        "a proposal wrote"
    );
    let applied = ok(r, "edit_replace_exact", args, &["--apply"]);
    assert_eq!(applied["applied"], true);
    assert_eq!(
        applied["files"],
        json!([{"path": "src/lib.rs", "bytes": 60, "created": false}])
    );
    assert_eq!(
        applied["diff"], proposal["diff"],
        "the model learns what changed"
    );
    assert_eq!(applied["stats"]["linesAdded"], 1);
    assert!(
        std::fs::read_to_string(root.join("src/lib.rs"))
            .unwrap()
            .contains("wrapping_add")
    );

    ok(
        r,
        "edit_insert_at_line",
        json!({"path": "src/main.rs", "line": 1, "content": "// top"}),
        &["--apply"],
    );
    assert!(
        std::fs::read_to_string(root.join("src/main.rs"))
            .unwrap()
            .starts_with("// top\nfn main")
    );
    ok(
        r,
        "edit_create_file",
        json!({"path": "src/new.rs", "content": "x\n", "overwrite": false}),
        &["--apply"],
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/new.rs")).unwrap(),
        "x\n"
    );
    let batch = json!({"edits": [
        {"toolName": "edit_replace_exact", "args": {"path": "src/new.rs", "old": "x", "new": "y"}},
        {"toolName": "edit_create_file", "args": {"path": "docs/a.md", "content": "a\n"}},
    ]});
    assert_eq!(
        ok(r, "edit_apply_batch", batch.clone(), &[])["stats"]["files"],
        2
    );
    ok(r, "edit_apply_batch", batch, &["--apply"]);
    assert_eq!(
        std::fs::read_to_string(root.join("docs/a.md")).unwrap(),
        "a\n"
    );
    let out = ok(
        r,
        "fs.write_text",
        json!({"path": "out.txt", "text": "hello"}),
        &["--apply"],
    );
    assert_eq!(out, json!({"path": "out.txt", "bytes": 5}));
    assert_eq!(
        ok(
            r,
            "write",
            json!({"path": "out.txt", "content": "hi"}),
            &["--apply"]
        ),
        json!("wrote 2 bytes")
    );
}

#[test]
fn failures_and_usage_errors_have_distinct_exit_codes() {
    let (_d, root) = project();
    let r = run_in(
        &root,
        "edit_replace_exact",
        json!({"path": "src/lib.rs", "old": "nope", "new": "x"}),
        &[],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json["ok"], false);
    assert_eq!(r.json["output"]["failures"][0]["kind"], "anchorNotFound");
    let r = run_in(&root, "no_such_tool", json!({}), &[]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json["output"]["unknownTool"], "no_such_tool");
    let r = run_in(
        &root,
        "read_file",
        json!({"path": "src/lib.rs"}),
        &["--apply"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--apply"), "{}", r.stderr);
    let out = north()
        .args(["tool", "read_file", "--args", "{oops"])
        .arg("--path")
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = north()
        .args(["tool", "list_root", "--path", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let r = run_in(&root, "read_file", json!({"path": "../etc/passwd"}), &[]);
    assert_eq!(r.code, 1);
}

#[test]
fn args_from_a_file_or_stdin_and_the_tool_list() {
    let (_d, root) = project();
    let file = root.join("args.json");
    std::fs::write(&file, r#"{"path": "README.md"}"#).unwrap();
    let out = north()
        .args(["tool", "read_file", "--args"])
        .arg(format!("@{}", file.display()))
        .arg("--path")
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut child = north()
        .args(["tool", "read_file", "--args", "-", "--path"])
        .arg(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"path": "README.md"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let list = north().args(["tool", "--list"]).output().unwrap();
    assert_eq!(list.status.code(), Some(0));
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in [
        "list_root",
        "edit_apply_batch",
        "fs.write_text",
        "read",
        "write",
        "shell_run",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}

#[test]
fn shell_tools_need_the_allowlist_or_yes() {
    let (_d, root) = project();
    let args = json!({"command": "touch ran.txt", "cwd": null, "timeoutMs": 10000});
    let r = run_in(&root, "shell_run", args.clone(), &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.json["error"]
            .as_str()
            .unwrap()
            .contains(".north/allowlist.json")
    );
    assert!(!root.join("ran.txt").exists());
    std::fs::create_dir_all(root.join(".north")).unwrap();
    std::fs::write(
        root.join(".north/allowlist.json"),
        r#"{"allowedCommands": ["touch ran.txt"]}"#,
    )
    .unwrap();
    // The project's own rule applies only once the project is trusted.
    let r = run_in(&root, "shell_run", args.clone(), &[]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not trusted"), "{}", r.stderr);
    assert!(!root.join("ran.txt").exists());
    let out = ok(&root, "shell_run", args, &["--trust"]);
    assert_eq!(out["exitCode"], 0);
    assert!(root.join("ran.txt").exists());
    let out = ok(
        &root,
        "shell_run",
        json!({"command": "echo yes-given"}),
        &["--yes"],
    );
    assert!(out["stdout"].as_str().unwrap().contains("yes-given"));
}

#[test]
fn net_tools_need_a_grant() {
    let (_d, root) = project();
    let r = run_in(
        &root,
        "http.get",
        json!({"url": "http://127.0.0.1:9/"}),
        &[],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.json["error"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("net"),
        "{}",
        r.json
    );
}

#[test]
fn http_get_from_the_command_line_is_cached_in_the_project() {
    let (_d, root) = project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(north_test_support::FakeServer::start())
        .unwrap();
    server.set_fallback(north_test_support::Reply::json(200, r#"{"v": 1}"#));
    let url = format!("{}/data.json", server.url());
    for _ in 0..2 {
        let r = run_in(
            &root,
            "http.get",
            json!({"url": url}),
            &["--grant", "net:127.0.0.1"],
        );
        assert_eq!(r.code, 0, "{}", r.json);
    }
    assert_eq!(server.requests().len(), 1, "the second call is a cache hit");
    assert!(root.join(".north/http-cache.sqlite").exists());
}

/// mesh.md's resource quotas include disk: under `max_disk_bytes` a `bash`
/// command cannot write a file larger than the quota (the kernel stops it),
/// while smaller writes work.
#[test]
fn the_mesh_disk_quota_stops_a_command_writing_past_it() {
    let (_d, root) = project();
    std::fs::write(root.join("big.bin"), vec![b'x'; 64 * 1024]).unwrap();
    std::fs::write(root.join("small.bin"), vec![b'y'; 2 * 1024]).unwrap();
    std::fs::write(
        root.join("policy.json"),
        r#"{"allowed_commands": ["cp"], "write_enabled": true, "max_file_size": 100000, "max_disk_bytes": 8192}"#,
    )
    .unwrap();
    let small = ok(
        &root,
        "bash",
        json!({"cmd": "cp small.bin small-copy.bin"}),
        &["--yes", "--trust"],
    );
    assert_eq!(small, "", "a copy under the quota succeeds silently");
    assert_eq!(
        std::fs::metadata(root.join("small-copy.bin"))
            .unwrap()
            .len(),
        2048
    );

    let big = ok(
        &root,
        "bash",
        json!({"cmd": "cp big.bin big-copy.bin"}),
        &["--yes", "--trust"],
    );
    let written = std::fs::metadata(root.join("big-copy.bin")).map_or(0, |m| m.len());
    assert!(
        written <= 8192,
        "the copy stopped at the quota: {written} bytes"
    );
    assert!(
        big.as_str().unwrap().contains("disk quota exceeded"),
        "the model is told why: {big}"
    );
}

#[test]
fn the_users_hooks_run_around_a_tool_called_from_the_command_line() {
    let (_d, root) = project();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config/north");
    common::write_guard_hooks(&config);
    let tool = |name: &str, args: Value, extra: &[&str]| {
        let out = Command::new(assert_cmd::cargo::cargo_bin("north"))
            .env_remove("GIT_DIR")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .args(["tool", name, "--args", &args.to_string(), "--path"])
            .arg(&root)
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null),
        )
    };
    let (code, result) = tool("shell_run", json!({"command": "rm -rf src"}), &["--yes"]);
    assert_eq!(code, Some(1), "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("no deleting here"),
        "{result}"
    );
    assert!(root.join("src/main.rs").exists(), "the blocked command ran");
    let (code, result) = tool("read_file", json!({"path": "src/main.rs"}), &[]);
    assert_eq!(code, Some(0), "{result}");
    assert_eq!(result["output"]["hook_feedback"], "read noted", "{result}");
}
