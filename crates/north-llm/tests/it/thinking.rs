//! Anthropic extended thinking against a request-capturing fake server:
//! thinking shown as it streams, its tokens counted, and thinking plus
//! redacted_thinking passed back unchanged (signatures included) in a tool
//! loop — the API refuses a tool turn that lost them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use north_llm::{AnthropicBackend, AnthropicConfig, ApiKey, Backend, ResponseBuilder, collect};
use north_protocol::{
    ChatRequest, ContentBlock, Message, ReasoningEffort, Role, StreamDelta, ToolCall, ToolSpec,
};
use north_test_support::{FakeServer, Reply, anthropic};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-ant-test-NORTHFAKEKEY-0123456789";
const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const REDACTED: &str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

fn backend(server: &FakeServer) -> AnthropicBackend {
    AnthropicBackend::new(AnthropicConfig {
        base_url: server.url(),
        api_key: Some(ApiKey::new(KEY)),
        ..Default::default()
    })
    .unwrap()
}

fn request(messages: Vec<Message>) -> ChatRequest {
    let mut r = ChatRequest::new("claude-sonnet-4-5", messages);
    r.max_tokens = 16_000;
    r.reasoning = Some(ReasoningEffort::Medium);
    r.temperature = Some(0.2);
    r.tools.push(ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type":"object"}),
        approval: Default::default(),
    });
    r
}

#[tokio::test]
async fn thinking_streams_as_its_own_kind_and_its_tokens_are_counted() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .thinking(&["Let me find ", "the main file."], SIGNATURE)
            .text(&["Found it."])
            .usage(50, 40, 0, 0)
            .build(),
    ));
    let b = backend(&server);
    let mut s = b.stream_chat(request(vec![Message::user("hi")]), CancellationToken::new());
    let mut ds = Vec::new();
    while let Some(d) = s.next().await {
        ds.push(d.unwrap());
    }
    let thinking: Vec<&str> = ds
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Thinking { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, ["Let me find ", "the main file."]);
    let mut builder = ResponseBuilder::new();
    ds.iter().for_each(|d| builder.push(d));
    let resp = builder.finish();
    assert_eq!(resp.text(), "Found it.", "thinking is never answer text");
    assert_eq!(resp.usage.output_tokens, 40);
    assert_eq!(
        resp.usage.reasoning_tokens, 7,
        "26 bytes of thinking, about 7 tokens"
    );

    let body = server.requests()[0].json();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    assert!(
        body.get("temperature").is_none(),
        "thinking allows only the default temperature"
    );
}

#[tokio::test]
async fn thinking_and_redacted_thinking_go_back_unchanged_in_a_tool_loop() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .thinking(&["I should read ", "main.rs first."], SIGNATURE)
            .redacted_thinking(REDACTED)
            .tool_use("toolu_01", "read_file", &["{\"path\": \"src/main.rs\"}"])
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["It prints hello."])));
    let b = backend(&server);
    let first = request(vec![Message::user("What does main do?")]);
    let resp = collect(b.stream_chat(first.clone(), CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(
        resp.content,
        vec![
            ContentBlock::Thinking {
                thinking: "I should read main.rs first.".into(),
                signature: Some(SIGNATURE.into()),
            },
            ContentBlock::RedactedThinking {
                data: REDACTED.into()
            },
            ContentBlock::ToolCall(ToolCall {
                id: "toolu_01".into(),
                name: "read_file".into(),
                arguments: json!({"path": "src/main.rs"}),
            }),
        ]
    );
    let mut second = first;
    second.messages.push(Message {
        role: Role::Assistant,
        content: resp.content,
    });
    second.messages.push(Message {
        role: Role::Tool,
        content: vec![ContentBlock::ToolResult {
            call_id: "toolu_01".into(),
            content: "fn main() {}".into(),
            is_error: false,
        }],
    });
    collect(b.stream_chat(second, CancellationToken::new()))
        .await
        .unwrap();
    let messages = server.requests()[1].json()["messages"].clone();
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should read main.rs first.", "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "src/main.rs"}}
        ]})
    );
    assert_eq!(
        messages[2]["content"][0]["tool_use_id"], "toolu_01",
        "the result follows, with the cache breakpoint on it"
    );
    assert_eq!(
        messages[2]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[tokio::test]
async fn reasoning_of_other_providers_and_unsigned_thinking_are_not_sent() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    let b = backend(&server);
    let mut req = request(vec![
        Message::user("a"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Reasoning {
                    id: "rs_1".into(),
                    summary: vec!["s".into()],
                    encrypted_content: Some("enc".into()),
                },
                ContentBlock::Thinking {
                    thinking: "cut before its signature".into(),
                    signature: None,
                },
                ContentBlock::text("answer"),
            ],
        },
        Message::user("b"),
    ]);
    req.reasoning = None;
    collect(b.stream_chat(req, CancellationToken::new()))
        .await
        .unwrap();
    let body = server.requests()[0].json();
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "answer"}]})
    );
    assert!(
        body.get("thinking").is_none(),
        "thinking stays off unless asked"
    );
}

#[tokio::test]
async fn non_streaming_responses_keep_thinking_blocks() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(
        200,
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Hmm.", "signature": SIGNATURE},
                {"type": "redacted_thinking", "data": REDACTED},
                {"type": "text", "text": "Done."}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 9}})
        .to_string(),
    ));
    let resp = backend(&server)
        .chat(request(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(resp.content.len(), 3);
    assert!(resp.content[..2].iter().all(ContentBlock::is_reasoning));
    assert_eq!(resp.text(), "Done.");
}
