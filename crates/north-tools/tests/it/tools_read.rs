//! The read-side tools through the public registry: list_root, find_files,
//! read_file, read_readme, detect_languages, hotfiles, the
//! read profiles (fs.read_text, fs.list_dir, read), and the registry contract (search_text: `tools_search.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use north_tools::north_tools;
use serde_json::{Value, json};
use tools_support::{Project, paths};

// ---------- registry contract ----------

#[test]
fn north_tool_specs_snapshot() {
    let specs: Vec<Value> = north_tools()
        .specs()
        .into_iter()
        .map(|s| json!({"name": s.name, "description": s.description, "input_schema": s.input_schema, "approval": s.approval}))
        .collect();
    insta::assert_json_snapshot!("north_tool_specs", specs);
}

#[test]
fn tool_definitions_fit_the_first_request_budget() {
    // What a provider receives: name, description, schema per tool. The whole
    // first request must stay under 12 KB, so the tools get at most 7 KB.
    let specs: Vec<Value> = north_tools()
        .specs()
        .into_iter()
        .map(|s| json!({"name": s.name, "description": s.description, "input_schema": s.input_schema}))
        .collect();
    let bytes = serde_json::to_string(&specs).unwrap().len();
    assert!(bytes < 7 * 1024, "tool definitions are {bytes} bytes");
}

#[test]
fn unknown_tool_is_a_structured_error() {
    let p = Project::new();
    let out = p.call("rm_rf", json!({}));
    assert!(!out.ok);
    assert_eq!(out.output["unknownTool"], "rm_rf");
    assert!(
        out.output["available"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "read_file")
    );
    assert!(out.error.unwrap().contains("unknown tool `rm_rf`"));
}

#[test]
fn bad_arguments_name_the_field() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    let err = p.fail(
        "read_file",
        json!({"path": "a.txt", "range": {"start": "one", "end": 2}}),
    );
    assert!(err.contains("range.start"), "{err}");
    let err = p.fail("read_file", json!({}));
    assert!(err.contains("path"), "{err}");
    let err = p.fail("find_files", json!({"pattern": "*", "limt": 3}));
    assert!(err.contains("limt"), "{err}");
    let err = p.fail("search_text", json!({"query": "x", "regex": "yes"}));
    assert!(err.contains("regex"), "{err}");
    let err = p.fail("read_file", json!("not json"));
    assert!(err.contains("JSON object"), "{err}");
}

