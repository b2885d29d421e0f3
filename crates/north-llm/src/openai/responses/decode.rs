//! Responses API stream decoding: semantic events (`response.*`) into
//! deltas. Text and reasoning summaries stream as pieces; a finished
//! reasoning item arrives whole with its encrypted content;
//! `response.completed` / `response.incomplete` end the stream.
//!
//! A function call's arguments are taken once, from the most complete
//! source: the finished item (`output_item.done`), else
//! `function_call_arguments.done`, else the deltas, else what
//! `output_item.added` carried. Implementations differ in which of these
//! they fill (real OpenAI sends empty arguments in `added`; proxies often
//! do not), so adding them up would double a call's JSON. An item that
//! comes again under an index already finished is ignored; a message that
//! arrives only whole (no text deltas) is still read.

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
    /// What `output_item.added` carried.
    added: String,
    /// The deltas, joined.
    streamed: String,
    /// `function_call_arguments.done`'s whole arguments.
    done: Option<String>,
}

impl OpenCall {
    /// The call's arguments from the most complete source (see the module).
    fn arguments(self, item: Option<&str>) -> String {
        [item, self.done.as_deref(), Some(self.streamed.as_str())]
            .into_iter()
            .flatten()
            .find(|a| !a.is_empty())
            .map_or(self.added, str::to_string)
    }
}

/// Decoder for the Responses API SSE stream.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    started: bool,
    calls: Vec<OpenCall>,
    /// Output indexes finished (`output_item.done`): a repeat is ignored.
    finished: std::collections::HashSet<usize>,
    /// Output indexes whose text came as deltas.
    texted: std::collections::HashSet<usize>,
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
        let index = u64_field(v, "output_index") as usize;
        let repeated =
            self.finished.contains(&index) || self.calls.iter().any(|c| c.index == index);
        if str_field(item, "type") == Some("function_call") && !repeated {
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
            self.calls.push(OpenCall {
                index,
                added: str_field(item, "arguments").unwrap_or_default().to_string(),
                streamed: String::new(),
                done: None,
            });
        }
        Ok(())
    }

    /// Ends an open call: its arguments once, then its end.
    fn end_call(call: OpenCall, item: Option<&str>, out: &mut Vec<StreamDelta>) {
        let index = call.index;
        let fragment = call.arguments(item);
        if !fragment.is_empty() {
            out.push(StreamDelta::ToolCallArgs { index, fragment });
        }
        out.push(StreamDelta::ToolCallEnd { index });
    }

    fn item_done(&mut self, v: &Value, out: &mut Vec<StreamDelta>) -> Result<(), DecodeFailure> {
        let item = v.get("item").ok_or_else(|| missing("`item`", v))?;
        let index = u64_field(v, "output_index") as usize;
        if !self.finished.insert(index) {
            return Ok(());
        }
        match str_field(item, "type") {
            Some("function_call") => {
                if let Some(pos) = self.calls.iter().position(|c| c.index == index) {
                    let call = self.calls.remove(pos);
                    Self::end_call(call, str_field(item, "arguments"), out);
                }
            }
            Some("message") if !self.texted.contains(&index) => {
                // A message that never streamed arrives whole here.
                self.start(None, out);
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|part| {
                        str_field(part, "text").or_else(|| str_field(part, "refusal"))
                    })
                    .collect();
                if !text.is_empty() {
                    out.push(StreamDelta::Text { text });
                }
            }
            Some("web_search_call") => out.push(StreamDelta::Hosted {
                api: north_protocol::HostedApi::Responses,
                raw: item.clone(),
            }),
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
        for call in std::mem::take(&mut self.calls) {
            Self::end_call(call, None, out);
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
                self.texted.insert(u64_field(&v, "output_index") as usize);
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
                    call.streamed.push_str(fragment);
                }
            }
            "response.function_call_arguments.done" => {
                let index = u64_field(&v, "output_index") as usize;
                if let (Some(call), Some(args)) = (
                    self.calls.iter_mut().find(|c| c.index == index),
                    str_field(&v, "arguments"),
                ) {
                    call.done = Some(args.to_string());
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The call's arguments and the text, as the accumulator builds them
    /// from a stream of `events`.
    fn decoded(events: &[Value]) -> (Vec<(String, Value)>, String) {
        let mut decoder = ResponsesDecoder::new();
        let mut builder = crate::ResponseBuilder::new();
        for v in events {
            let event = SseEvent {
                event: None,
                data: v.to_string(),
                id: None,
            };
            for d in decoder.decode(&event).unwrap() {
                builder.push(&d);
            }
        }
        for d in decoder.finish() {
            builder.push(&d);
        }
        let resp = builder.finish();
        let calls = resp
            .tool_calls()
            .into_iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect();
        (calls, resp.text())
    }

    fn added(args: &str) -> Value {
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": args}})
    }
    fn delta(d: &str) -> Value {
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": d})
    }
    fn args_done(args: &str) -> Value {
        json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": args})
    }
    fn done(args: &str) -> Value {
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": args}})
    }
    fn completed() -> Value {
        json!({"type": "response.completed", "response": {"id": "resp_1", "usage": null}})
    }
    const ARGS: &str = r#"{"path": "hello.txt"}"#;

    fn one_call(events: &[Value]) -> Value {
        let (calls, _) = decoded(events);
        assert_eq!(calls.len(), 1, "{calls:?}");
        calls[0].1.clone()
    }

    #[test]
    fn arguments_in_added_and_in_deltas_are_counted_once() {
        let got = one_call(&[
            added(ARGS),
            delta(r#"{"path": "#),
            delta(r#""hello.txt"}"#),
            args_done(ARGS),
            done(ARGS),
            completed(),
        ]);
        assert_eq!(got, json!({"path": "hello.txt"}));
    }

    #[test]
    fn deltas_only_done_only_and_added_only_each_give_the_arguments() {
        let deltas_only = one_call(&[
            added(""),
            delta(r#"{"path": "#),
            delta(r#""hello.txt"}"#),
            completed(),
        ]);
        let done_only = one_call(&[added(""), done(ARGS), completed()]);
        let args_done_only = one_call(&[added(""), args_done(ARGS), done(""), completed()]);
        let added_only = one_call(&[added(ARGS), done(""), completed()]);
        for got in [deltas_only, done_only, args_done_only, added_only] {
            assert_eq!(got, json!({"path": "hello.txt"}));
        }
    }

    #[test]
    fn the_finished_item_wins_over_deltas_that_disagree() {
        let got = one_call(&[
            added(""),
            delta(r#"{"path": "hel"#),
            done(ARGS),
            completed(),
        ]);
        assert_eq!(got, json!({"path": "hello.txt"}));
    }

    #[test]
    fn a_repeated_item_is_one_call() {
        let got = one_call(&[
            added(ARGS),
            done(ARGS),
            added(ARGS),
            delta(ARGS),
            done(ARGS),
            completed(),
        ]);
        assert_eq!(got, json!({"path": "hello.txt"}));
    }

    #[test]
    fn a_message_that_arrives_only_whole_is_read_once() {
        let message = json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "Hello there."}]}});
        let (_, text) = decoded(&[message.clone(), message.clone(), completed()]);
        assert_eq!(text, "Hello there.");
        let streamed = json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hello there."});
        let (_, text) = decoded(&[streamed, message, completed()]);
        assert_eq!(
            text, "Hello there.",
            "deltas and the whole message are not added up"
        );
    }
}
