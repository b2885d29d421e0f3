//! Responses API stream decoding: semantic events (`response.*`) into
//! deltas. Text, function-call arguments and reasoning summaries stream as
//! pieces; a finished reasoning item arrives whole with its encrypted
//! content; `response.completed` / `response.incomplete` end the stream.

use north_protocol::{ContentBlock, StopReason, StreamDelta, Usage};
use serde_json::Value;

use crate::decode::{
    DecodeFailure, DecodeStats, StreamDecoder, missing, parse_json, str_field, u64_field,
};
use crate::sse::SseEvent;

const P: &str = "openai";

/// Events that carry nothing North needs beyond what other events carry.
const QUIET: &[&str] = &[
    "response.in_progress",
    "response.queued",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.done",
    "response.function_call_arguments.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.done",
];

/// A reasoning item's parts.
pub(crate) struct ReasoningItem {
    id: String,
    summary: Vec<String>,
    encrypted_content: Option<String>,
}

impl ReasoningItem {
    pub(crate) fn into_block(self) -> ContentBlock {
        ContentBlock::Reasoning {
            id: self.id,
            summary: self.summary,
            encrypted_content: self.encrypted_content,
        }
    }
}

pub(crate) fn reasoning_item(item: &Value) -> ReasoningItem {
    ReasoningItem {
        id: str_field(item, "id").unwrap_or_default().to_string(),
        summary: item
            .get("summary")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| str_field(s, "text"))
            .map(str::to_string)
            .collect(),
        encrypted_content: str_field(item, "encrypted_content").map(str::to_string),
    }
}

pub(crate) fn usage_from(u: &Value) -> Usage {
    let cached = u
        .get("input_tokens_details")
        .map(|d| u64_field(d, "cached_tokens"))
        .unwrap_or(0);
    Usage {
        // OpenAI counts cached tokens inside input_tokens; North reports them apart.
        input_tokens: u64_field(u, "input_tokens").saturating_sub(cached),
        output_tokens: u64_field(u, "output_tokens"),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
        reasoning_tokens: u
            .get("output_tokens_details")
            .map(|d| u64_field(d, "reasoning_tokens"))
            .unwrap_or(0),
    }
}

/// Why an incomplete response stopped.
pub(crate) fn incomplete_reason(response: &Value) -> StopReason {
    match response
        .get("incomplete_details")
        .and_then(|d| str_field(d, "reason"))
    {
        Some("max_output_tokens") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_string()),
        None => StopReason::Other("incomplete".to_string()),
    }
}

#[derive(Debug)]
struct OpenCall {
    index: usize,
    args_seen: bool,
}

/// Decoder for the Responses API SSE stream.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    started: bool,
    calls: Vec<OpenCall>,
    had_calls: bool,
    /// The reasoning summary part being streamed: (output index, part index).
    summary_part: Option<(u64, u64)>,
    done: bool,
    stats: DecodeStats,
}

