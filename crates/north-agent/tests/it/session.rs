//! Whole sessions on the scripted backend: every tool kind, every approval
//! outcome, NOTES patches and actions, checkpoints, traces and events.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;

use north_agent::memory::{MemoryEntry, MemoryFile};
use north_agent::{AgentOptions, TurnEnd};
use north_llm::ScriptedBackend;
use north_protocol::{ApprovalDecision, ApprovalKind, Event, Role};
use serde_json::json;
use support::*;

const REQUIRED_TRACE_KINDS: &[&str] = &[
    "llm_req",
    "llm_stream",
    "llm_done",
    "notes_patch",
    "actions",
    "retrieval",
    "tool_plan",
    "tool_start",
    "tool_done",
];

fn script() -> serde_json::Value {
    json!({"turns": [
        {"text": "Let me look around.\n<<<NOTES_JSON>>>{\"set_goals\":[\"greet in French\"],\"add_decisions\":[\"keep main.rs small\"],\"add_open_loops\":[\"verify build\"],\"actions\":[\"request_permission:net\",\"grant_permission:net:evil.example\",\"dance\"]}<<<END_NOTES_JSON>>>",
         "tool_calls": [
            {"id": "t1", "name": "list_root", "args": {}},
            {"id": "t2", "name": "search_text", "args": {"query": "hello", "path": "src", "regex": false, "limit": 10}}]},
        {"text": "Reading main.", "tool_calls": [{"id": "t3", "name": "read_file", "args": {"path": "src/main.rs", "range": {"start": 1, "end": 3}}}]},
        {"text": "Editing.", "tool_calls": [
            {"id": "t4", "name": "edit_replace_exact", "args": {"path": "src/main.rs", "old": "hello", "new": "bonjour", "expectedOccurrences": 1}}]},
        {"text": "Also a notes file.", "tool_calls": [
            {"id": "t5", "name": "edit_create_file", "args": {"path": "NOTES.txt", "content": "notes\n", "overwrite": false}}]},
        {"text": "Checking.", "tool_calls": [
            {"id": "t6", "name": "shell_run", "args": {"command": "echo allowlisted-ok", "cwd": null, "timeoutMs": 10000}},
            {"id": "t7", "name": "shell_run", "args": {"command": "rm -rf src", "cwd": null, "timeoutMs": 10000}}]},
        {"text": "Done. main.rs now says bonjour.<<<NOTES_JSON>>>{\"close_open_loops\":[\"verify build\"],\"set_episode_summary\":\"Changed greeting.\"}<<<END_NOTES_JSON>>>"}
    ]})
}

