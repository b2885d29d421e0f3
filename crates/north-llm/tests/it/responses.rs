//! The OpenAI Responses API against a request-capturing fake server: the
//! request's exact shape, streamed text, function calls, reasoning items
//! carried across a tool loop with `store: false`, and errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use north_llm::{
    ApiKey, Backend, LlmError, OpenAiApi, OpenAiBackend, OpenAiConfig, RetryPolicy,
    TransportConfig, USER_AGENT, collect,
};
use north_protocol::{
    ChatRequest, ContentBlock, Message, ReasoningEffort, Role, StopReason, StreamDelta, ToolSpec,
};
use north_test_support::{FakeServer, Reply, responses};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-NORTHFAKEKEY-0123456789";

fn backend(server: &FakeServer) -> OpenAiBackend {
    OpenAiBackend::new(OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        api_key: Some(ApiKey::new(KEY)),
        transport: TransportConfig {
            retry: RetryPolicy {
                max_retries: 1,
                base_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(2),
                max_retry_after: Duration::from_secs(1),
            },
            ..Default::default()
        },
        api: Some(OpenAiApi::Responses),
        ..Default::default()
    })
    .unwrap()
}

fn request(model: &str, messages: Vec<Message>) -> ChatRequest {
    let mut r = ChatRequest::new(model, messages);
    r.system = Some("You are North.".into());
    r.max_tokens = 4096;
    r.tools.push(ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type":"object","properties":{"path":{"type":"string"}}}),
        approval: Default::default(),
    });
    r
}

async fn deltas(b: &OpenAiBackend, req: ChatRequest) -> (Vec<StreamDelta>, Option<LlmError>) {
    let mut s = b.stream_chat(req, CancellationToken::new());
    let mut out = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(d) => out.push(d),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

#[test]
fn the_default_api_is_responses_for_openai_and_chat_elsewhere() {
    assert_eq!(
        OpenAiApi::default_for("https://api.openai.com/v1"),
        OpenAiApi::Responses
    );
    assert_eq!(
        OpenAiApi::default_for("http://localhost:11434/v1"),
        OpenAiApi::Chat
    );
    assert_eq!("chat".parse::<OpenAiApi>().unwrap(), OpenAiApi::Chat);
    assert!("completions".parse::<OpenAiApi>().is_err());
}

#[tokio::test]
async fn streams_text_and_sends_a_stateless_request() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new()
            .text(&["Hello", " there."])
            .usage(120, 9, 100, 0)
            .build(),
    ));
    let b = backend(&server);
    let mut req = request("gpt-5.2", vec![Message::user("hi")]);
    req.reasoning = Some(ReasoningEffort::Low);
    let (ds, err) = deltas(&b, req).await;
    assert!(err.is_none(), "{err:?}");
    let resp = {
        let mut builder = north_llm::ResponseBuilder::new();
        ds.iter().for_each(|d| builder.push(d));
        builder.finish()
    };
    assert_eq!(resp.text(), "Hello there.");
    assert_eq!(resp.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        resp.usage.input_tokens, 20,
        "cached tokens are reported apart"
    );
    assert_eq!(resp.usage.cache_read_input_tokens, 100);
    let texts = ds
        .iter()
        .filter(|d| matches!(d, StreamDelta::Text { .. }))
        .count();
    assert_eq!(texts, 2, "text arrives as it streams");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("user-agent"), Some(USER_AGENT));
    assert_eq!(
        r.json(),
        json!({
            "model": "gpt-5.2",
            "instructions": "You are North.",
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
            "tools": [{"type": "function", "name": "read_file", "description": "Read a file",
                "parameters": {"type":"object","properties":{"path":{"type":"string"}}}, "strict": false}],
            "max_output_tokens": 4096,
            "store": false,
            "reasoning": {"effort": "low", "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
            "stream": true
        })
    );
}

#[tokio::test]
async fn non_reasoning_models_get_no_reasoning_parameters() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(responses::text_stream(&["ok"])));
    let b = backend(&server);
    let mut req = request("gpt-4.1", vec![Message::user("hi")]);
    req.reasoning = Some(ReasoningEffort::High);
    let (_, err) = deltas(&b, req).await;
    assert!(err.is_none());
    let body = server.requests()[0].json();
    assert!(
        body.get("reasoning").is_none() && body.get("include").is_none(),
        "{body}"
    );
}

