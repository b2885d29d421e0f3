//! One test per defect found against a real model server (issue 14), named
//! after what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, Backend, LlmError, OpenAiBackend, OpenAiConfig,
    ResponseError, RetryPolicy, TransportConfig, USER_AGENT, collect,
};
use north_protocol::{ChatRequest, ContentBlock, Message, Role, ToolCall};
use north_test_support::{FakeServer, Reply, anthropic, openai};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn no_retry() -> TransportConfig {
    TransportConfig {
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            max_retry_after: Duration::from_secs(1),
        },
        ..Default::default()
    }
}

fn openai_backend(server: &FakeServer, key: Option<&str>) -> OpenAiBackend {
    OpenAiBackend::new(OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        api_key: key.map(ApiKey::new),
        transport: no_retry(),
        api: None,
        ..Default::default()
    })
    .unwrap()
}

fn anthropic_backend(server: &FakeServer) -> AnthropicBackend {
    AnthropicBackend::new(AnthropicConfig {
        base_url: server.url(),
        api_key: Some(ApiKey::new("sk-ant-regression-key")),
        transport: no_retry(),
    })
    .unwrap()
}

/// What a model cut off by `max_tokens` inside a call's arguments leaves in
/// the history: the raw text, kept as a JSON string.
fn history_with_cut_call() -> Vec<Message> {
    vec![
        Message::user("Read the README"),
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolCall(ToolCall {
                id: "TJaSmGBiINjm20Tco3TTQtG9WyhPZT2A".into(),
                name: "read_file".into(),
                arguments: Value::String("{\n    \"path\": \"READ".into()),
            })],
        },
        Message {
            role: Role::Tool,
            content: vec![ContentBlock::ToolResult {
                call_id: "TJaSmGBiINjm20Tco3TTQtG9WyhPZT2A".into(),
                content: "{\"ok\":false}".into(),
                is_error: true,
            }],
        },
    ]
}

#[tokio::test]
async fn cut_off_tool_call_is_not_resent_as_invalid_json() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&["ok"])));
    let b = openai_backend(&server, None);
    collect(b.stream_chat(
        ChatRequest::new("smollm2", history_with_cut_call()),
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    let body = server.requests()[0].json();
    let args = body["messages"][1]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    let parsed: Value = serde_json::from_str(&args).expect("arguments sent back parse as JSON");
    assert_eq!(parsed, json!({"_raw": "{\n    \"path\": \"READ"}));
}

#[tokio::test]
async fn every_request_carries_a_user_agent() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&["ok"])));
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    let req = ChatRequest::new("m", vec![Message::user("hi")]);
    collect(openai_backend(&server, None).stream_chat(req.clone(), CancellationToken::new()))
        .await
        .unwrap();
    collect(anthropic_backend(&server).stream_chat(req, CancellationToken::new()))
        .await
        .unwrap();
    for r in server.requests() {
        assert_eq!(r.header("user-agent"), Some(USER_AGENT), "{}", r.path);
    }
    assert!(USER_AGENT.starts_with("north/"));
}

#[tokio::test]
async fn a_401_names_the_key_variable_that_was_used() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(
        401,
        anthropic::error_body("authentication_error", "invalid x-api-key"),
    ));
    server.push(Reply::json(
        401,
        openai::error_body("invalid_request_error", "Incorrect API key provided"),
    ));
    server.push(Reply::json(401, r#"{"error":"Unauthorized"}"#));
    let req = ChatRequest::new("m", vec![Message::user("hi")]);
    let a = collect(anthropic_backend(&server).stream_chat(req.clone(), CancellationToken::new()))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        a.contains("HTTP 401") && a.contains("the key in ANTHROPIC_API_KEY was rejected"),
        "{a}"
    );
    assert!(!a.contains("sk-ant-regression-key"));
    let o = collect(
        openai_backend(&server, Some("sk-o")).stream_chat(req.clone(), CancellationToken::new()),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(o.contains("the key in OPENAI_API_KEY was rejected"), "{o}");
    let none = collect(openai_backend(&server, None).stream_chat(req, CancellationToken::new()))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        none.contains("no key was sent; set OPENAI_API_KEY"),
        "{none}"
    );
}

#[tokio::test]
async fn a_malformed_complete_response_is_a_typed_error() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(200, r#"{"id":"chatcmpl-1","choices":[]}"#));
    let err = openai_backend(&server, None)
        .chat(ChatRequest::new("m", vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Decode { message, .. } if message.starts_with("response has no `choices`")),
        "{err}"
    );
    let typed = north_llm::openai::decode_response(&json!({"choices": [{}]})).unwrap_err();
    assert!(matches!(typed, ResponseError::Missing { field, .. } if field.contains("message")));
}