#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, read top to bottom"
)]
#[tokio::test]
async fn scripted_session_lists_searches_reads_edits_runs_and_records_everything() {
    let dir = project();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".north")).unwrap();
    std::fs::write(
        root.join(".north/allowlist.json"),
        r#"{"allowedCommands": ["echo allowlisted-ok"]}"#,
    )
    .unwrap();
    MemoryFile::project(root)
        .append(MemoryEntry::new(
            "greeting",
            "The greeting in main.rs should be French.",
        ))
        .unwrap();
    let backend = Arc::new(
        ScriptedBackend::from_json(&script().to_string())
            .unwrap()
            .record_to(root.join("requests.jsonl"))
            .unwrap(),
    );
    // Asked in order: net (NOTES request), net:evil.example (self-grant becomes a request),
    // edit main.rs, edit NOTES.txt, the non-allowlisted command.
    let approver = QueueApprover::new([
        ApprovalDecision::Deny,
        ApprovalDecision::Deny,
        ApprovalDecision::Accept,
        ApprovalDecision::Reject,
        ApprovalDecision::Deny,
    ]);
    let mut run = agent_for(
        root,
        backend,
        approver.clone(),
        AgentOptions::default(),
        None,
    );
    let end = run.turn("Make the greeting French").await;
    assert_eq!(end, TurnEnd::Done);

    // Files: the accepted edit landed, the rejected one did not, the denied command did not run.
    assert_eq!(
        std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
        "fn main() {\n    println!(\"bonjour\");\n}\n"
    );
    assert!(!root.join("NOTES.txt").exists());
    assert!(root.join("src").exists());

    // Approvals: only the non-allowlisted command was asked about.
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec![
            "cap:net",
            "cap:net:evil.example",
            "edit:src/main.rs",
            "edit:NOTES.txt",
            "shell:rm -rf src"
        ]
    );

    // Checkpoint: state patched, nothing granted, nothing pending, the whole conversation kept.
    let cp = run.checkpoint();
    assert_eq!(cp.state.goals, vec!["greet in French"]);
    assert_eq!(cp.state.decisions, vec!["keep main.rs small"]);
    assert!(cp.state.open_loops.is_empty(), "closed by the last NOTES");
    assert_eq!(cp.state.episode_summary, "Changed greeting.");
    assert!(
        cp.state.capabilities_granted.is_empty(),
        "a model cannot grant itself anything"
    );
    assert!(cp.state.capabilities_pending.is_empty());
    assert!(
        cp.revision >= 8,
        "a checkpoint after every step and tool result: {}",
        cp.revision
    );
    let roles: Vec<&str> = cp.recent_messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles.first(), Some(&"user"));
    assert_eq!(roles.last(), Some(&"assistant"));
    assert_eq!(cp.messages.len(), cp.recent_messages.len());
    assert!(
        cp.recent_messages
            .iter()
            .any(|m| m.content.contains("allowlisted-ok")),
        "shell output reached the model"
    );

    // Trace: every required kind.
    let kinds = run.trace_kinds();
    for k in REQUIRED_TRACE_KINDS {
        assert!(kinds.iter().any(|x| x == k), "trace lacks {k}: {kinds:?}");
    }

    // Events: intent lines, a diff per proposal, decisions, results, one turn end.
    let events = run.events();
    let intents: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolIntent { line, .. } => Some(line.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        intents,
        vec![
            "Listing the project root",
            "Searching: `hello` in `src`",
            "Reading `src/main.rs` lines 1–3",
            "Preparing edits in `src/main.rs`",
            "Preparing edits in `NOTES.txt`",
            "Command requested: `echo allowlisted-ok`",
            "Command requested: `rm -rf src`",
        ]
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Diff { .. }))
            .count(),
        2
    );
    let shell_asks = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::ApprovalRequested {
                    kind: ApprovalKind::Shell,
                    ..
                }
            )
        })
        .count();
    assert_eq!(shell_asks, 1);
    let failed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                ok: false, tool, ..
            } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(failed, vec!["edit_create_file", "shell_run"]);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::TurnEnd { .. }))
            .count(),
        1
    );
    let visible: String = events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantText { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !visible.contains("NOTES_JSON"),
        "NOTES blocks are hidden from the user: {visible}"
    );

    // Requests: the retrieved memory reached the system prompt; all tools offered natively.
    let first: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(root.join("requests.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let system = first["system"].as_str().unwrap();
    assert!(
        system.contains("=== RETRIEVED_MEMORY ===") && system.contains("French"),
        "{system}"
    );
    assert!(first["tools"].as_array().unwrap().len() >= 8);
}

#[tokio::test]
async fn step_limit_ends_the_turn_with_a_clear_message() {
    let dir = project();
    let turns: Vec<serde_json::Value> =
        (0..3).map(|i| json!({"text": "again", "tool_calls": [{"id": format!("c{i}"), "name": "list_root", "args": {}}]})).collect();
    let backend = Arc::new(ScriptedBackend::from_json(&json!(turns).to_string()).unwrap());
    let opts = AgentOptions {
        max_steps: 2,
        ..Default::default()
    };
    let mut run = agent_for(dir.path(), backend, QueueApprover::new([]), opts, None);
    assert_eq!(run.turn("loop forever").await, TurnEnd::StepLimit);
    let text: String = run
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::AssistantText { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(text.contains("Stopped after 2 model steps"), "{text}");
}

#[tokio::test]
async fn bad_tools_and_arguments_become_results_the_model_sees() {
    let dir = project();
    let backend = Arc::new(
        ScriptedBackend::from_json(
            &json!([
                {"tool_calls": [
                    {"id": "a", "name": "no_such_tool", "args": {}},
                    {"id": "b", "name": "read_file", "args": {"pathh": "x"}},
                    {"id": "c", "name": "read_file", "args": {"path": "../../etc/passwd"}}]},
                {"text": "I see the errors."}
            ])
            .to_string(),
        )
        .unwrap(),
    );
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    assert_eq!(run.turn("try").await, TurnEnd::Done);
    let errors: Vec<String> = run
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                ok: false, summary, ..
            } => Some(summary.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("unknown tool"));
    assert!(
        errors[1].contains("path"),
        "names the bad field: {}",
        errors[1]
    );
}

#[tokio::test]
async fn provider_failure_keeps_the_session_and_the_user_can_continue() {
    let dir = project();
    let backend = Arc::new(
        ScriptedBackend::from_json(
            &json!([
                {"text": "Half", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                {"text": "Back again."}
            ])
            .to_string(),
        )
        .unwrap(),
    );
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    match run.turn("first").await {
        TurnEnd::ProviderFailed(m) => assert!(m.contains("overloaded_error"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(run.turn("second").await, TurnEnd::Done);
    let cp = run.checkpoint();
    let users: Vec<&str> = cp
        .recent_messages
        .iter()
        .filter(|m| m.role == north_protocol::Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(users, vec!["first", "second"], "nothing lost");
    assert!(
        cp.recent_messages.iter().any(|m| m.content == "Half"),
        "the partial answer is kept"
    );
}

/// Front ends run turns on a spawned task: the future must be `Send`.
#[tokio::test]
async fn a_turn_runs_on_a_spawned_task() {
    let dir = project();
    let backend = Arc::new(ScriptedBackend::from_json(r#"[{"text": "hi"}]"#).unwrap());
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = tokio::spawn(async move {
        let emit = move |e: Event| {
            let _ = tx.send(e);
        };
        run.agent
            .run_turn("hello", &emit, &tokio_util::sync::CancellationToken::new())
            .await
    });
    assert_eq!(handle.await.unwrap(), TurnEnd::Done);
    let mut texts = String::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::AssistantText { text } = e {
            texts.push_str(&text);
        }
    }
    assert_eq!(texts, "hi");
}

#[tokio::test]
async fn a_role_replaces_the_product_rules_in_the_system_prompt() {
    let dir = project();
    let rec = dir.path().join("req.jsonl");
    let backend = Arc::new(
        ScriptedBackend::from_json(r#"[{"text": "ok"}]"#)
            .unwrap()
            .record_to(&rec)
            .unwrap(),
    );
    let opts = AgentOptions {
        role: Some("You execute plans strictly using tools.".into()),
        ..Default::default()
    };
    let mut run = agent_for(dir.path(), backend, QueueApprover::new([]), opts, None);
    run.turn("go").await;
    let req: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&rec)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let system = req["system"].as_str().unwrap();
    assert!(
        system.starts_with("## 1. Rules\n\nYou execute plans strictly using tools."),
        "{system}"
    );
    assert!(!system.contains("You are North"));
}

/// Interrupting while a command runs ends the turn: the command is stopped,
/// its result recorded as interrupted, and no further model request is sent.
/// The interrupt is kept in the conversation, in Claude Code's words: the
/// model's next request reads that the last one was cut short (after the
/// calls' results, never between a call and its result), and a session
/// left after an interrupt has nothing to continue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_during_a_command_sends_no_further_request_and_is_noted() {
    let dir = project();
    let rec = dir.path().join("requests.jsonl");
    let backend = Arc::new(
        ScriptedBackend::from_json(
            &json!([
                {"text": "Running.", "tool_calls": [{"id": "s1", "name": "shell_run",
                    "args": {"command": "touch started && sleep 30", "timeoutMs": 60000}}]},
                {"text": "NEXT-ANSWER"}
            ])
            .to_string(),
        )
        .unwrap()
        .record_to(&rec)
        .unwrap(),
    );
    let mut run = agent_for(
        dir.path(),
        backend.clone(),
        QueueApprover::new([ApprovalDecision::RunOnce]),
        AgentOptions::default(),
        None,
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let started = dir.path().join("started");
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !started.exists() && std::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            cancel.cancel();
        })
    };
    let events = run.events.clone();
    let emit = move |e: Event| events.lock().unwrap().push(e);
    let end = run.agent.run_turn("run it", &emit, &cancel).await;
    canceller.await.unwrap();
    assert_eq!(end, TurnEnd::Interrupted);
    assert_eq!(
        backend.remaining(),
        1,
        "the second turn was never requested"
    );
    let last = run.agent.messages().last().unwrap().clone();
    assert_eq!(last.role, Role::User);
    assert!(north_agent::is_interrupted_note(
        last.content.last().unwrap()
    ));

    let fresh = tokio_util::sync::CancellationToken::new();
    let end = run.agent.continue_turn(&emit, &fresh).await;
    assert!(
        matches!(end, TurnEnd::PromptFailed(ref m) if m.contains("nothing to continue")),
        "{end:?}"
    );

    run.turn("try something else").await;
    let second: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&rec)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap(),
    )
    .unwrap();
    let messages = second["messages"].as_array().unwrap();
    let shown: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
    let result = shown
        .iter()
        .position(|m| m.contains("tool_result") || m.contains("\"role\":\"tool\""))
        .unwrap_or(0);
    let note = shown
        .iter()
        .position(|m| m.contains(north_agent::INTERRUPTED_NOTE))
        .expect("the note reaches the model");
    let prompt = shown
        .iter()
        .rposition(|m| m.contains("try something else"))
        .unwrap();
    assert!(result < note && note <= prompt, "{shown:#?}");
}
