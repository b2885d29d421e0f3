//! `north exec --mode`: each permission mode's behaviour for edits and
//! commands through the real binary, on the scripted model. The project
//! lives outside the system temp dir (which the sandbox leaves writable).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

use north_test_support::recorded::tool_names;
use serde_json::{Value, json};

use crate::common;
use common::text;

struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    project: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let project = base.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    Tree {
        _dir: dir,
        base,
        project,
    }
}

fn exec(t: &Tree, mode: &str, turns: Value) -> (Output, Vec<Value>) {
    let script = t.base.join("script.json");
    std::fs::write(&script, turns.to_string()).unwrap();
    let requests = t.base.join("requests.jsonl");
    let _ = std::fs::remove_file(&requests);
    let home = t.base.join("home");
    // The sandbox leaves the temp dir writable: give the run its own, so a
    // checkout under /tmp does not make `outside` writable.
    let tmp = t.base.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_north"))
        .env("TMPDIR", &tmp)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .current_dir(&t.project)
        .arg("exec")
        .args(if mode.is_empty() {
            vec![]
        } else {
            vec!["--mode", mode]
        })
        .arg("--script")
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("go")
        .output()
        .unwrap();
    let sent = std::fs::read_to_string(&requests)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out, sent)
}

fn edit_turns() -> Value {
    json!([
        {"tool_calls": [{"id": "e1", "name": "edit_replace_exact",
            "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": "touch ran.txt"}}]},
        {"text": "Done."}
    ])
}

#[test]
fn plan_mode_offers_no_edit_or_command_tools() {
    let t = tree();
    let (out, sent) = exec(&t, "plan", json!([{"text": "Here is the plan."}]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names = tool_names(&sent[0]);
    assert!(names.contains(&"read_file".to_string()), "{names:?}");
    assert!(names.contains(&"search_text".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("edit_") || n == "shell_run"),
        "{names:?}"
    );
}

#[test]
fn ask_mode_applies_nothing_and_runs_nothing_unasked() {
    let t = tree();
    let (out, _) = exec(&t, "ask", edit_turns());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!t.project.join("ran.txt").exists());
}

#[test]
fn accept_edits_mode_applies_edits_but_commands_still_ask() {
    let t = tree();
    let (out, _) = exec(&t, "accept-edits", edit_turns());
    assert_eq!(
        out.status.code(),
        Some(3),
        "the command was refused: {}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\n"
    );
    assert!(!t.project.join("ran.txt").exists());
}

fn sandbox_available(t: &Tree) -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_north"))
        .current_dir(&t.project)
        .args(["sandbox", "--", "true"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    if !out.status.success() || err.contains("sandbox: partial") {
        north_test_support::missing(&format!(
            "the kernel sandbox is not fully available here: {err}"
        ));
        return false;
    }
    true
}

#[test]
fn auto_mode_runs_commands_without_asking_inside_the_sandbox() {
    let t = tree();
    if !sandbox_available(&t) {
        return;
    }
    let outside = t.base.join("outside");
    let command = format!(
        "touch made-inside; echo escape > {}/escape.txt; echo hook > .git/hooks/pre-commit; echo end",
        outside.display()
    );
    let (out, sent) = exec(
        &t,
        "auto",
        json!([
            {"tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": command}}]},
            {"tool_calls": [{"id": "e1", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
            {"text": "Done."}
        ]),
    );
    assert!(
        out.status.success(),
        "nothing was refused: {}",
        text(&out.stderr)
    );
    assert!(
        t.project.join("made-inside").exists(),
        "the command ran unasked"
    );
    assert!(
        !outside.join("escape.txt").exists(),
        "but could not write outside"
    );
    assert!(
        !t.project.join(".git/hooks/pre-commit").exists(),
        "nor into .git/hooks"
    );
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\n"
    );
    let result = sent[1].to_string();
    assert!(
        result.contains("Permission denied"),
        "the model sees the denial: {result}"
    );
}

#[test]
fn auto_mode_never_leaves_the_sandbox_headless() {
    let t = tree();
    if !sandbox_available(&t) {
        return;
    }
    let outside = t.base.join("outside");
    let command = format!(
        "echo BEFORE-THE-WRITE; echo escape > {}/escape.txt",
        outside.display()
    );
    let (out, sent) = exec(
        &t,
        "auto",
        json!([
            {"tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": command}}]},
            {"text": "Done."}
        ]),
    );
    // Headless, nobody answers in person: no run outside the sandbox is
    // offered at all; the model sees the sandbox's refusal.
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("outside the sandbox"),
        "{}",
        text(&out.stderr)
    );
    assert!(!outside.join("escape.txt").exists());
    let result = sent[1].to_string();
    assert!(
        result.contains("Permission denied") || result.contains("Read-only file system"),
        "{result}"
    );
    assert!(!result.contains("unsandboxed"), "{result}");
    // The model gets the command's output and the sandbox's denial together.
    assert!(result.contains("sandboxDenied"), "{result}");
    assert!(result.contains("BEFORE-THE-WRITE"), "{result}");
}

#[test]
fn the_config_key_mode_sets_the_mode_but_a_project_cannot_raise_its_own() {
    let t = tree();
    // An untrusted project asking for accept-edits is ignored: edits ask.
    std::fs::create_dir_all(t.project.join(".north")).unwrap();
    std::fs::write(
        t.project.join(".north/project.json"),
        r#"{"mode": "accept-edits"}"#,
    )
    .unwrap();
    let (out, _) = exec(&t, "", edit_turns());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "one\n"
    );
    // The same key in the user's own config applies.
    let config = t.base.join("home/config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.json"), r#"{"mode": "accept-edits"}"#).unwrap();
    let (out, _) = exec(&t, "", edit_turns());
    assert_eq!(out.status.code(), Some(3), "the command still asks");
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\n"
    );
    // A project may always narrow itself to plan.
    std::fs::write(t.project.join(".north/project.json"), r#"{"mode": "plan"}"#).unwrap();
    let (out, sent) = exec(&t, "", json!([{"text": "plan"}]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!tool_names(&sent[0]).contains(&"shell_run".to_string()));
}

#[test]
fn an_unknown_mode_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_north"))
        .args(["exec", "--mode", "yolo", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("possible values"));
}

#[test]
fn a_reading_line_runs_unasked_in_a_read_only_sandbox_but_a_background_one_asks() {
    let t = tree();
    if !sandbox_available(&t) {
        return;
    }
    let (out, sent) = exec(
        &t,
        "",
        json!([
            {"tool_calls": [
                {"id": "r1", "name": "shell_run", "args": {"command": "cat a.txt"}},
                {"id": "r2", "name": "shell_run", "args": {"command": "ls", "background": true}}
            ]},
            {"text": "Done."}
        ]),
    );
    let result = sent[1].to_string();
    // `cat` ran without a prompt (headless: nobody to ask) …
    assert!(result.contains("one"), "{result}");
    // … but a background job asks, and headless that is a refusal.
    assert!(result.contains("has no allow rule"), "{result}");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}