#[tokio::test]
async fn reasoning_items_are_carried_across_a_tool_loop() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new()
            .reasoning(
                "rs_6876cf02e0bc8192b74af0fb64b715ff",
                &["**Finding the file**", "It is in src."],
                "gAAAAABoeM8E-ENCRYPTED",
            )
            .function_call(
                "call_FzxHHYMkGTDMZfxb5Qad1Hcf",
                "read_file",
                &["{\"path\":", "\"src/main.rs\"}"],
            )
            .usage(300, 80, 0, 64)
            .build(),
    ));
    server.push(Reply::sse(responses::text_stream(&["It prints hello."])));
    let b = backend(&server);
    let first = request("gpt-5.2", vec![Message::user("What does main do?")]);
    let (ds, err) = deltas(&b, first.clone()).await;
    assert!(err.is_none(), "{err:?}");
    let thinking: String = ds
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Thinking { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        thinking, "**Finding the file**\n\nIt is in src.",
        "the summary is shown as it streams"
    );
    let mut builder = north_llm::ResponseBuilder::new();
    ds.iter().for_each(|d| builder.push(d));
    let resp = builder.finish();
    assert_eq!(resp.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(resp.usage.reasoning_tokens, 64);
    assert_eq!(
        resp.content[0],
        ContentBlock::Reasoning {
            id: "rs_6876cf02e0bc8192b74af0fb64b715ff".into(),
            summary: vec!["**Finding the file**".into(), "It is in src.".into()],
            encrypted_content: Some("gAAAAABoeM8E-ENCRYPTED".into()),
        },
        "the streamed summary becomes one reasoning item"
    );
    let call = resp.tool_calls()[0].clone();
    assert_eq!(call.id, "call_FzxHHYMkGTDMZfxb5Qad1Hcf");
    assert_eq!(call.arguments, json!({"path": "src/main.rs"}));

    let mut second = first;
    second.messages.push(Message {
        role: Role::Assistant,
        content: resp.content.clone(),
    });
    second.messages.push(Message {
        role: Role::Tool,
        content: vec![ContentBlock::ToolResult {
            call_id: call.id.clone(),
            content: "{\"ok\":true}".into(),
            is_error: false,
        }],
    });
    let answer = collect(b.stream_chat(second, CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(answer.text(), "It prints hello.");
    let input = server.requests()[1].json()["input"].clone();
    assert_eq!(
        input,
        json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What does main do?"}]},
            {"type": "reasoning", "summary": [
                {"type": "summary_text", "text": "**Finding the file**"},
                {"type": "summary_text", "text": "It is in src."}],
             "encrypted_content": "gAAAAABoeM8E-ENCRYPTED"},
            {"type": "function_call", "call_id": "call_FzxHHYMkGTDMZfxb5Qad1Hcf", "name": "read_file",
             "arguments": "{\"path\":\"src/main.rs\"}"},
            {"type": "function_call_output", "call_id": "call_FzxHHYMkGTDMZfxb5Qad1Hcf", "output": "{\"ok\":true}"}
        ]),
        "reasoning goes back without its id (nothing is stored), before its call"
    );
}

#[tokio::test]
async fn another_providers_thinking_is_not_sent() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(responses::text_stream(&["ok"])));
    let b = backend(&server);
    let req = request(
        "gpt-5.2",
        vec![
            Message::user("a"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking {
                        thinking: "claude thought".into(),
                        signature: Some("sig".into()),
                    },
                    ContentBlock::RedactedThinking { data: "x".into() },
                    ContentBlock::text("answer"),
                ],
            },
            Message::user("b"),
        ],
    );
    collect(b.stream_chat(req, CancellationToken::new()))
        .await
        .unwrap();
    let input = server.requests()[0].json()["input"].clone();
    assert_eq!(input.as_array().unwrap().len(), 3, "{input}");
    assert_eq!(
        input[1],
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "answer"}]})
    );
}

#[tokio::test]
async fn an_incomplete_response_stops_at_max_tokens() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new()
            .text(&["Half an ans"])
            .incomplete("max_output_tokens")
            .build(),
    ));
    let b = backend(&server);
    let resp = collect(b.stream_chat(
        request("gpt-5.2", vec![Message::user("hi")]),
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert_eq!(resp.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(resp.text(), "Half an ans");
}

#[tokio::test]
async fn a_failed_response_is_a_stream_error_with_the_partial_text() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new()
            .text(&["Partial"])
            .build_failed("server_error", "The model failed."),
    ));
    let b = backend(&server);
    let err = collect(b.stream_chat(
        request("gpt-5.2", vec![Message::user("hi")]),
        CancellationToken::new(),
    ))
    .await
    .unwrap_err();
    match &err {
        LlmError::StreamError {
            error_type,
            message,
            partial,
            ..
        } => {
            assert_eq!(error_type, "server_error");
            assert_eq!(message, "The model failed.");
            assert_eq!(partial.text, "Partial");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_error_event_before_output_is_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new().build_with_error("rate_limit_exceeded", "Slow down."),
    ));
    server.push(Reply::sse(responses::text_stream(&["Recovered."])));
    let b = backend(&server);
    let resp = collect(b.stream_chat(
        request("gpt-5.2", vec![Message::user("hi")]),
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert_eq!(resp.text(), "Recovered.");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn http_errors_read_the_openai_error_body() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(
        400,
        responses::error_body(
            "invalid_request_error",
            "Unsupported parameter: 'temperature'.",
        ),
    ));
    let b = backend(&server);
    let err = collect(b.stream_chat(
        request("gpt-5.2", vec![Message::user("hi")]),
        CancellationToken::new(),
    ))
    .await
    .unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.contains("HTTP 400 invalid_request_error") && shown.contains("Unsupported parameter"),
        "{shown}"
    );
}

#[tokio::test]
async fn non_streaming_responses_decode_items() {
    let server = FakeServer::start().await.unwrap();
    let built = responses::StreamBuilder::new()
        .reasoning("rs_1", &["Thinking."], "enc")
        .function_call("call_1", "read_file", &["{\"path\":\"a\"}"]);
    server.push(Reply::json(200, built.response_json()));
    let b = backend(&server);
    let resp = b
        .chat(request("gpt-5.2", vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(resp.stop_reason, Some(StopReason::ToolUse));
    assert!(
        matches!(&resp.content[0], ContentBlock::Reasoning { encrypted_content: Some(e), .. } if e == "enc")
    );
    assert_eq!(resp.tool_calls()[0].arguments, json!({"path": "a"}));
    assert_eq!(server.requests()[0].json()["stream"], false);
}
