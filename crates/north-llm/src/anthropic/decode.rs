//! Anthropic Messages API stream decoding.

use north_protocol::{StopReason, StreamDelta, Usage};
use serde_json::Value;

use crate::decode::{
    DecodeFailure, DecodeStats, StreamDecoder, count_unknown, missing, parse_json, str_field,
    u64_field,
};
use crate::sse::SseEvent;

const P: &str = "anthropic";

#[derive(Debug, Clone, Copy, PartialEq)]
enum BlockKind {
    Text,
    ToolUse,
    Thinking,
    /// A block of a tool the API ran itself (web search), passed on whole
    /// when it stops.
    Hosted,
    /// Known but not surfaced (redacted_thinking deltas).
    Ignored,
    Unknown,
}

/// Decoder for the Anthropic Messages SSE stream.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    blocks: Vec<(usize, BlockKind)>,
    /// Hosted blocks being received: index, the block as it started, the
    /// input's JSON fragments.
    hosted: Vec<(usize, Value, String)>,
    /// Bytes of thinking text seen, for the reasoning-token estimate (the
    /// API counts thinking inside `output_tokens` without saying how much).
    thinking_bytes: u64,
    done: bool,
    stats: DecodeStats,
}

impl AnthropicDecoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn kind(&self, index: usize) -> Option<BlockKind> {
        self.blocks.iter().find(|b| b.0 == index).map(|b| b.1)
    }
}

pub(crate) fn usage_from(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_field(v, "input_tokens"),
        output_tokens: u64_field(v, "output_tokens"),
        cache_read_input_tokens: u64_field(v, "cache_read_input_tokens"),
        cache_creation_input_tokens: u64_field(v, "cache_creation_input_tokens"),
        reasoning_tokens: 0,
    }
}

pub(crate) fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

fn index_of(v: &Value) -> Result<usize, DecodeFailure> {
    v.get("index")
        .and_then(Value::as_u64)
        .map(|i| i as usize)
        .ok_or_else(|| missing("`index`", v))
}

impl AnthropicDecoder {
    /// The message's id, model and first usage.
    fn message_start(
        &mut self,
        v: &Value,
        out: &mut Vec<StreamDelta>,
    ) -> Result<(), DecodeFailure> {
        count_unknown(&mut self.stats, P, "message_start", v, &["type", "message"]);
        let msg = v.get("message").ok_or_else(|| missing("`message`", v))?;
        out.push(StreamDelta::Start {
            id: str_field(msg, "id").map(str::to_string),
            model: str_field(msg, "model").map(str::to_string),
        });
        if let Some(u) = msg.get("usage") {
            out.push(StreamDelta::Usage(usage_from(u)));
        }
        Ok(())
    }

    /// A content block opens: text, a tool call, thinking, or a hosted tool's.
    fn block_start(&mut self, v: &Value, out: &mut Vec<StreamDelta>) -> Result<(), DecodeFailure> {
        count_unknown(
            &mut self.stats,
            P,
            "content_block_start",
            v,
            &["type", "index", "content_block"],
        );
        let index = index_of(v)?;
        let block = v
            .get("content_block")
            .ok_or_else(|| missing("`content_block`", v))?;
        let kind = match str_field(block, "type") {
            Some("text") => {
                if let Some(t) = str_field(block, "text").filter(|t| !t.is_empty()) {
                    out.push(StreamDelta::Text {
                        text: t.to_string(),
                    });
                }
                BlockKind::Text
            }
            Some("tool_use") => {
                let id = str_field(block, "id").ok_or_else(|| missing("tool_use `id`", block))?;
                let name =
                    str_field(block, "name").ok_or_else(|| missing("tool_use `name`", block))?;
                out.push(StreamDelta::ToolCallStart {
                    index,
                    id: id.to_string(),
                    name: name.to_string(),
                });
                // Some servers send the whole input up front instead of deltas.
                if let Some(input) = block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                {
                    out.push(StreamDelta::ToolCallArgs {
                        index,
                        fragment: input.to_string(),
                    });
                }
                BlockKind::ToolUse
            }
            Some("thinking") => {
                if let Some(t) = str_field(block, "thinking").filter(|t| !t.is_empty()) {
                    self.thinking_bytes += t.len() as u64;
                    out.push(StreamDelta::Thinking {
                        text: t.to_string(),
                    });
                }
                if let Some(sig) = str_field(block, "signature").filter(|s| !s.is_empty()) {
                    out.push(StreamDelta::ThinkingSignature {
                        signature: sig.to_string(),
                    });
                }
                BlockKind::Thinking
            }
            Some("redacted_thinking") => {
                let data = str_field(block, "data")
                    .ok_or_else(|| missing("redacted_thinking `data`", block))?;
                out.push(StreamDelta::RedactedThinking {
                    data: data.to_string(),
                });
                BlockKind::Ignored
            }
            Some("server_tool_use" | "web_search_tool_result") => {
                self.hosted.push((index, block.clone(), String::new()));
                BlockKind::Hosted
            }
            other => {
                self.stats.unknown_events += 1;
                tracing::warn!(provider = P, block_type = ?other, "unknown content block type; its deltas are skipped");
                BlockKind::Unknown
            }
        };
        self.blocks.push((index, kind));
        Ok(())
    }

