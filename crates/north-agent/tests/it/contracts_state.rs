//! Runtime-contracts requirements (`docs/conformance/runtime-contracts.md`)
//! shown end to end on the scripted backend: checkpoint fields, message
//! roles, the retrieved-memory block and the product rules the model
//! receives.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;

use north_agent::memory::{MemoryEntry, MemoryFile};
use north_agent::store::{RECENT_MESSAGES, SessionStore};
use north_agent::{AgentOptions, TurnEnd};
use north_llm::ScriptedBackend;
use north_protocol::{ChatMessage, Role};
use serde_json::{Value, json};
use support::*;

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
