//! Both HTTP providers against in-process servers injecting every transport
//! fault: retries, typed errors with partial output, stalls, cancellation,
//! and keys that never reach an error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, Backend, LlmError, OpenAiBackend, OpenAiConfig,
    collect,
};
use north_protocol::{StopReason, StreamDelta};
use north_test_support::{FakeServer, Fault, Reply, anthropic};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::*;
// ---------------------------------------------------------------- faults

#[tokio::test]
async fn status_429_with_retry_after_is_retried_and_succeeds() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(
            p.error(429, "rate_limit_error", "slow down")
                .header("retry-after", "0"),
        );
        server.push(Reply::sse(p.text(&["after retry"])));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        assert_eq!(text_of(&deltas), "after retry");
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn retry_after_longer_than_allowed_fails_at_once_with_the_status() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(
            p.error(429, "rate_limit_error", "slow down")
                .header("retry-after", "3600"),
        );
        let (_, err) = run(&*p.backend(&server.url())).await;
        match err {
            Some(LlmError::Api {
                status: 429,
                error_type,
                message,
                attempts: 1,
                ..
            }) => {
                assert_eq!(error_type.as_deref(), Some("rate_limit_error"));
                assert_eq!(message, "slow down");
            }
            other => panic!("{p:?}: {other:?}"),
        }
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn server_errors_500_and_529_are_retried() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(p.error(500, "api_error", "Internal server error"));
        server.push(p.error(529, "overloaded_error", "Overloaded"));
        server.push(p.error(503, "api_error", "unavailable"));
        server.push(Reply::sse(p.text(&["finally"])));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        assert_eq!(text_of(&deltas), "finally");
        assert_eq!(server.requests().len(), 4);
    }
}

#[tokio::test]
async fn retries_exhausted_end_in_a_typed_api_error() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        for _ in 0..4 {
            server.push(p.error(529, "overloaded_error", "Overloaded"));
        }
        let (_, err) = run(&*p.backend(&server.url())).await;
        let err = err.expect("error");
        match &err {
            LlmError::Api {
                status: 529,
                attempts: 4,
                ..
            } => {}
            other => panic!("{p:?}: {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("529") && msg.contains("overloaded_error") && msg.contains("4 attempts"),
            "{msg}"
        );
    }
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(p.error(400, "invalid_request_error", "max_tokens: must be positive"));
        let (_, err) = run(&*p.backend(&server.url())).await;
        assert!(
            matches!(
                err,
                Some(LlmError::Api {
                    status: 400,
                    attempts: 1,
                    ..
                })
            ),
            "{p:?}: {err:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn status_408_and_409_are_retried() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(p.error(408, "timeout", "request timeout"));
        server.push(p.error(409, "conflict", "conflict"));
        server.push(Reply::sse(p.text(&["ok"])));
        let (_, err) = run(&*p.backend(&server.url())).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        assert_eq!(server.requests().len(), 3);
    }
}

#[tokio::test]
async fn connection_reset_before_the_first_byte_is_retried() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(Reply::reset());
        server.push(Reply::sse(p.text(&["recovered"])));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        assert_eq!(text_of(&deltas), "recovered");
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn reset_after_first_byte_but_before_output_is_retried() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let body = p.text(&["never seen"]);
        server.push(Reply::sse(body).with_fault(Fault::ResetAfter(10)));
        server.push(Reply::sse(p.text(&["second try"])));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        assert_eq!(
            text_of(&deltas),
            "second try",
            "no duplicate output from the first attempt"
        );
        assert_eq!(
            deltas
                .iter()
                .filter(|d| matches!(d, StreamDelta::Start { .. }))
                .count(),
            1,
            "{p:?}: one start only"
        );
    }
}

#[tokio::test]
async fn reset_after_output_is_a_typed_error_with_partial_text_and_no_retry() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let (body, cut) = p.text_then_more();
        server.push(Reply::sse(body).with_fault(Fault::ResetAfter(cut)));
        server.push(Reply::sse(p.text(&["must not be used"])));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert_eq!(text_of(&deltas), "Hello");
        match err {
            Some(LlmError::StreamInterrupted { partial, .. }) => {
                assert_eq!(partial.text, "Hello");
                if matches!(p, P::Anthropic) {
                    // Anthropic reports input usage up front; OpenAI only at the end.
                    assert!(partial.usage.input_tokens > 0, "usage so far is kept");
                }
            }
            other => panic!("{p:?}: {other:?}"),
        }
        assert_eq!(server.requests().len(), 1, "{p:?}: no retry after output");
    }
}

