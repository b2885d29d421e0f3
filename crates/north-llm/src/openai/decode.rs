//! OpenAI Chat Completions stream decoding, tolerant of compatible servers
//! (Ollama, llama.cpp, vLLM, LM Studio): ids without `call_`, `content: ""`,
//! extra fields, usage in a final chunk with empty `choices`, whole
//! arguments in one chunk, `finish_reason: "stop"` after tool calls, and
//! `reasoning_content` (shown as thinking).

use north_protocol::{StopReason, StreamDelta, Usage};
use serde_json::Value;

use crate::decode::{
    DecodeFailure, DecodeStats, StreamDecoder, count_unknown, parse_json, str_field, u64_field,
};
use crate::sse::SseEvent;

const P: &str = "openai";

const CHUNK_FIELDS: &[&str] = &[
    "id",
    "object",
    "created",
    "model",
    "choices",
    "usage",
    "system_fingerprint",
    "service_tier",
    "obfuscation",
];
const CHOICE_FIELDS: &[&str] = &["index", "delta", "finish_reason", "logprobs"];
const DELTA_FIELDS: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "refusal",
    "function_call",
    "reasoning_content",
    "reasoning",
];

#[derive(Debug)]
struct OpenCall {
    index: usize,
    started: bool,
    ended: bool,
    id: Option<String>,
    name: Option<String>,
    /// Arguments received before the name (emitted once the call starts).
    pending_args: String,
}

/// Decoder for the OpenAI Chat Completions SSE stream.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    started: bool,
    calls: Vec<OpenCall>,
    stop_sent: bool,
    done: bool,
    stats: DecodeStats,
}

