//! The agent with reasoning models and model switches, against fake
//! servers speaking the real wire formats: thinking shown and passed back
//! in a tool loop, reasoning items carried over the Responses API, and a
//! session moved to another provider or model with its history kept.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use north_agent::{AgentOptions, ModelSwitch, TurnEnd};
use north_config::ToolProtocol;
use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, Backend, OpenAiApi, OpenAiBackend, OpenAiConfig,
    RetryPolicy, TransportConfig,
};
use north_protocol::{ContentBlock, Event, NoticeKind, ReasoningEffort, Role};
use north_test_support::{FakeServer, Reply, anthropic, openai, responses};
use serde_json::{Value, json};
use support::*;

const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";

fn fast() -> TransportConfig {
    TransportConfig {
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            max_retry_after: Duration::from_secs(1),
        },
        ..Default::default()
    }
}

fn anthropic_backend(server: &FakeServer) -> Arc<dyn Backend> {
    Arc::new(
        AnthropicBackend::new(AnthropicConfig {
            base_url: server.url(),
            api_key: Some(ApiKey::new(KEY)),
            transport: fast(),
        })
        .unwrap(),
    )
}

fn openai_backend(server: &FakeServer, api: OpenAiApi) -> Arc<dyn Backend> {
    Arc::new(
        OpenAiBackend::new(OpenAiConfig {
            base_url: format!("{}/v1", server.url()),
            api_key: None,
            transport: fast(),
            api: Some(api),
            ..Default::default()
        })
        .unwrap(),
    )
}

fn opts(provider: &str, model: &str) -> AgentOptions {
    AgentOptions {
        provider: provider.into(),
        model: model.into(),
        tool_protocol: ToolProtocol::Native,
        reasoning: Some(ReasoningEffort::Low),
        ..Default::default()
    }
}

/// A thinking model that reads a file, then answers.
fn thinking_tool_loop(server: &FakeServer) {
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .thinking(&["The answer is in ", "the README."], SIGNATURE)
            .tool_use("toolu_01", "read_file", &["{\"path\": \"README.md\"}"])
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["It is a demo."])));
}

#[tokio::test]
async fn thinking_is_shown_counted_and_passed_back_in_a_tool_loop() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    thinking_tool_loop(&server);
    let mut run = agent_for(
        dir.path(),
        anthropic_backend(&server),
        QueueApprover::new([]),
        opts("anthropic", "claude-sonnet-4-5"),
        None,
    );
    assert_eq!(run.turn("What is this project?").await, TurnEnd::Done);
    let thinking: String = run
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Thinking { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The answer is in the README.");
    let usage = run.events().into_iter().find_map(|e| match e {
        Event::Usage { usage, .. } => Some(usage),
        _ => None,
    });
    assert!(
        usage.unwrap().reasoning_tokens > 0,
        "thinking tokens are counted"
    );
    let reqs = server.requests_to("/v1/messages");
    assert_eq!(reqs[0].json()["thinking"]["type"], "enabled");
    let assistant = reqs[1].json()["messages"][1].clone();
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "The answer is in the README.", "signature": SIGNATURE}),
        "the tool turn starts with the thinking block, unchanged"
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

#[tokio::test]
async fn reasoning_items_are_carried_over_the_responses_api() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new()
            .reasoning("rs_1", &["Reading the README."], "gAAAAB-ENC")
            .function_call("call_1", "read_file", &["{\"path\":\"README.md\"}"])
            .build(),
    ));
    server.push(Reply::sse(responses::text_stream(&["A demo."])));
    let mut run = agent_for(
        dir.path(),
        openai_backend(&server, OpenAiApi::Responses),
        QueueApprover::new([]),
        opts("openai", "gpt-5.2"),
        None,
    );
    assert_eq!(run.turn("What is this?").await, TurnEnd::Done);
    let input = server.requests()[1].json()["input"].clone();
    let kinds: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], "gAAAAB-ENC");
    assert!(
        input[1].get("id").is_none(),
        "nothing is stored server-side"
    );
}

