//! The tools a turn offers: background-command tools only once a
//! background command was started, `web_fetch` only once the session
//! reaches for the web — decided at the start of a turn, so every request
//! of a turn carries the same list, and recorded in the session's trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use north_test_support::recorded::{tool_names, tool_result};

use crate::common::{Sandbox, text};

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "args": args}]})
}

/// `north exec` with `turns`, `args` and `prompt`: its output and the
/// requests the model was sent.
fn exec(
    sb: &Sandbox,
    turns: &Value,
    args: &[&str],
    prompt: &str,
) -> (std::process::Output, Vec<Value>) {
    let args: Vec<&str> = ["--yes"].into_iter().chain(args.iter().copied()).collect();
    sb.exec_prompted(turns, &args, &[], prompt)
}

/// The session id `north exec` names on standard error.
fn session_of(out: &std::process::Output) -> String {
    let err = text(&out.stderr);
    let at = err.find("(resume with --resume ").expect("no session id");
    err[at + "(resume with --resume ".len()..]
        .split(')')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn background_tools_are_offered_from_the_turn_after_the_first_background_start() {
    let sb = Sandbox::new();
    let (out, first) = exec(
        &sb,
        &json!([
            call("b1", "shell_run", json!({"command": "echo one", "background": true})),
            {"text": "started"}
        ]),
        &[],
        "start the build in the background",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(first.len(), 2);
    let names = tool_names(&first[0]);
    for held in ["shell_output", "shell_kill", "web_fetch"] {
        assert!(
            !names.iter().any(|n| n == held),
            "{held} offered before it could help: {names:?}"
        );
    }
    assert!(names.iter().any(|n| n == "shell_run"));
    // The start does not change the list within its turn.
    assert_eq!(
        tool_names(&first[1]),
        names,
        "the tool list changed within a turn"
    );

    // The next turn offers them, and they run.
    let id = session_of(&out);
    let (out, second) = exec(
        &sb,
        &json!([
            call("b2", "shell_run", json!({"command": "echo two-done", "background": true})),
            call("o2", "shell_output", json!({"id": "bg1", "wait_ms": 30000})),
            {"text": "read"}
        ]),
        &["--resume", &id],
        "read it",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for request in &second {
        let names = tool_names(request);
        assert!(
            names.iter().any(|n| n == "shell_output") && names.iter().any(|n| n == "shell_kill"),
            "{names:?}"
        );
    }
    assert_eq!(tool_names(&second[0]), tool_names(&second[2]));
    let read = tool_result(&second[2], "o2");
    assert!(
        read["output"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("two-done")),
        "{read}"
    );
    // Recorded where the session's history is.
    let trace = sb.trace_text(&id);
    let offered: Vec<Value> = trace
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["kind"] == "tools_offered")
        .collect();
    let held: Vec<&Value> = offered.iter().map(|r| &r["data"]["held"]).collect();
    assert_eq!(
        held,
        [
            &json!([
                "detect_languages",
                "hotfiles",
                "list_root",
                "read_readme",
                "shell_kill",
                "shell_output",
                "web_fetch"
            ]),
            &json!([
                "detect_languages",
                "hotfiles",
                "list_root",
                "read_readme",
                "web_fetch"
            ])
        ],
        "{trace}"
    );
}

#[test]
fn web_fetch_is_offered_once_the_user_names_a_web_address_or_grants_the_network() {
    let sb = Sandbox::new();
    let say = json!([{"text": "ok"}]);
    let (out, plain) = exec(&sb, &say, &[], "explain the parser");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!tool_names(&plain[0]).iter().any(|n| n == "web_fetch"));
    let (out, asked) = exec(
        &sb,
        &say,
        &[],
        "summarise https://docs.example.invalid/guide for me",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(tool_names(&asked[0]).iter().any(|n| n == "web_fetch"));
    let (out, granted) = exec(
        &sb,
        &say,
        &["--grant", "net:docs.example.invalid"],
        "read the guide",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(tool_names(&granted[0]).iter().any(|n| n == "web_fetch"));
}