impl ResponsesDecoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn start(&mut self, response: Option<&Value>, out: &mut Vec<StreamDelta>) {
        if !self.started {
            self.started = true;
            out.push(StreamDelta::Start {
                id: response
                    .and_then(|r| str_field(r, "id"))
                    .map(str::to_string),
                model: response
                    .and_then(|r| str_field(r, "model"))
                    .map(str::to_string),
            });
        }
    }

    fn item_added(&mut self, v: &Value, out: &mut Vec<StreamDelta>) -> Result<(), DecodeFailure> {
        let item = v.get("item").ok_or_else(|| missing("`item`", v))?;
        if str_field(item, "type") == Some("function_call") {
            let index = u64_field(v, "output_index") as usize;
            let id = str_field(item, "call_id")
                .or_else(|| str_field(item, "id"))
                .unwrap_or_default();
            let name =
                str_field(item, "name").ok_or_else(|| missing("function_call `name`", item))?;
            self.had_calls = true;
            out.push(StreamDelta::ToolCallStart {
                index,
                id: id.to_string(),
                name: name.to_string(),
            });
            let args = str_field(item, "arguments").unwrap_or_default();
            if !args.is_empty() {
                out.push(StreamDelta::ToolCallArgs {
                    index,
                    fragment: args.to_string(),
                });
            }
            self.calls.push(OpenCall {
                index,
                args_seen: !args.is_empty(),
            });
        }
        Ok(())
    }

    fn item_done(&mut self, v: &Value, out: &mut Vec<StreamDelta>) -> Result<(), DecodeFailure> {
        let item = v.get("item").ok_or_else(|| missing("`item`", v))?;
        match str_field(item, "type") {
            Some("function_call") => {
                let index = u64_field(v, "output_index") as usize;
                if let Some(pos) = self.calls.iter().position(|c| c.index == index) {
                    let call = self.calls.remove(pos);
                    // Arguments that never streamed arrive whole here.
                    let args = str_field(item, "arguments").unwrap_or_default();
                    if !call.args_seen && !args.is_empty() {
                        out.push(StreamDelta::ToolCallArgs {
                            index,
                            fragment: args.to_string(),
                        });
                    }
                    out.push(StreamDelta::ToolCallEnd { index });
                }
            }
            Some("reasoning") => {
                self.summary_part = None;
                let r = reasoning_item(item);
                out.push(StreamDelta::Reasoning {
                    id: r.id,
                    summary: r.summary,
                    encrypted_content: r.encrypted_content,
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn close_calls(&mut self, out: &mut Vec<StreamDelta>) {
        for call in self.calls.drain(..) {
            out.push(StreamDelta::ToolCallEnd { index: call.index });
        }
    }

    fn end(&mut self, v: &Value, incomplete: bool, out: &mut Vec<StreamDelta>) {
        let response = v.get("response").unwrap_or(&Value::Null);
        self.start(Some(response), out);
        self.close_calls(out);
        if let Some(u) = response.get("usage").filter(|u| !u.is_null()) {
            out.push(StreamDelta::Usage(usage_from(u)));
        }
        let reason = if incomplete {
            incomplete_reason(response)
        } else if self.had_calls {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        };
        out.push(StreamDelta::Stop {
            reason,
            stop_sequence: None,
        });
        self.done = true;
    }
}

fn provider_error(err: &Value) -> DecodeFailure {
    DecodeFailure::Provider {
        error_type: str_field(err, "code")
            .or_else(|| str_field(err, "type"))
            .unwrap_or("error")
            .to_string(),
        message: str_field(err, "message")
            .unwrap_or("(no message)")
            .to_string(),
    }
}

impl StreamDecoder for ResponsesDecoder {
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<StreamDelta>, DecodeFailure> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Vec::new());
        }
        let v = parse_json(data)?;
        let ty = str_field(&v, "type")
            .or(event.event.as_deref())
            .ok_or_else(|| missing("event `type`", &v))?
            .to_string();
        let mut out = Vec::new();
        match ty.as_str() {
            "response.created" => self.start(v.get("response"), &mut out),
            "response.output_item.added" => {
                self.start(None, &mut out);
                self.item_added(&v, &mut out)?;
            }
            "response.output_item.done" => self.item_done(&v, &mut out)?,
            "response.output_text.delta" | "response.refusal.delta" => {
                self.start(None, &mut out);
                let text = str_field(&v, "delta").ok_or_else(|| missing("`delta`", &v))?;
                if !text.is_empty() {
                    out.push(StreamDelta::Text {
                        text: text.to_string(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                let index = u64_field(&v, "output_index") as usize;
                let fragment = str_field(&v, "delta").ok_or_else(|| missing("`delta`", &v))?;
                if let Some(call) = self.calls.iter_mut().find(|c| c.index == index) {
                    call.args_seen = true;
                }
                if !fragment.is_empty() {
                    out.push(StreamDelta::ToolCallArgs {
                        index,
                        fragment: fragment.to_string(),
                    });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.start(None, &mut out);
                let text = str_field(&v, "delta").ok_or_else(|| missing("`delta`", &v))?;
                let part = (
                    u64_field(&v, "output_index"),
                    u64_field(&v, "summary_index"),
                );
                // Summary parts are paragraphs of one block.
                if self.summary_part.is_some_and(|p| p != part) {
                    out.push(StreamDelta::Thinking {
                        text: "\n\n".to_string(),
                    });
                }
                self.summary_part = Some(part);
                if !text.is_empty() {
                    out.push(StreamDelta::Thinking {
                        text: text.to_string(),
                    });
                }
            }
            "response.completed" => self.end(&v, false, &mut out),
            "response.incomplete" => self.end(&v, true, &mut out),
            "response.failed" => {
                let response = v.get("response").unwrap_or(&Value::Null);
                return Err(provider_error(
                    response.get("error").unwrap_or(&Value::Null),
                ));
            }
            "error" => return Err(provider_error(v.get("error").unwrap_or(&v))),
            quiet if QUIET.contains(&quiet) => self.stats.ignored += 1,
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
        let mut out = Vec::new();
        self.close_calls(&mut out);
        out
    }

    fn stats(&self) -> &DecodeStats {
        &self.stats
    }
}
