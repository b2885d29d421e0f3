//! Runtime-contracts requirements (`docs/conformance/runtime-contracts.md`)
//! shown end to end on the scripted backend: NOTES patches and actions, and
//! text-protocol tool calls. Checkpoint fields, roles and retrieved memory
//! are in `contracts_state.rs`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use north_agent::{AgentOptions, TurnEnd};
use north_config::ToolProtocol;
use north_protocol::{ApprovalDecision, ApprovalKind, Event, NoticeKind};
use serde_json::{Value, json};
use support::*;

/// All text in a recorded request's message.
fn message_text(message: &Value) -> String {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn notes(patch: Value) -> String {
    format!("<<<NOTES_JSON>>>{patch}<<<END_NOTES_JSON>>>")
}

// §1.1 / §2: `add_constraints`.
#[tokio::test]
async fn add_constraints_lands_in_the_state_the_checkpoint_and_the_next_prompt() {
    let dir = project();
    let (mut run, rec) = scripted_session(
        dir.path(),
        json!([
            {"text": format!("Noted.{}", notes(json!({"add_constraints": ["no network access", "keep MSRV 1.80"]})))},
            {"text": format!("Noted again.{}", notes(json!({"add_constraints": ["keep MSRV 1.80", "no unsafe code"]})))}
        ]),
    );
    assert_eq!(run.turn("Work offline on MSRV 1.80").await, TurnEnd::Done);
    assert_eq!(
        run.agent.state().constraints,
        vec!["no network access", "keep MSRV 1.80"]
    );
    // The snapshot written at the end of the turn holds them.
    assert_eq!(
        snapshot_file(&run).state.constraints,
        vec!["no network access", "keep MSRV 1.80"]
    );

    // A second patch appends, without duplicating what is there.
    assert_eq!(run.turn("And no unsafe code").await, TurnEnd::Done);
    let expected = vec!["no network access", "keep MSRV 1.80", "no unsafe code"];
    assert_eq!(run.agent.state().constraints, expected);
    assert_eq!(run.checkpoint().state.constraints, expected);

    // The model is shown the constraints the first patch added.
    let reqs = recorded(&rec);
    assert_eq!(reqs.len(), 2);
    let system = reqs[1]["system"].as_str().unwrap();
    assert!(
        system.contains("Constraints:\n- no network access\n- keep MSRV 1.80"),
        "{system}"
    );

    // They survive a resume.
    let id = run.agent.session_id().to_string();
    drop(run);
    let resumed = agent_for(
        dir.path(),
        scripted(json!([]), &dir.path().join("unused.jsonl")),
        QueueApprover::new([]),
        AgentOptions::default(),
        Some(&id),
    );
    assert_eq!(resumed.agent.state().constraints, expected);
}

// §2: `set_goals` replaces the goals.
#[tokio::test]
async fn set_goals_replaces_the_goals_already_set() {
    let dir = project();
    let (mut run, _) = scripted_session(
        dir.path(),
        json!([
            {"text": format!("Planning.{}", notes(json!({"set_goals": ["read the code", "write a plan"]})))},
            {"text": format!("Replanning.{}", notes(json!({"set_goals": ["fix the greeting"]})))}
        ]),
    );
    assert_eq!(run.turn("Plan the work").await, TurnEnd::Done);
    assert_eq!(
        run.agent.state().goals,
        vec!["read the code", "write a plan"]
    );
    assert_eq!(run.turn("Only fix the greeting").await, TurnEnd::Done);
    assert_eq!(run.agent.state().goals, vec!["fix the greeting"]);
    assert_eq!(run.checkpoint().state.goals, vec!["fix the greeting"]);

    // The front end was shown each plan as it was set.
    let plans: Vec<Vec<String>> = run
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Plan { goals, .. } => Some(goals.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        plans,
        vec![
            vec!["read the code".to_string(), "write a plan".to_string()],
            vec!["fix the greeting".to_string()],
        ]
    );
}

// §2: "run actions after patch apply".
#[tokio::test]
async fn actions_run_after_every_patch_of_the_response_is_applied() {
    let dir = project();
    let rec = dir.path().join("requests.jsonl");
    // The first block carries the action, the second the goals: the action
    // still runs only once both patches are applied.
    let backend = scripted(
        json!([
            {"text": format!(
                "Need the network.{}{}",
                notes(json!({"add_open_loops": ["fetch the docs"], "actions": ["request_permission:net"]})),
                notes(json!({"set_goals": ["read the upstream docs"]}))
            )}
        ]),
        &rec,
    );
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([ApprovalDecision::Deny]),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("Check the upstream docs").await, TurnEnd::Done);

    // Trace: both patches, then the actions.
    let records = trace(&run);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .filter(|k| *k == "notes_patch" || *k == "actions")
        .collect();
    assert_eq!(kinds, vec!["notes_patch", "notes_patch", "actions"]);
    let patches: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "notes_patch")
        .collect();
    assert_eq!(patches[1]["data"]["ok"], true);
    assert_eq!(
        patches[1]["data"]["state"]["goals"],
        json!(["read the upstream docs"])
    );
    let actions = records.iter().find(|r| r["kind"] == "actions").unwrap();
    assert_eq!(
        actions["data"]["actions"],
        json!([{"action": "request_permission:net", "result": "denied by user"}])
    );

    // Events: the plan the second patch set was shown before the action asked
    // the user anything.
    let events = run.events();
    let plan_with_goal = events
        .iter()
        .position(|e| matches!(e, Event::Plan { goals, .. } if goals == &vec!["read the upstream docs".to_string()]))
        .expect("the second patch's plan is shown");
    let asked = events
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::ApprovalRequested {
                    kind: ApprovalKind::Capability,
                    subject,
                    ..
                } if subject == "net"
            )
        })
        .expect("the action asked for `net`");
    assert!(
        plan_with_goal < asked,
        "patch applied (event {plan_with_goal}) before the action ran (event {asked})"
    );
    let state = run.agent.state();
    assert_eq!(state.goals, vec!["read the upstream docs"]);
    assert_eq!(state.open_loops, vec!["fetch the docs"]);
    assert!(state.capabilities_granted.is_empty());
    assert!(
        state.capabilities_pending.is_empty(),
        "the denial cleared it"
    );
}

