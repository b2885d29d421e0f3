//! north.md §2.4 shell approvals, shown on the agent: "Run this time"
//! stores nothing and asks again; "Always execute" runs at once and a later
//! agent on the same trusted project runs the command without asking.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use north_agent::{AgentOptions, TurnEnd};
use north_protocol::{ApprovalDecision, Event};
use serde_json::{Value, json};
use support::*;

/// A script that runs `command` (call `id`) and then answers `text`.
fn run_command(id: &str, command: &str, text: &str) -> Vec<Value> {
    vec![
        json!({"tool_calls": [{"id": id, "name": "shell_run", "args": {"command": command}}]}),
        json!({"text": text}),
    ]
}

/// Whether the tool result of call `id` was a success.
fn result_ok(run: &Run, id: &str) -> bool {
    run.events()
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { call_id, ok, .. } if call_id == id => Some(*ok),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// The approval records of the session's trace.
fn approvals(run: &Run) -> Vec<Value> {
    trace(run)
        .into_iter()
        .filter(|r| r["kind"] == "approval")
        .map(|r| r["data"].clone())
        .collect()
}

/// "Run this time": the command runs now, no rule is stored, and the same
/// command asked for again later is put to the user again.
#[tokio::test]
async fn run_this_time_runs_now_stores_no_rule_and_the_same_command_is_asked_again() {
    let dir = project();
    let command = "echo once >> hits.txt";
    let hits = dir.path().join("hits.txt");
    let mut turns = run_command("s1", command, "first done");
    turns.extend(run_command("s2", command, "second done"));
    let approver = QueueApprover::new([ApprovalDecision::RunOnce, ApprovalDecision::RunOnce]);
    let mut run = agent_for(
        dir.path(),
        scripted(Value::Array(turns), &dir.path().join("requests.jsonl")),
        approver.clone(),
        AgentOptions::default(),
        None,
    );

    assert_eq!(run.turn("run it").await, TurnEnd::Done);
    assert!(result_ok(&run, "s1"));
    assert_eq!(std::fs::read_to_string(&hits).unwrap(), "once\n");
    assert!(
        !dir.path().join(".north/allowlist.json").exists(),
        "no rule stored"
    );

    assert_eq!(run.turn("run it again").await, TurnEnd::Done);
    assert!(result_ok(&run, "s2"));
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec![format!("shell:{command}"), format!("shell:{command}")],
        "asked both times"
    );
    assert!(
        approver.decisions.lock().unwrap().is_empty(),
        "both answers used"
    );
    assert_eq!(std::fs::read_to_string(&hits).unwrap(), "once\nonce\n");
    assert!(!dir.path().join(".north/allowlist.json").exists());
    let decisions: Vec<Value> = approvals(&run)
        .iter()
        .map(|a| a["decision"].clone())
        .collect();
    assert_eq!(decisions, vec![json!("run_once"), json!("run_once")]);
}

/// "Always execute": the rule is stored and the command runs at once; a
/// second agent on the same (trusted) project runs it without asking.
#[tokio::test]
async fn always_execute_runs_now_and_a_later_agent_on_the_project_runs_it_unasked() {
    let dir = project();
    let command = "echo always >> hits.txt";
    let hits = dir.path().join("hits.txt");
    let first = QueueApprover::new([ApprovalDecision::Always]);
    let mut run = agent_for(
        dir.path(),
        scripted(
            Value::Array(run_command("a1", command, "done")),
            &dir.path().join("r1.jsonl"),
        ),
        first.clone(),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("run it").await, TurnEnd::Done);
    assert_eq!(
        *first.asked.lock().unwrap(),
        vec![format!("shell:{command}")]
    );
    assert!(result_ok(&run, "a1"));
    assert_eq!(
        std::fs::read_to_string(&hits).unwrap(),
        "always\n",
        "ran at once"
    );
    let allow: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".north/allowlist.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(allow["allowedCommands"], json!([command]), "{allow}");
    let first_session = run.agent.session_id().to_string();
    drop(run);

    // A new agent with a new session; its approver would refuse anything.
    let second = QueueApprover::new([]);
    let mut later = agent_for(
        dir.path(),
        scripted(
            Value::Array(run_command("a2", command, "done again")),
            &dir.path().join("r2.jsonl"),
        ),
        second.clone(),
        AgentOptions::default(),
        None,
    );
    assert_ne!(later.agent.session_id(), first_session);
    assert_eq!(later.turn("run it again").await, TurnEnd::Done);
    assert!(
        second.asked.lock().unwrap().is_empty(),
        "not asked: {:?}",
        second.asked.lock().unwrap()
    );
    assert!(result_ok(&later, "a2"));
    assert_eq!(std::fs::read_to_string(&hits).unwrap(), "always\nalways\n");
    assert!(
        !later
            .events()
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. })),
        "no approval requested"
    );
    let approval = &approvals(&later)[0];
    assert_eq!(approval["decision"], "auto", "{approval}");
    assert_eq!(approval["by"], "ExactRule", "{approval}");
}
