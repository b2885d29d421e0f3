//! The scripted backend replays turns as a real stream and records requests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use north_llm::{Backend, LlmError, ScriptedBackend, collect};
use north_protocol::{ChatRequest, Message, StopReason, StreamDelta};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn req(text: &str) -> ChatRequest {
    ChatRequest::new("scripted-model", vec![Message::user(text)])
}

const SCRIPT: &str = r#"{"turns": [
  {"text": "Let me read the README first, then answer.", "tool_calls": [{"id": "t1", "name": "read_file", "args": {"path": "README.md", "range": {"start": 1, "end": 40}}}]},
  {"text": "Done.", "usage": {"input_tokens": 120, "output_tokens": 8}}
]}"#;

#[tokio::test]
async fn text_streams_in_several_deltas_and_args_in_fragments() {
    let b = ScriptedBackend::from_json(SCRIPT).unwrap();
    let mut s = b.stream_chat(req("hi"), CancellationToken::new());
    let mut deltas = Vec::new();
    while let Some(d) = s.next().await {
        deltas.push(d.unwrap());
    }
    let texts = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::Text { .. }))
        .count();
    let frags = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::ToolCallArgs { .. }))
        .count();
    assert!(texts >= 3, "text in several deltas, got {texts}");
    assert!(frags >= 5, "args in fragments, got {frags}");
    let mut builder = north_llm::ResponseBuilder::new();
    deltas.iter().for_each(|d| builder.push(d));
    let r = builder.finish();
    assert_eq!(r.text(), "Let me read the README first, then answer.");
    assert_eq!(
        r.tool_calls()[0].arguments,
        json!({"path": "README.md", "range": {"start": 1, "end": 40}})
    );
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));

    let r2 = b.chat(req("again")).await.unwrap();
    assert_eq!(r2.text(), "Done.");
    assert_eq!(r2.usage.input_tokens, 120);
    assert_eq!(r2.stop_reason, Some(StopReason::EndTurn));
}

#[tokio::test]
async fn exhausted_script_is_a_clear_error() {
    let b = ScriptedBackend::from_json(r#"[{"text": "only one"}]"#).unwrap();
    collect(b.stream_chat(req("1"), CancellationToken::new()))
        .await
        .unwrap();
    let err = collect(b.stream_chat(req("2"), CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("exhausted: request 2"), "{err}");
}

#[tokio::test]
async fn records_every_request_as_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.jsonl");
    let b = ScriptedBackend::from_json(SCRIPT)
        .unwrap()
        .record_to(&path)
        .unwrap();
    collect(b.stream_chat(req("first"), CancellationToken::new()))
        .await
        .unwrap();
    collect(b.stream_chat(req("second"), CancellationToken::new()))
        .await
        .unwrap();
    let lines: Vec<ChatRequest> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].messages[0].text_content(), "second");
}

#[tokio::test]
async fn error_turn_streams_text_then_fails_like_a_provider() {
    let b = ScriptedBackend::from_json(r#"[{"text": "Half an answer", "error": {"type": "overloaded_error", "message": "Overloaded"}}]"#).unwrap();
    let err = collect(b.stream_chat(req("x"), CancellationToken::new()))
        .await
        .unwrap_err();
    match err {
        LlmError::StreamError {
            error_type,
            partial,
            ..
        } => {
            assert_eq!(error_type, "overloaded_error");
            assert_eq!(partial.text, "Half an answer");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn cancellation_ends_the_stream_with_partial_text() {
    let b = ScriptedBackend::from_json(
        r#"[{"text": "one two three four five six seven eight nine ten"}]"#,
    )
    .unwrap();
    let cancel = CancellationToken::new();
    let mut s = b.stream_chat(req("x"), cancel.clone());
    let mut seen = String::new();
    let err = loop {
        match s.next().await.unwrap() {
            Ok(StreamDelta::Text { text }) => {
                seen.push_str(&text);
                cancel.cancel();
            }
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert!(err.is_cancelled());
    assert_eq!(err.partial().unwrap().text, seen);
    assert!(s.next().await.is_none());
}

#[test]
fn invalid_scripts_are_rejected_with_the_reason() {
    let err = ScriptedBackend::from_json(r#"{"turns": [{"txt": "typo"}]}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `txt`"), "{err}");
    let err =
        ScriptedBackend::from_file(std::path::Path::new("/nonexistent/script.json")).unwrap_err();
    assert!(err.to_string().contains("cannot read script"), "{err}");
}