#[tokio::test]
async fn switching_provider_keeps_the_history_and_drops_foreign_reasoning() {
    let dir = project();
    let claude = FakeServer::start().await.unwrap();
    thinking_tool_loop(&claude);
    let mut run = agent_for(
        dir.path(),
        anthropic_backend(&claude),
        QueueApprover::new([]),
        opts("anthropic", "claude-sonnet-4-5"),
        None,
    );
    assert_eq!(run.turn("What is this project?").await, TurnEnd::Done);
    assert!(
        run.agent
            .messages()
            .iter()
            .any(|m| m.content.iter().any(ContentBlock::is_reasoning))
    );

    let local = FakeServer::start().await.unwrap();
    local.push(Reply::sse(openai::text_stream(&["Still a demo."])));
    let events = run.events.clone();
    let emit = move |e: Event| events.lock().unwrap().push(e);
    let report = run.agent.switch_model(
        ModelSwitch {
            backend: openai_backend(&local, OpenAiApi::Chat),
            provider: "openai".into(),
            model: "qwen2.5-coder".into(),
            max_tokens: 1024,
            context_budget: 6000,
        },
        &emit,
    );
    assert_eq!(report.from.model, "claude-sonnet-4-5");
    assert_eq!(report.dropped_reasoning, 1);
    assert!(run.events().iter().any(|e| matches!(
        e,
        Event::Notice { kind: NoticeKind::ModelSwitched, message } if message.contains("now on openai qwen2.5-coder")
    )));
    assert_eq!(run.checkpoint().model.unwrap().model, "qwen2.5-coder");

    assert_eq!(run.turn("And the licence?").await, TurnEnd::Done);
    let body = local.requests_to("/v1/chat/completions")[0].json();
    assert_eq!(body["model"], "qwen2.5-coder");
    assert_eq!(body["max_tokens"], 1024);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"],
        "the whole conversation, re-encoded for Chat Completions"
    );
    assert_eq!(body["messages"][2]["tool_calls"][0]["id"], "toolu_01");
    assert_eq!(body["messages"][3]["tool_call_id"], "toolu_01");
    assert!(!body.to_string().contains(SIGNATURE));
}

#[tokio::test]
async fn switching_back_to_the_same_model_keeps_its_reasoning() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    thinking_tool_loop(&server);
    let backend = anthropic_backend(&server);
    let mut run = agent_for(
        dir.path(),
        backend.clone(),
        QueueApprover::new([]),
        opts("anthropic", "claude-sonnet-4-5"),
        None,
    );
    run.turn("What is this project?").await;
    let report = run.agent.switch_model(
        ModelSwitch {
            backend,
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            max_tokens: 4096,
            context_budget: 100_000,
        },
        &|_| {},
    );
    assert_eq!(report.dropped_reasoning, 0);
    let kept = run
        .agent
        .messages()
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| b.is_reasoning())
        .count();
    assert_eq!(kept, 1);
}

#[tokio::test]
async fn a_session_resumed_on_another_model_drops_reasoning_and_says_so() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    thinking_tool_loop(&server);
    let mut run = agent_for(
        dir.path(),
        anthropic_backend(&server),
        QueueApprover::new([]),
        opts("anthropic", "claude-sonnet-4-5"),
        None,
    );
    run.turn("What is this project?").await;
    let id = run.agent.session_id().to_string();
    drop(run);

    server.push(Reply::sse(anthropic::text_stream(&["Sure."])));
    let mut resumed = agent_for(
        dir.path(),
        anthropic_backend(&server),
        QueueApprover::new([]),
        opts("anthropic", "claude-opus-4-5"),
        Some(&id),
    );
    assert!(resumed.agent.messages().iter().all(|m| m.role != Role::Assistant
        || !m.content.iter().any(ContentBlock::is_reasoning)));
    assert_eq!(resumed.turn("Thanks").await, TurnEnd::Done);
    assert!(matches!(
        &resumed.events()[0],
        Event::Notice { kind: NoticeKind::ModelSwitched, message } if message.contains("was anthropic claude-sonnet-4-5")
    ));
    let body: Value = server.requests_to("/v1/messages").last().unwrap().json();
    assert_eq!(body["model"], "claude-opus-4-5");
    assert!(
        !body.to_string().contains(SIGNATURE),
        "another model's signature is never sent"
    );
}