#[tokio::test]
async fn stream_cut_between_events_is_a_typed_error_with_partial_text() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let (body, cut) = p.text_then_more();
        server.push(Reply::sse(body).with_fault(Fault::CutAfter(cut)));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert_eq!(text_of(&deltas), "Hello");
        let err = err.expect("error");
        assert_eq!(err.partial().unwrap().text, "Hello", "{p:?}");
        assert!(
            matches!(err, LlmError::StreamInterrupted { .. }),
            "{p:?}: {err:?}"
        );
        assert!(err.to_string().contains("after 5 chars"), "{err}");
    }
}

#[tokio::test]
async fn malformed_json_in_a_data_line_is_a_decode_error_with_partial_text() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let (body, cut) = p.text_then_more();
        let mut bad = body[..cut].to_vec();
        bad.extend_from_slice(
            b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"ty\n\n",
        );
        bad.extend_from_slice(&body[cut..]);
        server.push(Reply::sse(bad));
        let (deltas, err) = run(&*p.backend(&server.url())).await;
        assert_eq!(text_of(&deltas), "Hello");
        match err {
            Some(LlmError::Decode {
                message, partial, ..
            }) => {
                assert!(message.contains("invalid JSON"), "{message}");
                assert_eq!(partial.text, "Hello");
            }
            other => panic!("{p:?}: {other:?}"),
        }
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn idle_stall_times_out_with_partial_text() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let (body, cut) = p.text_then_more();
        server.push(Reply::sse(body).with_fault(Fault::StallAfter(cut)));
        let backend = p.backend_with(&server.url(), transport(150, 3));
        let (deltas, err) = run(&*backend).await;
        assert_eq!(text_of(&deltas), "Hello");
        match err {
            Some(LlmError::IdleTimeout { partial, .. }) => assert_eq!(partial.text, "Hello"),
            other => panic!("{p:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn idle_stall_before_output_is_retried() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(Reply::sse(p.text(&["x"])).with_fault(Fault::StallAfter(0)));
        server.push(Reply::sse(p.text(&["fresh"])));
        let backend = p.backend_with(&server.url(), transport(150, 3));
        let (deltas, err) = run(&*backend).await;
        assert!(err.is_none(), "{p:?}: {err:?}");
        assert_eq!(text_of(&deltas), "fresh");
    }
}

