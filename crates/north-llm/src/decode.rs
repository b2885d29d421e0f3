//! The typed stream-decoding contract shared by the HTTP providers.
//!
//! A decoder turns SSE events into [`StreamDelta`]s. It is a pure state
//! machine (no I/O), so it is tested from recorded bytes. Unknown events and
//! unknown fields are counted in [`DecodeStats`] and logged, never dropped
//! silently and never fatal.

use north_protocol::StreamDelta;
use serde_json::Value;

use crate::sse::{SseEvent, SseParser};

/// Counts of things a decoder saw but does not use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Events of a type the decoder does not know.
    pub unknown_events: u64,
    /// Fields the decoder does not know, across all events.
    pub unknown_fields: u64,
    /// Known events or blocks deliberately not surfaced (e.g. thinking deltas).
    pub ignored: u64,
}

/// Why decoding stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeFailure {
    /// The data is not valid for the protocol (bad JSON, missing fields).
    Malformed(String),
    /// The provider reported an error inside the stream.
    Provider {
        /// Provider error type.
        error_type: String,
        /// Provider message.
        message: String,
    },
}

/// A provider's stream decoder.
pub trait StreamDecoder: Send {
    /// Decodes one SSE event into zero or more deltas.
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<StreamDelta>, DecodeFailure>;
    /// Whether the protocol's end marker has been seen.
    fn is_done(&self) -> bool;
    /// Deltas to emit when the body ends (e.g. closing open tool calls).
    fn finish(&mut self) -> Vec<StreamDelta>;
    /// What was seen but not used.
    fn stats(&self) -> &DecodeStats;
}

/// Decodes a whole byte stream given as chunks; for tests and benchmarks.
/// Stops at the first failure and returns it with the deltas before it.
pub fn decode_chunks<D: StreamDecoder>(
    decoder: &mut D,
    chunks: impl IntoIterator<Item = impl AsRef<[u8]>>,
) -> (Vec<StreamDelta>, Option<DecodeFailure>) {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        for ev in parser.feed(chunk.as_ref()) {
            match decoder.decode(&ev) {
                Ok(ds) => out.extend(ds),
                Err(e) => return (out, Some(e)),
            }
        }
    }
    out.extend(decoder.finish());
    (out, None)
}

/// Counts keys of `value` (an object) not in `known`, logging each.
pub(crate) fn count_unknown(
    stats: &mut DecodeStats,
    provider: &str,
    context: &str,
    value: &Value,
    known: &[&str],
) {
    if let Value::Object(map) = value {
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                stats.unknown_fields += 1;
                tracing::debug!(provider, context, field = %key, "unknown field in stream event");
            }
        }
    }
}

/// Parses event data as JSON, with a truncated excerpt in the error.
pub(crate) fn parse_json(data: &str) -> Result<Value, DecodeFailure> {
    serde_json::from_str(data).map_err(|e| {
        DecodeFailure::Malformed(format!(
            "invalid JSON in event data ({e}): {}",
            excerpt(data)
        ))
    })
}

/// The first 200 characters of `s`.
pub(crate) fn excerpt(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(crate) fn u64_field(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

pub(crate) fn missing(what: &str, data: &Value) -> DecodeFailure {
    DecodeFailure::Malformed(format!("{what} missing in {}", excerpt(&data.to_string())))
}
