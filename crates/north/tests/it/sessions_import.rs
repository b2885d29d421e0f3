//! `north sessions import`: transcripts written in Claude Code's, Codex's
//! and Gemini CLI's documented formats (`tests/fixtures/import/`) become
//! North sessions that resume, and the next request carries the
//! conversation — its words, and its shell commands and reads as North's
//! own tool calls with their results.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::common::{Sandbox, recorded, text};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

/// Imports `file`; the new session's id.
fn import(sb: &Sandbox, file: &std::path::Path) -> String {
    let out = sb
        .north()
        .args(["sessions", "import"])
        .arg(file)
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    said.split("north --resume ")
        .nth(1)
        .unwrap_or_else(|| panic!("{said}"))
        .trim()
        .to_string()
}

/// Resumes `id` with one more prompt; the request the model received.
fn resume(sb: &Sandbox, id: &str) -> Value {
    let script = sb.file("next.json", &json!([{"text": "continuing"}]));
    let requests = sb.dir.path().join(format!("requests-{id}.jsonl"));
    let out = sb
        .north()
        .args(["exec", "--resume", id, "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("and now?")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    recorded(&requests).remove(0)
}

#[test]
fn each_tools_transcript_resumes_with_its_conversation_in_the_next_request() {
    for (file, marks, north_tool, text_only) in [
        (
            "claude-code.jsonl",
            "CLAUDE",
            Some("shell_run"),
            Some("[claude-code called `TodoWrite`"),
        ),
        (
            "rollout-2025-09-01T10-00-00-codex.jsonl",
            "CODEX",
            Some("shell_run"),
            None,
        ),
        ("checkpoint-gemini.json", "GEMINI", Some("read_file"), None),
    ] {
        let sb = Sandbox::new();
        let id = import(&sb, &fixture(file));
        let request = resume(&sb, &id);
        let sent = request.to_string();
        for part in ["QUESTION", "RESULT", "ANSWER"] {
            assert!(
                sent.contains(&format!("{marks}-{part}")),
                "{file}: no {part} in {sent}"
            );
        }
        assert!(sent.contains("and now?"), "{file}: {sent}");
        if let Some(tool) = north_tool {
            assert!(
                sent.contains(&format!("\"name\":\"{tool}\"")),
                "{file}: the call is not North's {tool}: {sent}"
            );
        }
        if let Some(t) = text_only {
            assert!(sent.contains(t), "{file}: {sent}");
        }
        assert!(
            !sent.contains("SIDECHAIN-NOT-IMPORTED") && !sent.contains("environment_context"),
            "{file}: {sent}"
        );
        // Listed, named after where it came from.
        let list = sb.north().args(["sessions", "list"]).output().unwrap();
        let label = if marks == "CLAUDE" {
            "claude-code"
        } else if marks == "CODEX" {
            "codex"
        } else {
            "gemini-cli"
        };
        assert!(text(&list.stdout).contains(label), "{}", text(&list.stdout));
    }
}

#[test]
fn a_directory_is_searched_and_a_broken_file_is_said_not_hidden() {
    let sb = Sandbox::new();
    let dir = sb.dir.path().join("transcripts/2025/09/01");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixture("rollout-2025-09-01T10-00-00-codex.jsonl"),
        dir.join("rollout-a.jsonl"),
    )
    .unwrap();
    std::fs::write(dir.join("broken.jsonl"), "{not json\n").unwrap();
    let out = sb
        .north()
        .args(["sessions", "import"])
        .arg(sb.dir.path().join("transcripts"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("imported"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("broken.jsonl"),
        "{}",
        text(&out.stderr)
    );
    let none = sb
        .north()
        .args(["sessions", "import"])
        .arg(sb.dir.path().join("nothing"))
        .output()
        .unwrap();
    assert!(!none.status.success());
}

#[test]
fn a_real_codex_rollout_resumes() {
    // Written by Codex 0.171.0 (`codex exec` against a local mock of the
    // Responses API; its paths replaced by /home/dev): its developer
    // instructions, environment context and bookkeeping records are not
    // the conversation.
    let sb = Sandbox::new();
    let id = import(&sb, &fixture("real-codex-0.171.0-rollout.jsonl"));
    let sent = resume(&sb, &id).to_string();
    assert!(
        sent.contains("REAL-CODEX-QUESTION: what is this project?"),
        "{sent}"
    );
    assert!(
        sent.contains("REAL-CODEX-ANSWER: this project is a small test."),
        "{sent}"
    );
    assert!(
        !sent.contains("skills_instructions") && !sent.contains("environment_context"),
        "{sent}"
    );
}
