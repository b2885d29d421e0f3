//! `north mesh` requirements that were implemented but untested
//! (docs/conformance/mesh.md, "Gaps found"), through the real binary: the
//! missing key, the timeout from `policy.json` and `--timeout`, debug
//! logging, and a `policy.json` an untrusted project cannot widen with.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use north_agent::memory::MemoryFile;
use serde_json::{Value, json};

use crate::common;
use common::mesh_script::{bash, plan, say};
use common::{Sandbox, json_lines, recorded, text};

/// `north mesh` on `script`, recording this run's requests beside the
/// project (`requests.jsonl`, emptied first: the recorder appends).
fn mesh(sb: &Sandbox, script: &Value, extra: &[&str]) -> Command {
    let _ = std::fs::remove_file(sb.dir.path().join("requests.jsonl"));
    let script = sb.file("script.json", script);
    let mut cmd = sb.north();
    cmd.arg("mesh")
        .arg("--script")
        .arg(script)
        .arg("--record-requests")
        .arg(sb.dir.path().join("requests.jsonl"))
        .args(extra);
    cmd
}

/// Writes the project's `policy.json`.
fn write_policy(sb: &Sandbox, policy: &Value) {
    std::fs::write(sb.project().join("policy.json"), policy.to_string()).unwrap();
}