#[tokio::test]
async fn anthropic_overloaded_error_event_mid_stream_carries_partial_output() {
    let server = FakeServer::start().await.unwrap();
    let body = anthropic::StreamBuilder::new()
        .text(&["Partial", " answer"])
        .build_with_error("overloaded_error", "Overloaded");
    server.push(Reply::sse(body));
    let (deltas, err) = run(&*P::Anthropic.backend(&server.url())).await;
    assert_eq!(text_of(&deltas), "Partial answer");
    match err {
        Some(LlmError::StreamError {
            error_type,
            message,
            partial,
            ..
        }) => {
            assert_eq!(error_type, "overloaded_error");
            assert_eq!(message, "Overloaded");
            assert_eq!(partial.text, "Partial answer");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_overloaded_error_event_before_output_is_retried() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new().build_with_error("overloaded_error", "Overloaded"),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    let (deltas, err) = run(&*P::Anthropic.backend(&server.url())).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&deltas), "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn openai_error_object_mid_stream_is_a_stream_error() {
    let server = FakeServer::start().await.unwrap();
    let (body, cut) = P::OpenAi.text_then_more();
    let mut b = body[..cut].to_vec();
    b.extend_from_slice(b"data: {\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\",\"code\":500}}\n\n");
    server.push(Reply::sse(b));
    let (_, err) = run(&*P::OpenAi.backend(&server.url())).await;
    match err {
        Some(LlmError::StreamError {
            error_type,
            message,
            partial,
            ..
        }) => {
            assert_eq!(error_type, "server_error");
            assert_eq!(message, "model crashed");
            assert_eq!(partial.text, "Hello");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn cancellation_stops_a_stalled_stream_at_once() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        let (body, cut) = p.text_then_more();
        server.push(Reply::sse(body).with_fault(Fault::StallAfter(cut)));
        // A long idle timeout: only cancellation can end this.
        let backend = p.backend_with(&server.url(), transport(600_000, 0));
        let cancel = CancellationToken::new();
        let mut s = backend.stream_chat(request(), cancel.clone());
        let mut text = String::new();
        let err = loop {
            match s.next().await {
                Some(Ok(StreamDelta::Text { text: t })) => {
                    text.push_str(&t);
                    cancel.cancel();
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => break e,
                None => panic!("{p:?}: stream ended without error"),
            }
        };
        assert!(err.is_cancelled(), "{p:?}: {err:?}");
        assert_eq!(err.partial().unwrap().text, "Hello");
        assert_eq!(text, "Hello");
    }
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // Bind and drop a listener to get a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for p in BOTH {
        let (_, err) =
            run(&*p.backend_with(&format!("http://127.0.0.1:{port}"), transport(1000, 2))).await;
        match err {
            Some(e) if matches!(e, LlmError::Connection { attempts: 3, .. }) => {
                let LlmError::Connection { message, .. } = &e else {
                    unreachable!()
                };
                assert!(
                    !message.contains("127.0.0.1:"),
                    "the URL is named once, not in the cause: {message}"
                );
                let shown = e.to_string();
                assert!(
                    shown.contains(&format!("cannot reach http://127.0.0.1:{port}/")),
                    "the error names the URL: {shown}"
                );
            }
            other => panic!("{p:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn openai_compatible_server_quirks_are_accepted() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(north_test_support::fixture(
        "openai/ollama_compat.sse",
    )));
    let backend = OpenAiBackend::new(OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        api_key: None, // local servers need no key
        transport: transport(2000, 0),
        api: None,
        ..Default::default()
    })
    .unwrap();
    let resp = collect(backend.stream_chat(request(), CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(resp.text(), "Checking.");
    let calls = resp.tool_calls();
    assert_eq!(calls[0].id, "hq9l2kzs");
    assert_eq!(calls[0].name, "list_root");
    assert_eq!(
        resp.stop_reason,
        Some(StopReason::ToolUse),
        "stop after tool calls means tool use"
    );
    assert_eq!(resp.usage.input_tokens, 88);
    assert!(server.requests()[0].header("authorization").is_none());
}

#[tokio::test]
async fn openai_shaped_errors_from_other_servers_are_read() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(
        404,
        r#"{"error":"model 'llama9' not found, try pulling it first"}"#,
    ));
    let backend = OpenAiBackend::new(OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        api_key: None,
        transport: transport(2000, 0),
        api: None,
        ..Default::default()
    })
    .unwrap();
    let (_, err) = run(&backend).await;
    let msg = err.unwrap().to_string();
    assert!(
        msg.contains("HTTP 404") && msg.contains("model 'llama9' not found"),
        "{msg}"
    );
}

#[test]
fn missing_key_errors_name_the_variable() {
    let err = AnthropicBackend::new(AnthropicConfig::default()).unwrap_err();
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"));
    let err = OpenAiBackend::new(OpenAiConfig::default()).unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"));
}

#[tokio::test]
async fn keys_never_appear_in_errors_even_when_the_server_echoes_them() {
    for p in BOTH {
        let server = FakeServer::start().await.unwrap();
        server.push(p.error(
            401,
            "authentication_error",
            &format!("invalid x-api-key: {KEY}"),
        ));
        let (_, err) = run(&*p.backend(&server.url())).await;
        let err = err.unwrap();
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains(KEY), "{p:?}: key leaked: {shown}");
        assert!(shown.contains("[REDACTED]"));
    }
    let cfg = AnthropicConfig {
        api_key: Some(ApiKey::new(KEY)),
        ..Default::default()
    };
    assert!(!format!("{cfg:?}").contains(KEY));
    let b = AnthropicBackend::new(cfg).unwrap();
    assert!(!format!("{b:?}").contains(KEY));
    let cfg = OpenAiConfig {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: Some(ApiKey::new(KEY)),
        transport: Default::default(),
        api: None,
        ..Default::default()
    };
    assert!(!format!("{cfg:?}").contains(KEY));
    let b = OpenAiBackend::new(cfg).unwrap();
    let shown = format!("{b:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(
        shown.contains("127.0.0.1:9"),
        "the debug form still says where it goes: {shown}"
    );
}