// §2: "unknown actions are ignored and traced".
#[tokio::test]
async fn an_unknown_action_is_traced_as_ignored_and_changes_nothing() {
    let dir = project();
    let rec = dir.path().join("requests.jsonl");
    let backend = scripted(
        json!([
            {"text": format!("Done.{}", notes(json!({"add_decisions": ["keep it"], "actions": ["dance", " condense_now", "request_permission:", "condense_smart"]})))}
        ]),
        &rec,
    );
    let approver = QueueApprover::new([]);
    let mut run = agent_for(
        dir.path(),
        backend,
        approver.clone(),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("Decide").await, TurnEnd::Done);
    let records = trace(&run);
    let actions: Vec<&Value> = records.iter().filter(|r| r["kind"] == "actions").collect();
    assert_eq!(actions.len(), 1, "{records:?}");
    assert_eq!(
        actions[0]["data"]["actions"],
        json!([
            {"action": "dance", "result": "ignored (unknown action)"},
            // A known name with space around it is another name.
            {"action": " condense_now", "result": "ignored (unknown action)"},
            // A permission naming nothing has its own reason.
            {"action": "request_permission:", "result": "ignored (empty capability)"},
            {"action": "condense_smart", "result": "scheduled"}
        ])
    );
    assert!(actions[0]["ts"].as_f64().unwrap() > 1.7e9);
    // Ignored: nothing asked, nothing else in the state changed.
    assert!(approver.asked.lock().unwrap().is_empty());
    let state = run.agent.state();
    assert_eq!(state.decisions, vec!["keep it"]);
    assert!(state.capabilities_pending.is_empty() && state.capabilities_granted.is_empty());
}

// §3: `tool` is required.
#[tokio::test]
async fn a_text_tool_call_without_a_tool_is_rejected_and_the_model_is_told_why() {
    let dir = project();
    let rec = dir.path().join("requests.jsonl");
    let block = |calls: Value| format!("<<<TOOL_CALLS_JSON>>>{calls}<<<END_TOOL_CALLS_JSON>>>");
    let backend = scripted(
        json!([
            // A valid entry next to one with no `tool`: the whole block is rejected.
            {"text": format!("Listing.{}", block(json!([
                {"id": "t1", "tool": "fs.list_dir", "args": {"path": "."}},
                {"id": "t2", "args": {"path": "src"}}
            ])))},
            {"text": format!("Again.{}", block(json!([{"id": "t3", "tool": "", "args": {}}])))},
            {"text": "I will stop here."}
        ]),
        &rec,
    );
    let opts = AgentOptions {
        tool_protocol: ToolProtocol::Text,
        ..Default::default()
    };
    let mut run = agent_with_tools(
        dir.path(),
        backend,
        QueueApprover::new([]),
        opts,
        None,
        north_tools::contracts_tools(),
    );
    assert_eq!(run.turn("What is here?").await, TurnEnd::Done);

    let reqs = recorded(&rec);
    assert_eq!(reqs.len(), 3, "each rejection gets the model another step");
    for (req, index) in [(&reqs[1], 1), (&reqs[2], 0)] {
        let last = req["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(last["role"], "tool");
        let told = message_text(last);
        assert!(
            told.contains(&format!(
                "TOOL_CALLS_JSON rejected, nothing ran: tool call #{index}: `tool` must be a non-empty string"
            )),
            "{told}"
        );
    }
    // Nothing in the rejected blocks ran, and the user was told.
    let events = run.events();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ToolResult { .. } | Event::ToolIntent { .. })),
        "{events:?}"
    );
    let notices = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Notice {
                    kind: NoticeKind::MalformedToolCall,
                    ..
                }
            )
        })
        .count();
    assert_eq!(notices, 2);
    let kinds = run.trace_kinds();
    assert!(!kinds.iter().any(|k| k == "tool_start"), "{kinds:?}");
    let rejected: Vec<Value> = trace(&run)
        .into_iter()
        .filter(|r| r["kind"] == "tool_plan" && r["data"]["ok"] == false)
        .collect();
    assert_eq!(rejected.len(), 2);
}