#[test]
fn arguments_sent_as_json_text_are_accepted() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let out = p.ok("read_file", Value::String(r#"{"path":"a.txt"}"#.into()));
    assert_eq!(out["content"], "hello\n");
}

// ---------- list_root ----------

#[test]
fn list_root_respects_gitignore_shows_dotfiles_but_not_secret_env_files() {
    let p = Project::new();
    p.write(".gitignore", "target/\n*.log\n")
        .write("src/main.rs", "fn main() {}\n")
        .write("target/debug/x", "bin")
        .write("build.log", "log")
        .write(".env", "SECRET=1")
        .write(".env.local", "SECRET=2")
        .write(".env.example", "SECRET=")
        .write(".github/workflows/ci.yml", "on: push\n")
        .write("README.md", "# hi\n")
        .write("Cargo.toml", "[package]\n");
    let out = p.ok("list_root", json!({}));
    assert_eq!(
        out,
        json!([
            {"path": ".github", "type": "dir"},
            {"path": "src", "type": "dir"},
            {"path": ".env.example", "type": "file"},
            {"path": ".gitignore", "type": "file"},
            {"path": "Cargo.toml", "type": "file"},
            {"path": "README.md", "type": "file"},
        ])
    );
}

/// Reads are ignore-aware as listings are: ignored files (nested ignore
/// files and negations included) and secret env files are refused with a
/// reason; their templates and whitelisted files are read.
#[test]
fn reads_refuse_ignored_and_secret_files_and_say_why() {
    let p = Project::new();
    p.write(".gitignore", "target/\n*.log\n!keep.log\n")
        .write("target/debug/out.rs", "fn generated() {}\n")
        .write("build.log", "noise")
        .write("keep.log", "kept")
        .write("sub/.gitignore", "local.txt\n")
        .write("sub/local.txt", "mine")
        .write("sub/shared.txt", "ours")
        .write(".env", "API_KEY=sk-live-secret")
        .write(".env.example", "API_KEY=");
    for path in ["target/debug/out.rs", "build.log", "sub/local.txt"] {
        let error = p.fail("read_file", json!({"path": path}));
        assert!(
            error.contains("ignored by the project's .gitignore"),
            "{path}: {error}"
        );
    }
    let error = p.fail("read_file", json!({"path": ".env"}));
    assert!(error.contains("secrets"), "{error}");
    assert!(!error.contains("sk-live-secret"));
    let error = p.fail("fs.read_text", json!({"path": ".env"}));
    assert!(error.contains("secrets"), "{error}");
    assert_eq!(
        p.ok("read_file", json!({"path": "keep.log"}))["content"],
        "kept"
    );
    assert_eq!(
        p.ok("read_file", json!({"path": "sub/shared.txt"}))["content"],
        "ours"
    );
    assert_eq!(
        p.ok("read_file", json!({"path": ".env.example"}))["content"],
        "API_KEY="
    );
}

#[test]
fn list_root_resolves_inside_symlinks_and_omits_escaping_ones() {
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    p.write("real/a.txt", "a")
        .symlink("real", "alias")
        .symlink(outside.path(), "escape")
        .symlink("missing", "dangling");
    let out = p.ok("list_root", json!(null));
    assert_eq!(
        out,
        json!([{"path": "alias", "type": "dir"}, {"path": "real", "type": "dir"}])
    );
}

#[test]
fn list_root_of_an_empty_project_is_empty() {
    let p = Project::new();
    assert_eq!(p.ok("list_root", json!({})), json!([]));
}

// ---------- find_files ----------

fn find_fixture() -> Project {
    let p = Project::new();
    p.write(".gitignore", "ignored/\n")
        .write("Cargo.toml", "")
        .write("crates/a/Cargo.toml", "")
        .write("crates/a/src/lib.rs", "")
        .write("crates/a/src/tool_cmd.rs", "")
        .write("src/main.rs", "")
        .write("ignored/x.rs", "")
        .write("docs/Tools.md", "");
    p
}

#[test]
fn find_files_by_name_glob_anywhere() {
    let p = find_fixture();
    assert_eq!(
        paths(&p.ok("find_files", json!({"pattern": "*.rs", "limit": 10}))),
        [
            "crates/a/src/lib.rs",
            "crates/a/src/tool_cmd.rs",
            "src/main.rs"
        ]
    );
    assert_eq!(
        paths(&p.ok("find_files", json!({"pattern": "Cargo.toml"}))),
        ["Cargo.toml", "crates/a/Cargo.toml"]
    );
}

#[test]
fn find_files_by_path_glob() {
    let p = find_fixture();
    assert_eq!(
        paths(&p.ok("find_files", json!({"pattern": "src/*.rs"}))),
        ["src/main.rs"]
    );
    assert_eq!(
        paths(&p.ok("find_files", json!({"pattern": "crates/**/*.rs"}))),
        ["crates/a/src/lib.rs", "crates/a/src/tool_cmd.rs"]
    );
}

#[test]
fn find_files_by_substring_is_case_insensitive() {
    let p = find_fixture();
    assert_eq!(
        paths(&p.ok("find_files", json!({"pattern": "TOOL"}))),
        ["crates/a/src/tool_cmd.rs", "docs/Tools.md"]
    );
}

#[test]
fn find_files_limit_and_errors() {
    let p = find_fixture();
    assert_eq!(
        paths(&p.ok("find_files", json!({"pattern": "*", "limit": 2}))).len(),
        2
    );
    assert!(
        p.fail("find_files", json!({"pattern": ""}))
            .contains("empty")
    );
    assert!(
        p.fail("find_files", json!({"pattern": "[a"}))
            .contains("invalid glob")
    );
    assert_eq!(
        p.ok("find_files", json!({"pattern": "nothing-matches"})),
        json!([])
    );
}

// ---------- read_file ----------

#[test]
fn read_whole_file_and_ranges() {
    let p = Project::new();
    p.write("f.txt", "one\ntwo\nthree\nfour\n");
    let all = p.ok("read_file", json!({"path": "f.txt", "range": null}));
    assert_eq!(
        all,
        json!({"path": "f.txt", "content": "one\ntwo\nthree\nfour\n", "startLine": 1, "endLine": 4, "totalLines": 4})
    );
    let mid = p.ok(
        "read_file",
        json!({"path": "f.txt", "range": {"start": 2, "end": 3}}),
    );
    assert_eq!(mid["content"], "two\nthree\n");
    assert_eq!(
        (mid["startLine"].as_u64(), mid["endLine"].as_u64()),
        (Some(2), Some(3))
    );
    let past = p.ok(
        "read_file",
        json!({"path": "f.txt", "range": {"start": 4, "end": 99}}),
    );
    assert_eq!(past["content"], "four\n");
    assert_eq!(past["endLine"], 4);
}

#[test]
fn read_range_errors() {
    let p = Project::new();
    p.write("f.txt", "one\ntwo\n");
    assert!(
        p.fail(
            "read_file",
            json!({"path": "f.txt", "range": {"start": 0, "end": 1}})
        )
        .contains("at least 1")
    );
    assert!(
        p.fail(
            "read_file",
            json!({"path": "f.txt", "range": {"start": 2, "end": 1}})
        )
        .contains("before")
    );
    assert!(
        p.fail(
            "read_file",
            json!({"path": "f.txt", "range": {"start": 3, "end": 4}})
        )
        .contains("has 2 lines")
    );
    assert!(
        p.fail("read_file", json!({"path": "missing.txt"}))
            .contains("does not exist")
    );
    p.mkdir("dir");
    assert!(
        p.fail("read_file", json!({"path": "dir"}))
            .contains("not a file")
    );
}

#[test]
fn read_edge_files() {
    let p = Project::new();
    p.write("empty.txt", "")
        .write("nonl.txt", "a\nb")
        .write("crlf.txt", "a\r\nb\r\n")
        .write("latin1.txt", b"caf\xe9\n")
        .write("bin.dat", b"\x7fELF\0\0\x01");
    let empty = p.ok("read_file", json!({"path": "empty.txt"}));
    assert_eq!(
        empty,
        json!({"path": "empty.txt", "content": "", "startLine": 0, "endLine": 0, "totalLines": 0})
    );
    let nonl = p.ok(
        "read_file",
        json!({"path": "nonl.txt", "range": {"start": 2, "end": 2}}),
    );
    assert_eq!(nonl["content"], "b");
    assert_eq!(nonl["totalLines"], 2);
    let crlf = p.ok("read_file", json!({"path": "crlf.txt"}));
    assert_eq!(crlf["content"], "a\r\nb\r\n", "content is exact, CRLF kept");
    let latin = p.ok("read_file", json!({"path": "latin1.txt"}));
    assert_eq!(latin["content"], "caf\u{fffd}\n");
    assert!(latin["note"].as_str().unwrap().contains("UTF-8"));
    assert!(
        p.fail("read_file", json!({"path": "bin.dat"}))
            .contains("binary")
    );
}

#[test]
fn read_very_large_file_is_cut_and_ranges_reach_the_end() {
    let p = Project::new();
    let body: String = (1..=200_000).map(|i| format!("line {i}\n")).collect();
    p.write("big.txt", body);
    let head = p.ok("read_file", json!({"path": "big.txt"}));
    assert_eq!(head["truncated"], true);
    assert_eq!(head["totalLines"], 200_000);
    assert_eq!(head["endLine"], 2000);
    assert!(head["note"].as_str().unwrap().contains("start: 2001"));
    let tail = p.ok(
        "read_file",
        json!({"path": "big.txt", "range": {"start": 199_999, "end": 200_000}}),
    );
    assert_eq!(tail["content"], "line 199999\nline 200000\n");
}

/// Regression: a file that is one huge line came back empty with advice to
/// re-read the same range, so the model looped.
#[test]
fn a_line_too_long_to_return_is_read_in_byte_ranges_to_the_end() {
    let p = Project::new();
    // Multi-byte characters so a cut could land inside one.
    let line: String = (0..120_000)
        .map(|i| if i % 7 == 0 { 'é' } else { 'x' })
        .collect();
    let body = format!("first\n{line}\nlast\n");
    p.write("min.js", body.clone());
    // Reading lines stops at the long one with the offset to continue from.
    let head = p.ok("read_file", json!({"path": "min.js"}));
    assert_eq!(head["content"], "first\n");
    assert_eq!(head["truncated"], true);
    let from_line = p.ok(
        "read_file",
        json!({"path": "min.js", "range": {"start": 2, "end": 2}}),
    );
    assert_eq!(from_line["startLine"], 2);
    assert!(from_line["note"].as_str().unwrap().contains("\"offset\""));
    let mut text = from_line["content"].as_str().unwrap().to_string();
    assert!(!text.is_empty() && text.len() <= 100_000);
    let mut next = from_line["nextOffset"].as_u64().unwrap();
    let mut calls = 0;
    loop {
        calls += 1;
        assert!(calls < 10, "the continuation converges");
        let part = p.ok("read_file", json!({"path": "min.js", "offset": next}));
        assert_eq!(part["offset"], next, "starts where asked");
        assert_eq!(part["startLine"], 2);
        text.push_str(part["content"].as_str().unwrap());
        match part["nextOffset"].as_u64() {
            Some(n) => {
                assert!(n > next);
                next = n;
            }
            None => {
                assert_eq!(part["totalLines"], 3);
                assert_eq!(part["endLine"], 3);
                break;
            }
        }
    }
    assert_eq!(format!("first\n{text}"), body, "nothing lost or repeated");
    let err = p.fail("read_file", json!({"path": "min.js", "offset": 1_000_000}));
    assert!(err.contains("past the end"), "{err}");
    let err = p.fail(
        "read_file",
        json!({"path": "min.js", "offset": 0, "range": {"start": 1, "end": 2}}),
    );
    assert!(err.contains("not both"), "{err}");
}

// ---------- read_readme ----------

#[test]
fn read_readme_prefers_markdown_and_cuts_long_files() {
    let p = Project::new();
    p.write("README.txt", "plain\n");
    let out = p.ok("read_readme", json!({}));
    assert_eq!(out, json!({"path": "README.txt", "content": "plain\n"}));
    let long: String = (0..1000).map(|i| format!("readme line {i}\n")).collect();
    p.write("README.md", long);
    let out = p.ok("read_readme", json!({}));
    assert_eq!(out["path"], "README.md");
    assert_eq!(out["truncated"], true);
    assert!(out["content"].as_str().unwrap().len() <= 8000);
}

#[test]
fn read_readme_without_one_fails_clearly() {
    let p = Project::new();
    assert!(p.fail("read_readme", json!({})).contains("no README"));
}

// ---------- detect_languages ----------

#[test]
fn detect_languages_by_extension_and_size() {
    let p = Project::new();
    p.write(".gitignore", "vendor/\n")
        .write("src/a.rs", "x".repeat(600))
        .write("src/b.rs", "x".repeat(150))
        .write("web/app.ts", "x".repeat(250))
        .write("vendor/big.js", "x".repeat(10_000))
        .write("notes.unknownext", "x".repeat(999));
    let out = p.ok("detect_languages", json!({}));
    assert_eq!(
        out,
        json!([
            {"language": "Rust", "bytes": 750, "percent": 75.0},
            {"language": "TypeScript", "bytes": 250, "percent": 25.0},
        ])
    );
}

// ---------- hotfiles ----------

fn git(p: &Project, args: &[&str]) {
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(p.root())
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn hotfiles_from_git_history() {
    let p = Project::new();
    git(&p, &["init", "-q"]);
    p.write("src/hot.rs", "1\n")
        .write("src/cold.rs", "1\n")
        .write("gone.rs", "1\n");
    git(&p, &["add", "-A"]);
    git(&p, &["commit", "-qm", "one"]);
    for i in 2..5 {
        p.write("src/hot.rs", format!("{i}\n"));
        git(&p, &["commit", "-qam", "more"]);
    }
    p.write("gone.rs", "2\n");
    git(&p, &["commit", "-qam", "touch"]);
    p.write("src/cold.rs", "2\n");
    git(&p, &["commit", "-qam", "once"]);
    std::fs::remove_file(p.path("gone.rs")).unwrap();
    git(&p, &["commit", "-qam", "rm"]);
    let out = p.ok("hotfiles", json!({"limit": 5}));
    // Changed files, most changed first; added only counts for nothing,
    // and a deleted file is not hot.
    assert_eq!(
        paths(&out),
        ["src/hot.rs", "src/cold.rs"],
        "deleted files are not hot"
    );
    assert_eq!(
        out[0]["reason"],
        "3 commits, 6 lines changed in the last 5 commits"
    );
    assert!(out[0]["score"].as_f64().unwrap() > out[1]["score"].as_f64().unwrap());
}

#[test]
fn hotfiles_without_git_falls_back_to_largest_source_files() {
    let p = Project::new();
    p.write("src/big.rs", "x".repeat(4096))
        .write("src/small.rs", "x".repeat(10))
        .write("src/blob.bin", b"\0".repeat(100_000))
        .write("outside_src.rs", "x".repeat(100_000));
    let out = p.ok("hotfiles", json!({}));
    assert_eq!(paths(&out), ["src/big.rs", "src/small.rs"]);
    assert_eq!(out[0]["score"], 4.0);
    assert!(
        out[0]["reason"]
            .as_str()
            .unwrap()
            .contains("no git history")
    );
}

// ---------- profiles ----------

#[test]
fn fs_read_text_defaults_to_20000_bytes() {
    let p = Project::new();
    p.write("big.txt", "y".repeat(30_000))
        .write("small.txt", "hi");
    let out = p.ok("fs.read_text", json!({"path": "big.txt"}));
    assert_eq!(out["text"].as_str().unwrap().len(), 20_000);
    assert_eq!(out["truncated"], true);
    assert_eq!(out["size"], 30_000);
    let out = p.ok("fs.read_text", json!({"path": "small.txt", "max_bytes": 1}));
    assert_eq!(out["text"], "h");
    assert!(
        p.fail("fs.read_text", json!({"path": "../etc/passwd"}))
            .contains("..")
    );
}

#[test]
fn fs_list_dir_defaults_to_root_and_200_entries() {
    let p = Project::new();
    for i in 0..250 {
        p.write(&format!("many/f{i:03}.txt"), "x");
    }
    p.write("top.txt", "abc");
    let out = p.ok("fs.list_dir", json!({}));
    assert_eq!(
        out,
        json!({"path": ".", "entries": [{"name": "many", "type": "dir"}, {"name": "top.txt", "type": "file", "size": 3}], "truncated": false})
    );
    let out = p.ok("fs.list_dir", json!({"path": "many"}));
    assert_eq!(out["entries"].as_array().unwrap().len(), 200);
    assert_eq!(out["truncated"], true);
    let out = p.ok("fs.list_dir", json!({"path": "many", "max_entries": 3}));
    assert_eq!(out["entries"][2]["name"], "f002.txt");
}

#[test]
fn mesh_read_returns_meta_and_truncated_content() {
    let p = Project::new();
    p.write("src/lib.rs", "z".repeat(5000))
        .write("tests/it.rs", "t")
        .write("Cargo.toml", "c")
        .write("huge.txt", "h".repeat(200_001));
    let out = p.ok("read", json!({"path": "src/lib.rs"}));
    assert_eq!(
        out["meta"],
        json!({"path": "src/lib.rs", "ext": ".rs", "size": 5000, "role": "source"})
    );
    assert_eq!(out["content"].as_str().unwrap().len(), 4000);
    assert_eq!(
        p.ok("read", json!({"path": "tests/it.rs"}))["meta"]["role"],
        "test"
    );
    assert_eq!(
        p.ok("read", json!({"path": "Cargo.toml"}))["meta"]["role"],
        "config"
    );
    assert!(
        p.fail("read", json!({"path": "huge.txt"}))
            .contains("max_file_size")
    );
}