    /// More of an open block.
    fn block_delta(&mut self, v: &Value, out: &mut Vec<StreamDelta>) -> Result<(), DecodeFailure> {
        count_unknown(
            &mut self.stats,
            P,
            "content_block_delta",
            v,
            &["type", "index", "delta"],
        );
        let index = index_of(v)?;
        let delta = v.get("delta").ok_or_else(|| missing("`delta`", v))?;
        match (self.kind(index), str_field(delta, "type")) {
            (Some(BlockKind::Text), Some("text_delta")) => {
                let text = str_field(delta, "text").ok_or_else(|| missing("`text`", delta))?;
                if !text.is_empty() {
                    out.push(StreamDelta::Text {
                        text: text.to_string(),
                    });
                }
            }
            (Some(BlockKind::ToolUse), Some("input_json_delta")) => {
                let frag = str_field(delta, "partial_json")
                    .ok_or_else(|| missing("`partial_json`", delta))?;
                if !frag.is_empty() {
                    out.push(StreamDelta::ToolCallArgs {
                        index,
                        fragment: frag.to_string(),
                    });
                }
            }
            (Some(BlockKind::Thinking), Some("thinking_delta")) => {
                let text =
                    str_field(delta, "thinking").ok_or_else(|| missing("`thinking`", delta))?;
                if !text.is_empty() {
                    self.thinking_bytes += text.len() as u64;
                    out.push(StreamDelta::Thinking {
                        text: text.to_string(),
                    });
                }
            }
            (Some(BlockKind::Thinking), Some("signature_delta")) => {
                let signature =
                    str_field(delta, "signature").ok_or_else(|| missing("`signature`", delta))?;
                out.push(StreamDelta::ThinkingSignature {
                    signature: signature.to_string(),
                });
            }
            (Some(BlockKind::Hosted), Some("input_json_delta")) => {
                if let Some(h) = self.hosted.iter_mut().find(|h| h.0 == index) {
                    h.2.push_str(str_field(delta, "partial_json").unwrap_or(""));
                }
            }
            (Some(BlockKind::Ignored | BlockKind::Hosted), _) | (_, Some("citations_delta")) => {
                self.stats.ignored += 1;
            }
            (None, _) => {
                return Err(DecodeFailure::Malformed(format!(
                    "content_block_delta for block {index} that never started"
                )));
            }
            (Some(_), ty) => {
                self.stats.unknown_events += 1;
                tracing::warn!(provider = P, delta_type = ?ty, index, "unknown delta type skipped");
            }
        }
        Ok(())
    }

    /// A block closes: a tool call ends, a hosted tool's block is whole.
    fn block_stop(&mut self, v: &Value, out: &mut Vec<StreamDelta>) -> Result<(), DecodeFailure> {
        let index = index_of(v)?;
        if self.kind(index) == Some(BlockKind::ToolUse) {
            out.push(StreamDelta::ToolCallEnd { index });
        }
        if let Some(at) = self.hosted.iter().position(|h| h.0 == index) {
            let (_, mut raw, input) = self.hosted.remove(at);
            if !input.is_empty() {
                raw["input"] = serde_json::from_str(&input)
                    .map_err(|e| DecodeFailure::Malformed(format!("server tool input: {e}")))?;
            }
            out.push(StreamDelta::Hosted {
                api: north_protocol::HostedApi::Anthropic,
                raw,
            });
        }
        Ok(())
    }

    /// Usage so far and the stop reason.
    fn message_delta(
        &mut self,
        v: &Value,
        out: &mut Vec<StreamDelta>,
    ) -> Result<(), DecodeFailure> {
        count_unknown(
            &mut self.stats,
            P,
            "message_delta",
            v,
            &["type", "delta", "usage"],
        );
        if let Some(u) = v.get("usage") {
            let mut usage = usage_from(u);
            // About 4 bytes a token; never more than the output itself.
            usage.reasoning_tokens = self.thinking_bytes.div_ceil(4).min(usage.output_tokens);
            out.push(StreamDelta::Usage(usage));
        }
        if let Some(d) = v.get("delta")
            && let Some(reason) = str_field(d, "stop_reason")
        {
            out.push(StreamDelta::Stop {
                reason: stop_reason(reason),
                stop_sequence: str_field(d, "stop_sequence").map(str::to_string),
            });
        }
        Ok(())
    }
}

impl StreamDecoder for AnthropicDecoder {
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<StreamDelta>, DecodeFailure> {
        if event.data.is_empty() {
            return Ok(Vec::new());
        }
        let v = parse_json(&event.data)?;
        let ty = str_field(&v, "type")
            .or(event.event.as_deref())
            .ok_or_else(|| missing("event `type`", &v))?
            .to_string();
        let mut out = Vec::new();
        match ty.as_str() {
            "message_start" => self.message_start(&v, &mut out)?,
            "content_block_start" => self.block_start(&v, &mut out)?,
            "content_block_delta" => self.block_delta(&v, &mut out)?,
            "content_block_stop" => self.block_stop(&v, &mut out)?,
            "message_delta" => self.message_delta(&v, &mut out)?,
            "message_stop" => self.done = true,
            "ping" => {}
            "error" => {
                let err = v.get("error").unwrap_or(&Value::Null);
                return Err(DecodeFailure::Provider {
                    error_type: str_field(err, "type").unwrap_or("error").to_string(),
                    message: str_field(err, "message")
                        .unwrap_or("(no message)")
                        .to_string(),
                });
            }
            other => {
                self.stats.unknown_events += 1;
                tracing::warn!(provider = P, event = other, "unknown stream event skipped");
            }
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) -> Vec<StreamDelta> {
        Vec::new()
    }

    fn stats(&self) -> &DecodeStats {
        &self.stats
    }
}
