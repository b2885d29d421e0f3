//! Both HTTP providers against in-process servers speaking their wire
//! format: streaming, tool calls, usage and request shape (faults are in
//! `provider_faults.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_llm::{Backend, collect};
use north_protocol::{StopReason, StreamDelta};
use north_test_support::{FakeServer, Reply, anthropic, openai};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support;
use support::*;
#[tokio::test]
async fn streams_text_in_several_deltas() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(Reply::sse(p.text(&["Hel", "lo", " there"])));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        let texts = deltas
            .iter()
            .filter(|d| matches!(d, StreamDelta::Text { .. }))
            .count();
        assert_eq!(texts, 3, "{p:?}");
        assert_eq!(text_of(&deltas), "Hello there");
        assert!(matches!(
            deltas.last(),
            Some(StreamDelta::Usage(_)) | Some(StreamDelta::Stop { .. })
        ));
    }
}

#[tokio::test]
async fn tool_call_arguments_in_many_fragments_reassemble() {
    let frags = [
        "{\"pa",
        "th\"",
        ": \"src/",
        "ma",
        "in.rs\"",
        ", \"range\"",
        ": null}",
    ];
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let body = match p {
            P::Anthropic => anthropic::StreamBuilder::new()
                .text(&["Reading."])
                .tool_use("toolu_1", "read_file", &frags)
                .build(),
            P::OpenAi => openai::StreamBuilder::new()
                .text(&["Reading."])
                .tool_call(0, "call_1", "read_file", &frags)
                .build(),
        };
        server.push(Reply::sse(body).chunked(5));
        let resp = collect(
            p.backend(&server.url())
                .stream_chat(request(), CancellationToken::new()),
        )
        .await
        .unwrap();
        let calls = resp.tool_calls();
        assert_eq!(calls.len(), 1, "{p:?}");
        assert_eq!(calls[0].name, "read_file");
        assert_eq!(
            calls[0].arguments,
            json!({"path": "src/main.rs", "range": null})
        );
        assert_eq!(resp.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(resp.text(), "Reading.");
    }
}

#[tokio::test]
async fn two_tool_calls_in_one_response() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let body = match p {
            P::Anthropic => anthropic::StreamBuilder::new()
                .tool_use("toolu_a", "read_file", &["{\"path\":", "\"a.rs\"}"])
                .tool_use("toolu_b", "list_root", &["{}"])
                .build(),
            P::OpenAi => openai::StreamBuilder::new()
                .tool_call(0, "call_a", "read_file", &["{\"path\":", "\"a.rs\"}"])
                .tool_call(1, "call_b", "list_root", &["{}"])
                .build(),
        };
        server.push(Reply::sse(body));
        let resp = p.backend(&server.url()).chat_stream_collect().await;
        let names: Vec<_> = resp
            .tool_calls()
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        assert_eq!(names.len(), 2, "{p:?}");
        assert_eq!(names[0].1, "read_file");
        assert_eq!(names[1].1, "list_root");
        assert_eq!(resp.tool_calls()[0].arguments, json!({"path": "a.rs"}));
        assert_eq!(resp.tool_calls()[1].arguments, json!({}));
    }
}

trait CollectExt {
    async fn chat_stream_collect(&self) -> north_protocol::ChatResponse;
}
impl CollectExt for Box<dyn Backend> {
    async fn chat_stream_collect(&self) -> north_protocol::ChatResponse {
        collect(self.stream_chat(request(), CancellationToken::new()))
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn usage_is_reported_including_cache_tokens() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .text(&["ok"])
            .usage(100, 7, 2048, 512)
            .build(),
    ));
    let resp = P::Anthropic
        .backend(&server.url())
        .chat_stream_collect()
        .await;
    assert_eq!(resp.usage.input_tokens, 100);
    assert_eq!(resp.usage.output_tokens, 7);
    assert_eq!(resp.usage.cache_read_input_tokens, 2048);
    assert_eq!(resp.usage.cache_creation_input_tokens, 512);

    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        openai::StreamBuilder::new()
            .text(&["ok"])
            .usage(3000, 9, 2048)
            .build(),
    ));
    let resp = P::OpenAi.backend(&server.url()).chat_stream_collect().await;
    assert_eq!(resp.usage.input_tokens, 3000 - 2048);
    assert_eq!(resp.usage.cache_read_input_tokens, 2048);
    assert_eq!(resp.usage.output_tokens, 9);
}

#[tokio::test]
async fn anthropic_request_has_headers_caching_and_stream_flag() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    P::Anthropic
        .backend(&server.url())
        .chat_stream_collect()
        .await;
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    let body = req.json();
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["model"], json!("test-model"));
    assert_eq!(body["system"][0]["text"], json!("You are North."));
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["tools"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(body["tools"][0]["input_schema"]["type"], json!("object"));
    assert_eq!(body["messages"][0]["role"], json!("user"));
}

#[tokio::test]
async fn openai_request_asks_for_usage_and_sends_bearer() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&["ok"])));
    P::OpenAi.backend(&server.url()).chat_stream_collect().await;
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = req.json();
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are North."})
    );
    assert_eq!(body["tools"][0]["type"], json!("function"));
    assert_eq!(
        body["max_tokens"],
        json!(8192),
        "compatible servers get max_tokens"
    );
}

#[tokio::test]
async fn non_streaming_chat_works_for_both() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(200, anthropic::message_json("Plain answer.")));
    let resp = P::Anthropic
        .backend(&server.url())
        .chat(request())
        .await
        .unwrap();
    assert_eq!(resp.text(), "Plain answer.");
    assert_eq!(resp.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(server.requests()[0].json()["stream"], json!(false));

    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(200, openai::completion_json("Plain answer.")));
    let resp = P::OpenAi
        .backend(&server.url())
        .chat(request())
        .await
        .unwrap();
    assert_eq!(resp.text(), "Plain answer.");
    assert_eq!(resp.usage.output_tokens, 10);
}
