//! Serde forms of the protocol types are stable and round-trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_protocol::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn roundtrip<T>(value: &T) -> serde_json::Value
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_value(value).unwrap();
    let back: T = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(&back, value);
    json
}

#[test]
fn messages_round_trip_with_tagged_blocks() {
    let msg = Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::text("hi"),
            ContentBlock::ToolCall(ToolCall {
                id: "t1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "a.rs"}),
            }),
        ],
    };
    let json = roundtrip(&msg);
    assert_eq!(
        json,
        json!({"role":"assistant","content":[
            {"type":"text","text":"hi"},
            {"type":"tool_call","id":"t1","name":"read_file","arguments":{"path":"a.rs"}}
        ]})
    );
    let result = Message {
        role: Role::Tool,
        content: vec![ContentBlock::ToolResult {
            call_id: "t1".into(),
            content: "{}".into(),
            is_error: true,
        }],
    };
    roundtrip(&result);
}

#[test]
fn events_serialize_as_one_tagged_object() {
    let ev = Event::ToolIntent {
        call_id: "t1".into(),
        tool: "search_text".into(),
        line: "Searching: `foo` in `src/`".into(),
        kind: north_protocol::ToolKind::Search,
    };
    assert_eq!(
        roundtrip(&ev),
        json!({"type":"tool_intent","call_id":"t1","tool":"search_text","line":"Searching: `foo` in `src/`","kind":"search"})
    );
    roundtrip(&Event::TurnEnd {
        stop_reason: Some(StopReason::Other("weird".into())),
        usage: Usage::default(),
    });
    roundtrip(&Event::ApprovalDecided {
        call_id: "x".into(),
        decision: ApprovalDecision::Always,
    });
}

#[test]
fn deltas_and_requests_round_trip() {
    for d in [
        StreamDelta::Start {
            id: Some("m".into()),
            model: None,
        },
        StreamDelta::Text { text: "a".into() },
        StreamDelta::ToolCallStart {
            index: 0,
            id: "c".into(),
            name: "n".into(),
        },
        StreamDelta::ToolCallArgs {
            index: 0,
            fragment: "{\"a\"".into(),
        },
        StreamDelta::ToolCallEnd { index: 0 },
        StreamDelta::Usage(Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_input_tokens: 3,
            cache_creation_input_tokens: 4,
            reasoning_tokens: 1,
        }),
        StreamDelta::Thinking { text: "hm".into() },
        StreamDelta::ThinkingSignature {
            signature: "sig".into(),
        },
        StreamDelta::RedactedThinking { data: "enc".into() },
        StreamDelta::Reasoning {
            id: "rs_1".into(),
            summary: vec!["s".into()],
            encrypted_content: Some("enc".into()),
        },
        StreamDelta::Stop {
            reason: StopReason::ToolUse,
            stop_sequence: None,
        },
    ] {
        roundtrip(&d);
    }
    let mut req = ChatRequest::new("m", vec![Message::user("hi")]);
    req.tools.push(ToolSpec {
        name: "t".into(),
        description: "d".into(),
        input_schema: json!({"type":"object"}),
        approval: ApprovalPolicy::Shell,
    });
    roundtrip(&req);
}

#[test]
fn state_defaults_missing_fields_and_checkpoint_round_trips() {
    let state: State = serde_json::from_value(json!({"goals":["g"]})).unwrap();
    assert_eq!(state.goals, vec!["g".to_string()]);
    assert!(state.capabilities_granted.is_empty());
    let cp = Checkpoint {
        session_id: "s".into(),
        revision: 3,
        updated_ts: 1.5,
        state,
        recent_messages: vec![ChatMessage {
            role: Role::User,
            content: "x".into(),
        }],
        trace_tail: vec![],
        messages: vec![Message::user("x")],
        model: Some(ModelRef {
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
        }),
        usage: Some(Usage {
            input_tokens: 10,
            output_tokens: 2,
            ..Default::default()
        }),
    };
    roundtrip(&cp);
    roundtrip(&TraceEvent {
        ts: 1.0,
        kind: TraceKind::LlmReq,
        data: json!({}),
    });
}

