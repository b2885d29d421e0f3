//! Background commands through the real binary: `shell_run` with
//! `background: true`, `shell_output`, `shell_kill`, the exit notice, and
//! nothing left running when the session ends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use north_test_support::recorded::{texts, tool_result};

use crate::common;
use common::{Sandbox, text};

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "args": args}]})
}

#[test]
fn a_background_command_is_read_when_it_ends_and_its_exit_is_announced() {
    let sb = Sandbox::new();
    let (out, requests) = sb.exec_scripted(
        &json!([
            call("b1", "shell_run", json!({"command": "sleep 1; echo BG-DONE", "background": true})),
            call("o1", "shell_output", json!({"id": "bg1", "wait_ms": 30000})),
            call("b2", "shell_run", json!({"command": "echo quick", "background": true})),
            call("f1", "shell_run", json!({"command": "sleep 1"})),
            {"text": "done"}
        ]),
        &["--yes"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let started = tool_result(&requests[1], "b1");
    assert_eq!(started["output"]["id"], "bg1", "{started}");
    let read = tool_result(&requests[2], "o1");
    assert!(
        read["output"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("BG-DONE")),
        "{read}"
    );
    assert_eq!(read["output"]["exitCode"], 0, "{read}");
    assert_eq!(read["output"]["state"], "exited", "{read}");
    // bg2 ended while the foreground command ran and was never read: the
    // next request says so; bg1 (read after it ended) is not announced.
    let last = texts(&requests[4]);
    assert!(
        last.contains("background command bg2 (`echo quick`) ended with exit code 0"),
        "{last}"
    );
    assert!(!last.contains("background command bg1"), "{last}");
}

#[test]
fn background_commands_die_with_the_session_and_can_be_killed() {
    let sb = Sandbox::new();
    let p = sb.project();
    let sleep = sb.unique_sleep();
    let (out, requests) = sb.exec_scripted(
        &json!([
            call("b1", "shell_run", json!({"command": format!("sleep {sleep} && touch survived-session.txt"), "background": true})),
            call("b2", "shell_run", json!({"command": format!("sleep {sleep} && touch survived-kill.txt"), "background": true})),
            call("k1", "shell_kill", json!({"id": "bg2"})),
            call("o1", "shell_output", json!({"id": "bg9"})),
            {"text": "leaving"}
        ]),
        &["--yes"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(tool_result(&requests[3], "k1")["output"]["state"], "killed");
    let unknown = tool_result(&requests[4], "o1");
    assert_eq!(unknown["ok"], false, "{unknown}");
    assert!(
        unknown["error"]
            .as_str()
            .is_some_and(|e| e.contains("no background command `bg9`")),
        "{unknown}"
    );
    // Both jobs' processes are gone (killed, not left to finish their
    // sleep), so neither can write its marker later.
    assert!(
        Sandbox::no_sleep_left(&sleep),
        "a background command outlived the session"
    );
    assert!(
        !p.join("survived-session.txt").exists(),
        "a background command outlived the session"
    );
    assert!(
        !p.join("survived-kill.txt").exists(),
        "a killed background command ran on"
    );
}

#[test]
fn a_background_command_goes_through_the_policy_like_any_other() {
    let sb = Sandbox::new();
    let p = sb.project();
    // Headless without --yes: the policy asks, the flag approver refuses.
    let (out, requests) = sb.exec_scripted(
        &json!([
            call("b1", "shell_run", json!({"command": "touch started.txt", "background": true})),
            {"text": "ok"}
        ]),
        &[],
        &[],
    );
    assert!(!p.join("started.txt").exists());
    let refused = tool_result(&requests[1], "b1");
    assert_eq!(refused["ok"], false, "a refused job started: {refused}");
    assert!(refused["output"].get("id").is_none(), "{refused}");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}
