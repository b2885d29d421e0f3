//! Stream decoding from recorded bytes: pure, so split anywhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_llm::ResponseBuilder;
use north_llm::anthropic::AnthropicDecoder;
use north_llm::decode::{DecodeFailure, StreamDecoder, decode_chunks};
use north_llm::openai::OpenAiDecoder;
use north_protocol::{ChatResponse, StopReason, StreamDelta};
use north_test_support::fixture;
use proptest::prelude::*;
use serde_json::json;

fn decode<D: StreamDecoder>(mut d: D, bytes: &[u8]) -> (Vec<StreamDelta>, D) {
    let (deltas, failure) = decode_chunks(&mut d, [bytes]);
    assert!(failure.is_none(), "{failure:?}");
    (deltas, d)
}

fn response(deltas: &[StreamDelta]) -> ChatResponse {
    let mut b = ResponseBuilder::new();
    deltas.iter().for_each(|d| b.push(d));
    b.finish()
}

const FIXTURES: &[(&str, bool)] = &[
    ("anthropic/text.sse", true),
    ("anthropic/tool_use.sse", true),
    ("anthropic/two_tools_unknown.sse", true),
    ("openai/text.sse", false),
    ("openai/two_tools.sse", false),
    ("openai/ollama_compat.sse", false),
];

fn decode_split(name: &str, anthropic: bool, splits: &[usize]) -> Vec<StreamDelta> {
    let bytes = fixture(name);
    let mut cuts: Vec<usize> = splits.iter().map(|s| s % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut prev = 0;
    for c in cuts {
        chunks.push(&bytes[prev..c]);
        prev = c;
    }
    chunks.push(&bytes[prev..]);
    let (deltas, failure) = if anthropic {
        decode_chunks(&mut AnthropicDecoder::new(), chunks)
    } else {
        decode_chunks(&mut OpenAiDecoder::new(), chunks)
    };
    assert!(failure.is_none(), "{name}: {failure:?}");
    deltas
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any split of a recorded stream into chunks decodes identically.
    #[test]
    fn recorded_streams_decode_identically_at_any_byte_split(
        which in 0..FIXTURES.len(),
        splits in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let (name, anthropic) = FIXTURES[which];
        let whole = decode_split(name, anthropic, &[]);
        let split = decode_split(name, anthropic, &splits);
        prop_assert_eq!(whole, split);
    }
}

#[test]
fn every_byte_as_its_own_chunk_decodes_identically() {
    for (name, anthropic) in FIXTURES {
        let bytes = fixture(name);
        let all: Vec<usize> = (0..bytes.len()).collect();
        assert_eq!(
            decode_split(name, *anthropic, &[]),
            decode_split(name, *anthropic, &all),
            "{name}"
        );
    }
}

#[test]
fn anthropic_text_fixture() {
    let (deltas, d) = decode(AnthropicDecoder::new(), &fixture("anthropic/text.sse"));
    let r = response(&deltas);
    assert_eq!(r.text(), "Héllo — the repo has three crates.\n");
    assert_eq!(r.id.as_deref(), Some("msg_01HCDu5LRGeP2o7s2xGmxyx8"));
    assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(r.usage.input_tokens, 472);
    assert_eq!(r.usage.cache_read_input_tokens, 2048);
    assert_eq!(r.usage.output_tokens, 15);
    assert!(d.is_done());
    assert_eq!(d.stats().unknown_events, 0);
}

#[test]
fn anthropic_tool_use_fixture_reassembles_arguments() {
    let (deltas, _) = decode(AnthropicDecoder::new(), &fixture("anthropic/tool_use.sse"));
    let frags = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::ToolCallArgs { .. }))
        .count();
    assert_eq!(frags, 6, "empty partial_json fragments are not forwarded");
    let r = response(&deltas);
    let call = &r.tool_calls()[0];
    assert_eq!(call.id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert_eq!(
        call.arguments,
        json!({"query": "fn main", "path": "src/", "regex": false, "limit": 20})
    );
    assert_eq!(r.text(), "Okay, let me search for `fn main`.");
}

#[test]
fn anthropic_unknown_events_and_fields_are_counted_not_fatal() {
    let (deltas, d) = decode(
        AnthropicDecoder::new(),
        &fixture("anthropic/two_tools_unknown.sse"),
    );
    let r = response(&deltas);
    assert_eq!(r.tool_calls().len(), 2);
    assert_eq!(r.tool_calls()[1].arguments, json!({"path": "src/main.rs"}));
    assert_eq!(r.text(), "", "thinking is not shown as text");
    assert_eq!(
        r.content[0],
        north_protocol::ContentBlock::Thinking {
            thinking: "Two files to read.".into(),
            signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()),
        },
        "thinking is kept as its own block, signature included"
    );
    assert_eq!(r.usage.cache_creation_input_tokens, 1100);
    assert_eq!(d.stats().unknown_events, 1, "future_event_kind");
}

#[test]
fn anthropic_error_event_is_a_provider_failure() {
    let mut d = AnthropicDecoder::new();
    let bytes = b"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    let (_, f) = decode_chunks(&mut d, [&bytes[..]]);
    assert_eq!(
        f,
        Some(DecodeFailure::Provider {
            error_type: "overloaded_error".into(),
            message: "Overloaded".into()
        })
    );
}

#[test]
fn anthropic_delta_for_unstarted_block_is_malformed() {
    let mut d = AnthropicDecoder::new();
    let bytes = b"data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n";
    let (_, f) = decode_chunks(&mut d, [&bytes[..]]);
    assert!(matches!(f, Some(DecodeFailure::Malformed(m)) if m.contains("never started")));
}

#[test]
fn openai_text_fixture_with_usage_after_finish() {
    let (deltas, d) = decode(OpenAiDecoder::new(), &fixture("openai/text.sse"));
    let r = response(&deltas);
    assert_eq!(r.text(), "Héllo — the repo has three crates.\n");
    assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(r.usage.input_tokens, 2520 - 2048);
    assert_eq!(r.usage.cache_read_input_tokens, 2048);
    assert_eq!(r.usage.output_tokens, 15);
    assert!(d.is_done());
}

#[test]
fn openai_two_tools_by_index() {
    let (deltas, _) = decode(OpenAiDecoder::new(), &fixture("openai/two_tools.sse"));
    let r = response(&deltas);
    let calls = r.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "call_DdmO9pD3xa9XTPNJ32zg2hcA");
    assert_eq!(calls[0].arguments, json!({"path": "Cargo.toml"}));
    assert_eq!(
        calls[1].arguments,
        json!({"query": "TODO", "path": null, "regex": false, "limit": 50})
    );
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
}

#[test]
fn openai_extra_fields_are_counted() {
    let (_, d) = decode(OpenAiDecoder::new(), &fixture("openai/ollama_compat.sse"));
    assert!(d.stats().unknown_fields >= 1, "timings: {:?}", d.stats());
}

#[test]
fn invalid_tool_arguments_are_kept_as_text_not_lost() {
    let bytes = north_test_support::openai::StreamBuilder::new()
        .tool_call(0, "c", "read_file", &["{\"path\": ", "oops"])
        .build();
    let (deltas, _) = decode(OpenAiDecoder::new(), &bytes);
    let r = response(&deltas);
    assert_eq!(r.tool_calls()[0].arguments, json!("{\"path\": oops"));
}