#[test]
fn usage_merge_keeps_latest_nonzero() {
    let mut u = Usage {
        input_tokens: 10,
        output_tokens: 1,
        ..Default::default()
    };
    u.merge_latest(&Usage {
        output_tokens: 7,
        ..Default::default()
    });
    assert_eq!(u.input_tokens, 10);
    assert_eq!(u.output_tokens, 7);
    assert_eq!(u.total(), 17);
}

#[test]
fn reasoning_blocks_have_stable_wire_names() {
    let msg = Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::Thinking {
                thinking: "Let me think.".into(),
                signature: Some("sig==".into()),
            },
            ContentBlock::RedactedThinking {
                data: "EmwKAhgB".into(),
            },
            ContentBlock::Reasoning {
                id: "rs_1".into(),
                summary: vec!["Planning".into()],
                encrypted_content: Some("gAAAA".into()),
            },
        ],
    };
    assert_eq!(
        roundtrip(&msg)["content"],
        json!([
            {"type":"thinking","thinking":"Let me think.","signature":"sig=="},
            {"type":"redacted_thinking","data":"EmwKAhgB"},
            {"type":"reasoning","id":"rs_1","summary":["Planning"],"encrypted_content":"gAAAA"}
        ])
    );
    assert!(msg.content.iter().all(ContentBlock::is_reasoning));
}

#[test]
fn checkpoints_written_before_reasoning_and_model_fields_still_load() {
    let old = json!({
        "session_id": "s", "revision": 1, "updated_ts": 1.0, "state": {},
        "recent_messages": [], "trace_tail": [],
        "messages": [{"role":"assistant","content":[{"type":"text","text":"hi"},
            {"type":"tool_call","id":"t1","name":"read_file","arguments":{}}]}],
    });
    let cp: Checkpoint = serde_json::from_value(old).unwrap();
    assert_eq!(cp.model, None);
    assert_eq!(cp.messages[0].tool_calls().count(), 1);
    let usage: Usage = serde_json::from_value(json!({"input_tokens":1,"output_tokens":2})).unwrap();
    assert_eq!(usage.reasoning_tokens, 0);
    // A zero reasoning count is not written, so usage events keep their old form.
    assert_eq!(
        serde_json::to_value(usage).unwrap(),
        json!({"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":0})
    );
}

#[test]
fn new_events_are_tagged_snake_case() {
    assert_eq!(
        roundtrip(&Event::Thinking { text: "hm".into() }),
        json!({"type":"thinking","text":"hm"})
    );
    assert_eq!(
        roundtrip(&Event::ModelStopped {
            turn: 2,
            reason: StopReason::MaxTokens
        }),
        json!({"type":"model_stopped","turn":2,"reason":"max_tokens"})
    );
    assert_eq!(
        roundtrip(&Event::Notice {
            kind: NoticeKind::OutputCut,
            message: "cut".into()
        }),
        json!({"type":"notice","kind":"output_cut","message":"cut"})
    );
    let mut req = ChatRequest::new("m", vec![]);
    req.reasoning = Some(ReasoningEffort::High);
    assert_eq!(roundtrip(&req)["reasoning"], "high");
}

/// Regression: `Usage::add` overflowed on large server-reported usage
/// (a panic in debug builds, a silent wrap in release).
#[test]
fn usage_accounting_saturates_instead_of_overflowing() {
    let huge = Usage {
        input_tokens: u64::MAX - 1,
        output_tokens: u64::MAX,
        cache_read_input_tokens: u64::MAX,
        cache_creation_input_tokens: 5,
        reasoning_tokens: u64::MAX,
    };
    let mut total = huge;
    total.add(&huge);
    assert_eq!(total.input_tokens, u64::MAX);
    assert_eq!(total.output_tokens, u64::MAX);
    assert_eq!(total.cache_creation_input_tokens, 10);
    assert_eq!(total.total(), u64::MAX);
}