/// `north trust`, as the project's author does once.
fn trust(sb: &Sandbox) {
    let out = sb.north().arg("trust").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// The `tool_result` events of a `--json` run.
fn tool_results(out: &Output) -> Vec<Value> {
    json_lines(out)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect()
}

fn started_policy(out: &Output) -> Value {
    let events = json_lines(out);
    assert_eq!(events[0]["type"], "mesh_started", "{events:?}");
    events[0]["policy"].clone()
}

fn log(sb: &Sandbox) -> String {
    std::fs::read_to_string(sb.home().join("state/north/north.log")).unwrap()
}

/// §9.1: `ANTHROPIC_API_KEY` is required; without it (and without a
/// provider that needs none) `north mesh` exits 2 with one line naming the
/// fix, before any model call or memory.
#[test]
fn mesh_without_a_key_exits_2_with_one_line_naming_the_fix() {
    let sb = Sandbox::new();
    for key in [None, Some("")] {
        let mut cmd = sb.north();
        if let Some(k) = key {
            cmd.env("ANTHROPIC_API_KEY", k);
        }
        let out = cmd
            .args(["mesh", "--yes", "list the files"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "key {key:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("ANTHROPIC_API_KEY") && err.contains("--provider scripted"),
            "{err}"
        );
        assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    }
    // --json: the same message as one error event.
    let out = sb
        .north()
        .args(["mesh", "--json", "list the files"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let events = json_lines(&out);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "error");
    assert_eq!(events[0]["kind"], "config");
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY")
    );
    assert!(
        MemoryFile::project(&sb.project())
            .load()
            .unwrap()
            .is_empty(),
        "nothing is remembered"
    );
    assert!(!sb.project().join(".north/sessions").exists());
}

fn sleep_script(cmd: &str) -> Value {
    json!([
        plan(&[("Wait", Some("bash"))]),
        bash("s1", cmd),
        say("Waited."),
        say("Ran the wait."),
    ])
}

/// §10 "Tool execution timeout": `timeout_seconds` in `policy.json` and
/// `--timeout` set when a command is stopped, and the result says it timed
/// out; with the default (20 s) a one-second command finishes.
#[test]
fn policy_timeout_seconds_and_the_timeout_flag_decide_when_a_command_stops() {
    let sb = Sandbox::new();
    let timed_out = "command timed out after 1000 ms and was interrupted";

    // policy.json: timeout_seconds 1.
    write_policy(
        &sb,
        &json!({"allowed_commands": ["sleep"], "timeout_seconds": 1}),
    );
    trust(&sb);
    let out = mesh(&sb, &sleep_script("sleep 5"), &["--yes", "--json", "wait"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(started_policy(&out)["timeout_seconds"], 1);
    let results = tool_results(&out);
    assert_eq!(results.len(), 1, "{}", text(&out.stdout));
    assert_eq!(results[0]["ok"], false, "{}", results[0]);
    assert_eq!(results[0]["details"]["error"], timed_out);
    let sent = recorded(&sb.dir.path().join("requests.jsonl"));
    assert!(
        sent[0]["system"]
            .as_str()
            .unwrap()
            .contains("commands stop after 1 s")
    );

    // --timeout 1 over a policy.json without one.
    write_policy(&sb, &json!({"allowed_commands": ["sleep"]}));
    trust(&sb);
    let out = mesh(
        &sb,
        &sleep_script("sleep 5"),
        &["--yes", "--json", "--timeout", "1", "wait"],
    )
    .output()
    .unwrap();
    assert_eq!(started_policy(&out)["timeout_seconds"], 1);
    let results = tool_results(&out);
    assert_eq!(results[0]["ok"], false, "{}", results[0]);
    assert_eq!(results[0]["details"]["error"], timed_out);

    // --timeout also overrides the policy's own value.
    write_policy(
        &sb,
        &json!({"allowed_commands": ["sleep"], "timeout_seconds": 1}),
    );
    trust(&sb);
    let out = mesh(
        &sb,
        &sleep_script("sleep 1"),
        &["--yes", "--json", "--timeout", "30", "wait"],
    )
    .output()
    .unwrap();
    assert_eq!(started_policy(&out)["timeout_seconds"], 30);
    let results = tool_results(&out);
    assert_eq!(results[0]["ok"], true, "{}", results[0]);

    // The default: a one-second command is not stopped.
    write_policy(&sb, &json!({"allowed_commands": ["sleep"]}));
    trust(&sb);
    let out = mesh(&sb, &sleep_script("sleep 1"), &["--yes", "--json", "wait"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(started_policy(&out).get("timeout_seconds").is_none());
    let results = tool_results(&out);
    assert_eq!(results[0]["ok"], true, "{}", results[0]);
    assert!(results[0]["details"]["error"].is_null(), "{}", results[0]);
    let sent = recorded(&sb.dir.path().join("requests.jsonl"));
    assert!(
        sent[0]["system"]
            .as_str()
            .unwrap()
            .contains("commands stop after 20 s"),
        "the model is told the default"
    );

    // --timeout 0 is refused as usage.
    let out = mesh(&sb, &json!([]), &["--timeout", "0", "wait"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--timeout must be at least 1 second"));
}

fn list_script() -> Value {
    json!([
        plan(&[("List the project", Some("bash"))]),
        bash("l1", "ls"),
        say("Listed."),
        say("Listed the project."),
    ])
}

/// §10 Debug mode: `--log-level debug` adds debug records to the log of a
/// `north mesh` run (tool metadata, never contents); `NORTH_LOG=debug`
/// shows debug records on stderr.
#[test]
fn debug_logging_works_for_mesh() {
    for level in ["info", "debug"] {
        let sb = Sandbox::new();
        std::fs::write(sb.project().join("notes.txt"), "SECRET-NOTE-CONTENT-31\n").unwrap();
        let out = mesh(
            &sb,
            &list_script(),
            &["--yes", "--log-level", level, "list"],
        )
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let log = log(&sb);
        for needle in ["north mesh starting", "model request", "tool call", "ls"] {
            assert!(log.contains(needle), "{level}: `{needle}` missing:\n{log}");
        }
        let debug: Vec<&str> = log.lines().filter(|l| l.contains(" DEBUG ")).collect();
        assert_eq!(
            !debug.is_empty(),
            level == "debug",
            "{level}: debug records:\n{log}"
        );
        assert_eq!(
            log.contains("tool result tool=bash"),
            level == "debug",
            "{level}: debug adds tool metadata:\n{log}"
        );
        assert_eq!(log.contains("model response details"), level == "debug");
        assert!(!log.contains("SECRET-NOTE-CONTENT-31"), "{level}: {log}");
    }

    let sb = Sandbox::new();
    let out = mesh(&sb, &list_script(), &["--yes", "list"])
        .env("NORTH_LOG", "debug")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.contains("DEBUG") && l.contains("tool result")),
        "{err}"
    );
    let plain = mesh(&sb, &list_script(), &["--yes", "list"])
        .output()
        .unwrap();
    assert!(
        !text(&plain.stderr).contains("DEBUG"),
        "{}",
        text(&plain.stderr)
    );
}

/// Deliberate difference "policy.json applies as written only when
/// trusted": an untrusted project's `policy.json` that allows `curl` and
/// `wc` does not widen the balanced default; trusting it does.
#[test]
fn an_untrusted_policy_json_cannot_widen_the_mesh() {
    let sb = Sandbox::new();
    write_policy(
        &sb,
        &json!({"allowed_commands": ["ls", "curl", "wc"], "max_file_size": 5_000_000}),
    );
    let script = json!([
        plan(&[("Fetch and count", Some("bash"))]),
        {"tool_calls": [
            {"id": "c1", "name": "bash", "args": {"cmd": "curl --version"}},
            {"id": "c2", "name": "bash", "args": {"cmd": "wc -l README.md"}},
            {"id": "c3", "name": "bash", "args": {"cmd": "ls"}}
        ]},
        say("curl and wc were refused."),
        say("curl and wc are not allowed in this project."),
    ]);
    let out = mesh(&sb, &script, &["--yes", "--json", "fetch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("ignored this project's settings because it is not trusted")
            && err.contains("policy.json sets allowed_commands += curl"),
        "{err}"
    );
    let policy = started_policy(&out);
    assert_eq!(policy["allowed_commands"], json!(["ls"]));
    assert_eq!(policy["max_file_size"], 200_000);
    let results = tool_results(&out);
    assert_eq!(results.len(), 3, "{}", text(&out.stdout));
    assert_eq!(results[0]["ok"], false);
    assert_eq!(
        results[0]["details"]["error"],
        "Command denied by policy: `curl` is not in allowed_commands"
    );
    assert_eq!(results[1]["ok"], false);
    assert_eq!(
        results[1]["details"]["error"],
        "Command denied by policy: `wc` is not in allowed_commands"
    );
    assert_eq!(results[2]["ok"], true);
    let policy_events: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "policy")
        .collect();
    let verdicts: Vec<(&str, &str)> = policy_events
        .iter()
        .map(|e| {
            (
                e["verdict"].as_str().unwrap(),
                e["subject"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("deny", "curl --version"),
            ("deny", "wc -l README.md"),
            ("allow", "ls")
        ],
        "{policy_events:?}"
    );

    // Trusted, the same file applies as written: wc runs.
    trust(&sb);
    let script = json!([
        plan(&[("Count", Some("bash"))]),
        bash("c1", "wc -l README.md"),
        say("1 line."),
        say("README.md has 1 line."),
    ]);
    let out = mesh(&sb, &script, &["--yes", "--json", "count"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        started_policy(&out)["allowed_commands"],
        json!(["ls", "curl", "wc"])
    );
    let results = tool_results(&out);
    assert_eq!(results[0]["ok"], true, "{}", results[0]);
    assert!(
        results[0]["details"]["output"]
            .as_str()
            .unwrap()
            .contains("1 README.md")
    );
}
