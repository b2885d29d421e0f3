//! `north config`, `north sessions`, and what the log file may contain.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use crate::common;
use common::Sandbox;

/// Runs the binary in `h` with a step limit from the environment and a key
/// that must never be shown.
fn run(h: &Sandbox, args: &[&str]) -> Output {
    h.north()
        .env("NORTH_MAX_STEPS", "9")
        .env("ANTHROPIC_API_KEY", "sk-ant-CONFIGKEY-123456789")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn config_shows_values_and_sources_but_never_keys() {
    let h = Sandbox::new();
    std::fs::create_dir_all(h.home().join("config/north")).unwrap();
    std::fs::write(
        h.home().join("config/north/config.json"),
        r#"{"provider": "openai", "model": "global-model"}"#,
    )
    .unwrap();
    std::fs::write(
        h.project().join(".north/project.json"),
        r#"{"model": "project-model"}"#,
    )
    .unwrap();
    let out = run(&h, &["config"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out).replace(&h.dir.path().display().to_string(), "<tmp>");
    insta::assert_snapshot!("config_output", text);
    assert!(!text.contains("CONFIGKEY"));
}

#[test]
fn malformed_config_is_an_error_naming_file_and_field() {
    let h = Sandbox::new();
    std::fs::write(
        h.project().join(".north/project.json"),
        r#"{"max_steps": "lots"}"#,
    )
    .unwrap();
    let out = run(&h, &["config"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("project.json") && err.contains("max_steps"),
        "{err}"
    );
}

#[test]
fn a_config_error_says_its_cause_once() {
    let h = Sandbox::new();
    let dir = h.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"hooks": {"PreToolUse": 3}}"#).unwrap();
    for args in [&["config"][..], &["exec", "hi"]] {
        let out = run(&h, args);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        let cause = "expected a list of matcher entries, found a number";
        assert_eq!(err.matches(cause).count(), 1, "{args:?}: {err}");
    }
    // An OS error, too.
    std::fs::remove_file(dir.join("config.json")).unwrap();
    std::fs::create_dir(dir.join("config.json")).unwrap();
    let out = run(&h, &["config"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("Is a directory").count(), 1, "{err}");
}

#[test]
fn sessions_are_listed_and_shown() {
    let h = Sandbox::new();
    let script = h.dir.path().join("s.json");
    std::fs::write(&script, r#"[{"text": "first answer"}]"#).unwrap();
    let out = run(
        &h,
        &[
            "exec",
            "--script",
            script.to_str().unwrap(),
            "remember this question",
        ],
    );
    assert!(out.status.success());
    let list = stdout(&run(&h, &["sessions", "list"]));
    assert!(list.contains("remember this question"), "{list}");
    assert!(list.contains("   2 msgs"), "a size: {list}");
    let id = list.split_whitespace().next().unwrap().to_string();
    // A date: `YYYY-MM-DD HH:MM` after the id.
    let date = list.split_whitespace().nth(1).unwrap();
    assert!(date.len() == 10 && date.as_bytes()[4] == b'-', "{list}");
    // A readable transcript by default ...
    let show = stdout(&run(&h, &["sessions", "show", &id]));
    assert!(show.contains("you: remember this question"), "{show}");
    assert!(show.contains("north: first answer"), "{show}");
    // ... and the stored form with --json.
    let show = run(&h, &["sessions", "show", &id, "--json"]);
    assert!(show.status.success());
    let cp: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(cp["session_id"], id.as_str());
    assert_eq!(cp["recent_messages"][1]["content"], "first answer");
    assert_eq!(cp["messages"][1]["content"][0]["text"], "first answer");
    let missing = run(&h, &["sessions", "show", "20000101-000000-dead"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session"));
}

#[test]
fn the_log_records_tool_calls_but_not_file_contents() {
    let h = Sandbox::new();
    std::fs::write(h.project().join("data.txt"), "UNIQUE-FILE-CONTENT-42\n").unwrap();
    let script = h.dir.path().join("s.json");
    std::fs::write(
        &script,
        r#"[{"tool_calls": [{"id": "r", "name": "read_file", "args": {"path": "data.txt", "range": null}}]}, {"text": "read it"}]"#,
    )
    .unwrap();
    let out = run(
        &h,
        &[
            "exec",
            "--log-level",
            "debug",
            "--script",
            script.to_str().unwrap(),
            "read data.txt",
        ],
    );
    assert!(out.status.success());
    let log = std::fs::read_to_string(h.home().join("state/north/north.log")).unwrap();
    assert!(
        log.contains("tool call") && log.contains("read_file"),
        "{log}"
    );
    assert!(log.contains("repo root"), "{log}");
    assert!(
        !log.contains("UNIQUE-FILE-CONTENT-42"),
        "file contents must not be logged:\n{log}"
    );
    assert!(!log.contains("CONFIGKEY"));
}
