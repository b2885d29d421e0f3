//! A long session stays under its context budget; condensation keeps the
//! goals and decisions and summarizes what it drops.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use north_agent::condense::{SUMMARY_INSTRUCTIONS, estimate_tokens};
use north_agent::{AgentOptions, TurnEnd};
use north_llm::{Backend, DeltaStream, LlmError, ScriptedBackend};
use north_protocol::{ChatRequest, ChatResponse};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;

/// Follows a script for normal requests and answers summary requests.
struct Summarizing {
    main: ScriptedBackend,
    summaries: Mutex<u32>,
    sizes: Mutex<Vec<u64>>,
    systems: Mutex<Vec<String>>,
}

impl Backend for Summarizing {
    fn provider(&self) -> &'static str {
        "test"
    }
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            north_llm::collect(self.stream_chat(request, CancellationToken::new())).await
        })
    }
    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream {
        let system = request.system.clone().unwrap_or_default();
        if system == SUMMARY_INSTRUCTIONS {
            let mut n = self.summaries.lock().unwrap();
            *n += 1;
            let text = format!("Summary {n}: read many files while greeting in French.");
            let b = ScriptedBackend::from_json(&json!([{ "text": text }]).to_string()).unwrap();
            return b.stream_chat(request, cancel);
        }
        self.sizes
            .lock()
            .unwrap()
            .push(estimate_tokens(&request.messages) + system.len() as u64 / 4);
        self.systems.lock().unwrap().push(system);
        self.main.stream_chat(request, cancel)
    }
}

#[tokio::test]
async fn a_long_session_stays_under_budget_and_keeps_goals_and_decisions() {
    let dir = project();
    for i in 0..30 {
        let body: String = (0..40)
            .map(|l| format!("// file {i} line {l}: some code that takes space\n"))
            .collect();
        std::fs::write(dir.path().join(format!("src/f{i}.rs")), body).unwrap();
    }
    let mut turns = vec![json!({
        "text": "<<<NOTES_JSON>>>{\"set_goals\":[\"audit every file\"],\"add_decisions\":[\"read files one by one\"],\"add_constraints\":[\"no edits\"]}<<<END_NOTES_JSON>>>Starting.",
        "tool_calls": [{"id": "r0", "name": "read_file", "args": {"path": "src/f0.rs", "range": null}}]
    })];
    for i in 1..30 {
        turns.push(json!({"text": format!("Next {i}."), "tool_calls": [{"id": format!("r{i}"), "name": "read_file", "args": {"path": format!("src/f{i}.rs"), "range": null}}]}));
    }
    turns.push(json!({"text": "Audit done."}));
    let backend = Arc::new(Summarizing {
        main: ScriptedBackend::from_json(&json!(turns).to_string()).unwrap(),
        summaries: Mutex::new(0),
        sizes: Mutex::default(),
        systems: Mutex::default(),
    });
    let budget = 6_000;
    let opts = AgentOptions {
        context_budget: budget,
        max_steps: 40,
        ..Default::default()
    };
    let mut run = agent_for(
        dir.path(),
        backend.clone(),
        QueueApprover::new([]),
        opts,
        None,
    );
    assert_eq!(run.turn("Audit all the files").await, TurnEnd::Done);

    let sizes = backend.sizes.lock().unwrap().clone();
    assert_eq!(sizes.len(), 31);
    let unbounded: u64 = 30 * 600;
    assert!(
        unbounded > budget,
        "the session would overflow without condensation"
    );
    assert!(
        sizes.iter().all(|s| *s <= budget),
        "every request within the budget: {sizes:?}"
    );
    assert!(
        *backend.summaries.lock().unwrap() >= 2,
        "condensed more than once"
    );

    let state = run.agent.state().clone();
    assert_eq!(state.goals, vec!["audit every file"]);
    assert_eq!(state.decisions, vec!["read files one by one"]);
    assert!(
        state.episode_summary.starts_with("Summary"),
        "{}",
        state.episode_summary
    );
    let last_system = backend.systems.lock().unwrap().last().unwrap().clone();
    assert!(
        last_system.contains("audit every file") && last_system.contains("read files one by one"),
        "{last_system}"
    );
    assert!(
        last_system.contains("Summary of the session so far"),
        "{last_system}"
    );
    assert!(run.trace_kinds().iter().any(|k| k == "condense"));
    // Each condensation is announced before its summary request runs.
    let notices = run
        .events()
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                north_protocol::Event::Notice {
                    kind: north_protocol::NoticeKind::Condensing,
                    ..
                }
            )
        })
        .count();
    assert_eq!(notices as u32, *backend.summaries.lock().unwrap());
}

#[tokio::test]
async fn condense_smart_skips_a_small_context_and_condense_now_forces_it() {
    let dir = project();
    let backend = Arc::new(Summarizing {
        main: ScriptedBackend::from_json(
            &json!([
                {"text": "<<<NOTES_JSON>>>{\"actions\":[\"condense_smart\"]}<<<END_NOTES_JSON>>>small"},
                {"text": "<<<NOTES_JSON>>>{\"actions\":[\"condense_now\"]}<<<END_NOTES_JSON>>>now"},
                {"text": "after"}
            ])
            .to_string(),
        )
        .unwrap(),
        summaries: Mutex::new(0),
        sizes: Mutex::default(),
        systems: Mutex::default(),
    });
    let mut run = agent_for(
        dir.path(),
        backend.clone(),
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    run.turn("one").await;
    assert_eq!(
        *backend.summaries.lock().unwrap(),
        0,
        "condense_smart: not worthwhile yet"
    );
    run.turn("two").await;
    run.turn("three").await;
    assert_eq!(
        *backend.summaries.lock().unwrap(),
        1,
        "condense_now condensed"
    );
    assert!(run.agent.state().episode_summary.starts_with("Summary 1"));
}

/// Condensation starts on its own at the configured share of the budget:
/// the same short session condenses with `compact_at` at 10% and does not
/// at the default 85%.
#[tokio::test]
async fn condensation_starts_at_the_configured_share_of_the_budget() {
    let summaries = |percent: u8| async move {
        let dir = project();
        let backend = Arc::new(Summarizing {
            main: ScriptedBackend::from_json(
                &json!([{"text": "one"}, {"text": "two"}, {"text": "three"}]).to_string(),
            )
            .unwrap(),
            summaries: Mutex::new(0),
            sizes: Mutex::default(),
            systems: Mutex::default(),
        });
        let mut run = agent_for(
            dir.path(),
            backend.clone(),
            QueueApprover::new([]),
            AgentOptions {
                // Large enough that 85% is never reached by three short
                // turns, small enough that 10% is.
                context_budget: 8_000,
                compact_at_percent: percent,
                ..AgentOptions::default()
            },
            None,
        );
        for prompt in ["first ask", "second ask", "third ask"] {
            run.turn(prompt).await;
        }
        *backend.summaries.lock().unwrap()
    };
    assert_eq!(
        summaries(85).await,
        0,
        "under 85% of the budget: no condensation"
    );
    assert!(summaries(10).await > 0, "over 10% of the budget: condensed");
}