impl OpenAiDecoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn close_calls(&mut self, out: &mut Vec<StreamDelta>) {
        for call in &mut self.calls {
            if !call.started {
                // A call that never got a name: surface it rather than drop it.
                call.started = true;
                out.push(StreamDelta::ToolCallStart {
                    index: call.index,
                    id: call
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("call_{}", call.index)),
                    name: call.name.clone().unwrap_or_default(),
                });
                if !call.pending_args.is_empty() {
                    out.push(StreamDelta::ToolCallArgs {
                        index: call.index,
                        fragment: std::mem::take(&mut call.pending_args),
                    });
                }
            }
            if !call.ended {
                call.ended = true;
                out.push(StreamDelta::ToolCallEnd { index: call.index });
            }
        }
    }

    fn tool_call_delta(&mut self, tc: &Value, out: &mut Vec<StreamDelta>) {
        count_unknown(
            &mut self.stats,
            P,
            "tool_call",
            tc,
            &["index", "id", "type", "function"],
        );
        let index = tc
            .get("index")
            .and_then(Value::as_u64)
            .map(|i| i as usize)
            .unwrap_or(self.calls.len());
        let func = tc.get("function").unwrap_or(&Value::Null);
        let pos = match self.calls.iter().position(|c| c.index == index) {
            Some(p) => p,
            None => {
                self.calls.push(OpenCall {
                    index,
                    started: false,
                    ended: false,
                    id: None,
                    name: None,
                    pending_args: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        if call.id.is_none() {
            call.id = str_field(tc, "id")
                .filter(|s| !s.is_empty())
                .map(str::to_string);
        }
        if call.name.is_none() {
            call.name = str_field(func, "name")
                .filter(|s| !s.is_empty())
                .map(str::to_string);
        }
        let args = match func.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            // Some servers send arguments as an object rather than a string.
            Some(v @ Value::Object(_)) => v.to_string(),
            _ => String::new(),
        };
        if !call.started {
            if let Some(name) = call.name.clone() {
                call.started = true;
                out.push(StreamDelta::ToolCallStart {
                    index,
                    id: call.id.clone().unwrap_or_else(|| format!("call_{index}")),
                    name,
                });
                let mut pending = std::mem::take(&mut call.pending_args);
                pending.push_str(&args);
                if !pending.is_empty() {
                    out.push(StreamDelta::ToolCallArgs {
                        index,
                        fragment: pending,
                    });
                }
            } else {
                call.pending_args.push_str(&args);
            }
        } else if !args.is_empty() {
            out.push(StreamDelta::ToolCallArgs {
                index,
                fragment: args,
            });
        }
    }
}

pub(crate) fn usage_from(u: &Value) -> Usage {
    let cached = u
        .get("prompt_tokens_details")
        .map(|d| u64_field(d, "cached_tokens"))
        .unwrap_or(0);
    let prompt = u64_field(u, "prompt_tokens");
    Usage {
        // OpenAI counts cached tokens inside prompt_tokens; North reports them apart.
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: u64_field(u, "completion_tokens"),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
        reasoning_tokens: u
            .get("completion_tokens_details")
            .map(|d| u64_field(d, "reasoning_tokens"))
            .unwrap_or(0),
    }
}

pub(crate) fn finish_reason(s: &str, had_tool_calls: bool) -> StopReason {
    match s {
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "stop" if had_tool_calls => StopReason::ToolUse,
        "stop" | "eos" => StopReason::EndTurn,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_string()),
    }
}

/// Reads an OpenAI-shaped error object (`{"error": {...}}` or `{"error": "text"}`).
pub(crate) fn error_parts(v: &Value) -> Option<(String, String)> {
    let err = v.get("error")?;
    Some(match err {
        Value::String(s) => ("error".to_string(), s.clone()),
        _ => (
            str_field(err, "type")
                .map(str::to_string)
                .or_else(|| {
                    err.get("code")
                        .map(|c| c.to_string().trim_matches('"').to_string())
                })
                .unwrap_or_else(|| "error".to_string()),
            str_field(err, "message")
                .unwrap_or("(no message)")
                .to_string(),
        ),
    })
}

impl StreamDecoder for OpenAiDecoder {
    fn decode(&mut self, event: &SseEvent) -> Result<Vec<StreamDelta>, DecodeFailure> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        if data == "[DONE]" {
            self.close_calls(&mut out);
            self.done = true;
            return Ok(out);
        }
        let v = parse_json(data)?;
        if let Some((error_type, message)) = error_parts(&v) {
            return Err(DecodeFailure::Provider {
                error_type,
                message,
            });
        }
        if event.event.as_deref().is_some_and(|e| e != "message") {
            self.stats.unknown_events += 1;
            tracing::warn!(provider = P, event = ?event.event, "unknown stream event skipped");
            return Ok(out);
        }
        count_unknown(&mut self.stats, P, "chunk", &v, CHUNK_FIELDS);
        if !self.started {
            self.started = true;
            out.push(StreamDelta::Start {
                id: str_field(&v, "id").map(str::to_string),
                model: str_field(&v, "model").map(str::to_string),
            });
        }
        if let Some(choices) = v.get("choices").and_then(Value::as_array) {
            for choice in choices.iter().filter(|c| u64_field(c, "index") == 0) {
                count_unknown(&mut self.stats, P, "choice", choice, CHOICE_FIELDS);
                if let Some(delta) = choice.get("delta") {
                    count_unknown(&mut self.stats, P, "delta", delta, DELTA_FIELDS);
                    // Compatible servers running reasoning models (llama.cpp,
                    // vLLM) stream the reasoning beside the answer.
                    if let Some(text) = str_field(delta, "reasoning_content")
                        .or_else(|| str_field(delta, "reasoning"))
                        .filter(|t| !t.is_empty())
                    {
                        out.push(StreamDelta::Thinking {
                            text: text.to_string(),
                        });
                    }
                    if let Some(text) = str_field(delta, "content").filter(|t| !t.is_empty()) {
                        out.push(StreamDelta::Text {
                            text: text.to_string(),
                        });
                    }
                    if let Some(tcs) = delta.get("tool_calls").and_then(Value::as_array) {
                        for tc in tcs {
                            self.tool_call_delta(tc, &mut out);
                        }
                    }
                }
                if let Some(reason) = str_field(choice, "finish_reason") {
                    self.close_calls(&mut out);
                    if !self.stop_sent {
                        self.stop_sent = true;
                        out.push(StreamDelta::Stop {
                            reason: finish_reason(reason, !self.calls.is_empty()),
                            stop_sequence: None,
                        });
                    }
                }
            }
        }
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            out.push(StreamDelta::Usage(usage_from(u)));
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
