//! Sessions against the fake Anthropic and OpenAI servers with native tool
//! calls, and once with the text tool-call protocol.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use north_agent::{AgentOptions, TurnEnd};
use north_config::ToolProtocol;
use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, OpenAiBackend, OpenAiConfig, RetryPolicy,
    TransportConfig,
};
use north_protocol::ApprovalDecision;
use north_test_support::{FakeServer, Reply, anthropic, openai};
use serde_json::{Value, json};
use support::*;

fn fast() -> TransportConfig {
    TransportConfig {
        retry: RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            max_retry_after: Duration::from_secs(1),
        },
        ..Default::default()
    }
}

fn opts(provider: &str, protocol: ToolProtocol) -> AgentOptions {
    AgentOptions {
        provider: provider.into(),
        model: "test-model".into(),
        tool_protocol: protocol,
        ..Default::default()
    }
}

#[tokio::test]
async fn anthropic_native_tool_calls_read_then_edit() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .text(&["Reading ", "main."])
            .tool_use(
                "toolu_01",
                "read_file",
                &["{\"path\": \"src/", "main.rs\", \"range\": null}"],
            )
            .build(),
    ));
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .tool_use(
                "toolu_02",
                "edit_replace_exact",
                &[
                    "{\"path\":\"src/main.rs\",\"old\":\"hello\",",
                    "\"new\":\"hi\",\"expectedOccurrences\":1}",
                ],
            )
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["Changed ", "it."])));
    let backend = Arc::new(
        AnthropicBackend::new(AnthropicConfig {
            base_url: server.url(),
            api_key: Some(ApiKey::new(KEY)),
            transport: fast(),
        })
        .unwrap(),
    );
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([ApprovalDecision::Accept]),
        opts("anthropic", ToolProtocol::Native),
        None,
    );
    assert_eq!(run.turn("Say hi instead").await, TurnEnd::Done);
    assert!(
        std::fs::read_to_string(dir.path().join("src/main.rs"))
            .unwrap()
            .contains("\"hi\"")
    );

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let second = reqs[1].json();
    let msgs = second["messages"].as_array().unwrap();
    // user, assistant(tool_use), user(tool_result)
    assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
    assert_eq!(msgs[1]["content"][1]["id"], "toolu_01");
    let result = &msgs[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");
    let outcome: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(outcome["ok"], true);
    assert!(
        outcome["output"]["content"]
            .as_str()
            .unwrap()
            .contains("hello")
    );
    assert!(
        second["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Rules")
    );
    assert_eq!(
        second["tools"].as_array().unwrap().last().unwrap()["cache_control"],
        json!({"type": "ephemeral"})
    );
    for r in &reqs {
        assert_eq!(r.header("x-api-key"), Some(KEY));
    }
}

#[tokio::test]
async fn openai_native_tool_calls_with_two_calls_in_one_response() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        openai::StreamBuilder::new()
            .tool_call(0, "call_a", "list_root", &["{}"])
            .tool_call(
                1,
                "call_b",
                "search_text",
                &[
                    "{\"query\":\"TODO\",",
                    "\"path\":null,\"regex\":false,\"limit\":5}",
                ],
            )
            .build(),
    ));
    server.push(Reply::sse(openai::text_stream(&[
        "One ",
        "TODO in src/lib.rs.",
    ])));
    let backend = Arc::new(
        OpenAiBackend::new(OpenAiConfig {
            base_url: format!("{}/v1", server.url()),
            api_key: None,
            transport: fast(),
            api: None,
            ..Default::default()
        })
        .unwrap(),
    );
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([]),
        opts("openai", ToolProtocol::Native),
        None,
    );
    assert_eq!(run.turn("Find TODOs").await, TurnEnd::Done);
    let second = server.requests()[1].json();
    let msgs = second["messages"].as_array().unwrap();
    let tool_msgs: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 2);
    assert_eq!(tool_msgs[0]["tool_call_id"], "call_a");
    assert_eq!(tool_msgs[1]["tool_call_id"], "call_b");
    assert!(
        tool_msgs[1]["content"]
            .as_str()
            .unwrap()
            .contains("src/lib.rs")
    );
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["tool_calls"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn text_protocol_runs_tool_call_blocks_and_hides_them() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&[
        "Let me list.\n<<<TOOL_CA",
        "LLS_JSON>>>[{\"id\":\"t1\",\"tool\":\"fs.list_dir\",\"args\":{\"path\":\".\"}}]",
        "<<<END_TOOL_CALLS_JSON>>>",
    ])));
    server.push(Reply::sse(anthropic::text_stream(&[
        "There is a src directory.",
    ])));
    let backend = Arc::new(
        AnthropicBackend::new(AnthropicConfig {
            base_url: server.url(),
            api_key: Some(ApiKey::new(KEY)),
            transport: fast(),
        })
        .unwrap(),
    );
    // The text protocol uses the runtime-contracts tool names.
    let store = north_agent::store::SessionStore::new(dir.path());
    let ctx = north_tools::ToolContext::new(dir.path().to_path_buf());
    let mut agent = north_agent::Agent::new(
        backend,
        north_tools::contracts_tools(),
        ctx,
        QueueApprover::new([]),
        store.create().unwrap(),
        Default::default(),
        opts("anthropic", ToolProtocol::Text),
    )
    .unwrap();
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let ev = events.clone();
    let end = agent
        .run_turn(
            "What is here?",
            &move |e| ev.lock().unwrap().push(e),
            &Default::default(),
        )
        .await;
    assert_eq!(end, TurnEnd::Done);
    let reqs = server.requests();
    let first = reqs[0].json();
    assert!(first.get("tools").is_none(), "no native tools in text mode");
    assert!(
        first["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("<<<TOOL_CALLS_JSON>>>")
    );
    let second = reqs[1].json();
    let last_user = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let result: Value =
        serde_json::from_str(last_user["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(result["id"], "t1");
    assert_eq!(result["tool"], "fs.list_dir");
    assert_eq!(result["ok"], true);
    let shown: String = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            north_protocol::Event::AssistantText { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(!shown.contains("TOOL_CALLS"), "{shown}");
    assert!(shown.contains("Let me list."));
}
