//! Runtime-contracts requirements (`docs/conformance/runtime-contracts.md`)
//! shown end to end on the scripted backend: NOTES patches and actions,
//! text-protocol tool calls, checkpoint fields, message roles, retrieved
//! memory and the product rules the model receives.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use north_agent::config::ToolProtocol;
use north_agent::memory::{MemoryEntry, MemoryFile};
use north_agent::store::{RECENT_MESSAGES, SessionStore};
use north_agent::{AgentOptions, TurnEnd};
use north_llm::ScriptedBackend;
use north_protocol::{
    ApprovalDecision, ApprovalKind, ChatMessage, Checkpoint, Event, NoticeKind, Role,
};
use serde_json::{Value, json};
use support::*;

/// A scripted backend replaying `turns`, recording every request to `rec`.
fn scripted(turns: Value, rec: &Path) -> Arc<ScriptedBackend> {
    Arc::new(
        ScriptedBackend::from_json(&turns.to_string())
            .unwrap()
            .record_to(rec)
            .unwrap(),
    )
}

fn session_dir(run: &Run) -> PathBuf {
    run.root
        .join(".north/sessions")
        .join(run.agent.session_id())
}

/// Every record of the session's `trace.jsonl`.
fn trace(run: &Run) -> Vec<Value> {
    std::fs::read_to_string(session_dir(run).join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `checkpoint.json` exactly as written (the compact snapshot).
fn snapshot_file(run: &Run) -> Checkpoint {
    serde_json::from_str(
        &std::fs::read_to_string(session_dir(run).join("checkpoint.json")).unwrap(),
    )
    .unwrap()
}

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

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
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
            {"text": format!("Done.{}", notes(json!({"add_decisions": ["keep it"], "actions": ["dance", "condense_smart"]})))}
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

// §1.2: `updated_ts` and `trace_tail`.
#[tokio::test]
async fn checkpoint_updated_ts_is_the_write_time_and_trace_tail_names_the_trace() {
    let dir = project();
    let rec = dir.path().join("requests.jsonl");
    let backend = scripted(json!([{"text": "Hello."}]), &rec);
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    let before = now();
    assert_eq!(run.turn("hi").await, TurnEnd::Done);
    let after = now();

    for (what, cp) in [
        ("checkpoint.json", snapshot_file(&run)),
        ("loaded session", run.checkpoint()),
    ] {
        let ts = cp.updated_ts;
        assert!(ts > 1.7e9, "{what}: {ts} is not a current Unix time");
        assert!(ts <= now() + 60.0, "{what}: {ts} is in the future");
        assert!(
            ts >= before - 2.0 && ts <= after + 2.0,
            "{what}: {ts} is not the time of the write ({before}..{after})"
        );
        assert_eq!(cp.session_id, run.agent.session_id());
        // trace_tail names trace files of the session: North's one trace.
        assert_eq!(cp.trace_tail, vec!["trace.jsonl"], "{what}");
        for name in &cp.trace_tail {
            let text = std::fs::read_to_string(session_dir(&run).join(name)).unwrap();
            let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            assert!(first["kind"].is_string(), "{what}: {name} is a trace");
        }
    }
}

// §1.2: `trace_tail` is optional.
#[test]
fn a_checkpoint_without_trace_tail_loads_and_resumes() {
    let dir = project();
    let session = SessionStore::new(dir.path()).create().unwrap();
    std::fs::write(
        session.checkpoint_path(),
        json!({
            "session_id": session.id,
            "revision": 3,
            "updated_ts": 1_750_000_000.5,
            "state": {"goals": ["old goal"]},
            "recent_messages": [
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let cp = session.load_checkpoint().unwrap().unwrap();
    assert!(cp.trace_tail.is_empty());
    assert_eq!(cp.revision, 3);
    assert_eq!(cp.updated_ts, 1_750_000_000.5);
    assert_eq!(cp.state.goals, vec!["old goal"]);
    assert_eq!(cp.recent_messages.len(), 2);

    let run = agent_for(
        dir.path(),
        Arc::new(ScriptedBackend::from_json("[]").unwrap()),
        QueueApprover::new([]),
        AgentOptions::default(),
        Some(&session.id),
    );
    assert_eq!(run.agent.state().goals, vec!["old goal"]);
}

// §1.2: `recent_messages` is bounded.
#[tokio::test]
async fn checkpoint_recent_messages_keeps_only_the_last_twenty() {
    assert_eq!(RECENT_MESSAGES, 20);
    let dir = project();
    let rec = dir.path().join("requests.jsonl");
    let mut turns: Vec<Value> = (0..15)
        .map(|i| {
            json!({"text": format!("Step {i}."), "tool_calls": [{"id": format!("c{i}"), "name": "list_root", "args": {}}]})
        })
        .collect();
    turns.push(json!({"text": "All done."}));
    let mut run = agent_for(
        dir.path(),
        scripted(json!(turns), &rec),
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("Look around fifteen times").await, TurnEnd::Done);

    // user + 15 × (assistant, tool) + the final answer.
    let all = run.checkpoint().recent_messages;
    assert_eq!(all.len(), 32);
    assert_eq!(run.agent.messages().len(), 32);
    let snapshot = snapshot_file(&run);
    assert_eq!(snapshot.recent_messages.len(), 20);
    assert!(snapshot.messages.is_empty(), "the snapshot is compact");
    assert_eq!(
        snapshot.recent_messages,
        all[all.len() - 20..].to_vec(),
        "the most recent 20, in order"
    );
    assert_eq!(
        snapshot.recent_messages.last().unwrap().content,
        "All done."
    );
    assert!(
        !snapshot
            .recent_messages
            .iter()
            .any(|m| m.content.contains("Look around fifteen times")),
        "the oldest messages are not kept"
    );
}

// §1.3: the `system` role.
#[test]
fn the_system_role_is_written_and_read_as_system() {
    let message = ChatMessage {
        role: Role::System,
        content: "Be brief.".into(),
    };
    let value = serde_json::to_value(&message).unwrap();
    assert_eq!(value, json!({"role": "system", "content": "Be brief."}));
    assert_eq!(Role::System.as_str(), "system");
    let back: ChatMessage =
        serde_json::from_str(r#"{"role": "system", "content": "Be brief."}"#).unwrap();
    assert_eq!(back, message);
    assert!(serde_json::from_str::<ChatMessage>(r#"{"role": "System", "content": ""}"#).is_err());
}

// §5: the block's `score=` and excerpt lines.
#[tokio::test]
async fn retrieved_memory_lines_carry_a_three_decimal_score_and_an_indented_excerpt() {
    let dir = project();
    let memory = MemoryFile::project(dir.path());
    let greeting = MemoryEntry::new(
        "greeting",
        "The greeting in main.rs should be French.\nUse bonjour, not salut.",
    );
    let long = MemoryEntry::new("greeting style", format!("greeting {}", "x".repeat(400)));
    let unrelated = MemoryEntry::new("build", "Builds use cargo.");
    for e in [&greeting, &long, &unrelated] {
        memory.append(e.clone()).unwrap();
    }
    let rec = dir.path().join("requests.jsonl");
    let mut run = agent_for(
        dir.path(),
        scripted(json!([{"text": "ok"}]), &rec),
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("Make the greeting French").await, TurnEnd::Done);
    let system = recorded(&rec)[0]["system"].as_str().unwrap().to_string();
    let start = system.find("=== RETRIEVED_MEMORY ===\n").expect(&system);
    let end = system.find("=== END_RETRIEVED_MEMORY ===").expect(&system);
    let body = &system[start + "=== RETRIEVED_MEMORY ===\n".len()..end];
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(
        lines.len() % 2,
        0,
        "an id line and an excerpt line each: {body}"
    );
    let mut shown = Vec::new();
    for pair in lines.chunks(2) {
        let rest = pair[0].strip_prefix("- id=").expect(pair[0]);
        let (id, score) = rest.split_once(" score=").expect(pair[0]);
        let (int, frac) = score.split_once('.').expect(score);
        assert!(
            !int.is_empty() && int.chars().all(|c| c.is_ascii_digit()),
            "{score}"
        );
        assert!(
            frac.len() == 3 && frac.chars().all(|c| c.is_ascii_digit()),
            "three decimals: {score}"
        );
        assert!(score.parse::<f64>().unwrap() > 0.0);
        let excerpt = pair[1].strip_prefix("  ").expect(pair[1]);
        assert!(
            !excerpt.starts_with(' '),
            "indented by two spaces: {:?}",
            pair[1]
        );
        shown.push((id.to_string(), excerpt.to_string()));
    }
    let excerpt_of = |id: &str| {
        shown
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, e)| e.clone())
            .unwrap_or_else(|| panic!("{id} not retrieved: {body}"))
    };
    // The summary on one line; a long one cut to 300 characters.
    assert_eq!(
        excerpt_of(&greeting.id),
        "The greeting in main.rs should be French. Use bonjour, not salut."
    );
    assert_eq!(excerpt_of(&long.id), &long.summary[..300]);
    assert!(
        !shown.iter().any(|(i, _)| *i == unrelated.id),
        "an entry that does not match is not retrieved"
    );
}

// §5: `[mem:<id>]` citations.
#[tokio::test]
async fn the_product_rules_ask_the_model_to_cite_memory_as_mem_id() {
    let dir = project();
    MemoryFile::project(dir.path())
        .append(MemoryEntry::new(
            "greeting",
            "The greeting in main.rs should be French.",
        ))
        .unwrap();
    let rec = dir.path().join("requests.jsonl");
    let mut run = agent_for(
        dir.path(),
        scripted(json!([{"text": "ok"}]), &rec),
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("Make the greeting French").await, TurnEnd::Done);
    let system = recorded(&rec)[0]["system"].as_str().unwrap().to_string();
    assert!(
        system.contains("Cite retrieved memory as [mem:<id>]."),
        "{system}"
    );
    // The instruction is in the rules, ahead of the memory it applies to.
    let rules = system.find("You are North").expect(&system);
    let cite = system.find("[mem:<id>]").unwrap();
    let block = system.find("=== RETRIEVED_MEMORY ===").expect(&system);
    assert!(rules < cite && cite < block, "{system}");
}
