//! Tools describe themselves: each says its kind and writes its own intent
//! line, so no front end keeps a table of tool names.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_protocol::{ToolKind, ToolOutcome};
use serde_json::json;

#[test]
fn every_tool_of_every_profile_says_what_it_does() {
    let tools = north_tools::all_tools();
    let expected = [
        ("list_root", ToolKind::Read),
        ("read_file", ToolKind::Read),
        ("read_readme", ToolKind::Read),
        ("fs.read_text", ToolKind::Read),
        ("fs.list_dir", ToolKind::Read),
        ("read", ToolKind::Read),
        ("find_files", ToolKind::Search),
        ("search_text", ToolKind::Search),
        ("hotfiles", ToolKind::Search),
        ("detect_languages", ToolKind::Search),
        ("edit_replace_exact", ToolKind::Edit),
        ("edit_insert_at_line", ToolKind::Edit),
        ("edit_create_file", ToolKind::Edit),
        ("edit_apply_batch", ToolKind::Edit),
        ("fs.write_text", ToolKind::Edit),
        ("write", ToolKind::Edit),
        ("shell_run", ToolKind::Execute),
        ("shell_output", ToolKind::Read),
        ("shell_kill", ToolKind::Execute),
        ("shell.exec", ToolKind::Execute),
        ("bash", ToolKind::Execute),
        ("http.get", ToolKind::Fetch),
        ("web_fetch", ToolKind::Fetch),
    ];
    let mut names = tools.names();
    names.sort();
    let mut listed: Vec<String> = expected.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(names, listed, "a new tool needs its kind checked here");
    for (name, kind) in expected {
        let (got, line) = tools.describe(name, &json!({}));
        assert_eq!(got, kind, "{name}");
        assert!(
            !line.starts_with("Calling"),
            "{name} writes its own intent line: {line}"
        );
    }
}

#[test]
fn intent_lines_match_the_spec_examples() {
    let tools = north_tools::all_tools();
    let line = |name: &str, args| tools.describe(name, &args).1;
    assert_eq!(
        line("search_text", json!({"query": "foo", "path": "src/"})),
        "Searching: `foo` in `src/`"
    );
    assert_eq!(
        line("edit_replace_exact", json!({"path": "src/App.tsx"})),
        "Preparing edits in `src/App.tsx`"
    );
    assert_eq!(
        line("shell_run", json!({"command": "pnpm test"})),
        "Command requested: `pnpm test`"
    );
    assert_eq!(
        line("bash", json!({"cmd": "ls"})),
        "Command requested: `ls`"
    );
    assert_eq!(
        line(
            "read_file",
            json!({"path": "a.rs", "range": {"start": 3, "end": 9}})
        ),
        "Reading `a.rs` lines 3–9"
    );
    assert_eq!(
        line(
            "edit_apply_batch",
            json!({"edits": [
                {"toolName": "edit_create_file", "args": {"path": "a.rs"}},
                {"toolName": "edit_replace_exact", "args": {"path": "a.rs"}},
                {"toolName": "edit_replace_exact", "args": {"path": "b.rs"}}
            ]})
        ),
        "Preparing edits in `a.rs`, `b.rs`"
    );
    assert_eq!(
        line("http.get", json!({"url": "https://docs.rs/"})),
        "Fetching `https://docs.rs/`"
    );
    // A tool North does not have is named, never guessed at.
    assert_eq!(
        tools.describe("mcp__x__y", &json!({})),
        (ToolKind::Other, "Calling `mcp__x__y`".to_string())
    );
}

#[test]
fn results_are_summarised_by_their_shape() {
    let tools = north_tools::all_tools();
    let sum = |out| tools.summary("shell_run", &ToolOutcome::ok(out));
    assert_eq!(
        sum(json!({"exitCode": 1, "stdout": "a\nb\n", "stderr": "boom\n"})),
        "exit code 1, 3 line(s) of output"
    );
    assert_eq!(
        tools.summary("read_file", &ToolOutcome::err("no such file")),
        "failed: no such file"
    );
    assert_eq!(
        tools.summary(
            "read_file",
            &ToolOutcome::ok(json!({"path": "a.rs", "startLine": 1, "endLine": 9}))
        ),
        "lines 1–9 of `a.rs`"
    );
    assert_eq!(
        tools.summary(
            "read_file",
            &ToolOutcome::ok(
                json!({"path": "spec.pdf", "startPage": 1, "endPage": 4, "totalPages": 9})
            )
        ),
        "pages 1–4 of 9 of `spec.pdf`"
    );
    // A command started in the background says so, with its id.
    assert_eq!(
        sum(json!({"id": "bg1", "background": true, "command": "sleep 9"})),
        "started in the background as `bg1`, still running (shell_output reads it)"
    );
    // A sub-agent's answer, not just "done".
    assert_eq!(
        tools.summary(
            "agent",
            &ToolOutcome::ok(json!({"agent": "reviewer", "answer": "\nLooks right.\nMore."}))
        ),
        "`reviewer` answered: Looks right."
    );
    // `shell.exec`'s naming reads the same.
    assert_eq!(
        sum(json!({"exit_code": 0, "stdout": "x\n", "stderr": ""})),
        "exit code 0, 1 line(s) of output"
    );
}
