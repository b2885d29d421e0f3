//! Folding stream deltas into a complete response ([`ResponseBuilder`]),
//! and the way back ([`replay`]) for backends that have a whole response
//! to stream: the scripted backend and natural blocks' stub.

use north_protocol::{ChatResponse, ContentBlock, StopReason, StreamDelta, ToolCall};
use serde_json::Value;

use crate::error::PartialOutput;

/// Builds a [`ChatResponse`] from [`StreamDelta`]s as they arrive.
#[derive(Debug, Default)]
pub struct ResponseBuilder {
    response: ChatResponse,
    /// Open tool calls by stream index: position in `content` and raw args.
    open_calls: Vec<(usize, usize, String)>,
    text: String,
    started_calls: Vec<String>,
}

impl ResponseBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one delta.
    pub fn push(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Start { id, model } => {
                if id.is_some() {
                    self.response.id.clone_from(id);
                }
                if model.is_some() {
                    self.response.model.clone_from(model);
                }
            }
            StreamDelta::Text { text } => {
                self.text.push_str(text);
                match self.response.content.last_mut() {
                    Some(ContentBlock::Text { text: t }) => t.push_str(text),
                    _ => self.response.content.push(ContentBlock::text(text.clone())),
                }
            }
            StreamDelta::ToolCallStart { index, id, name } => {
                self.started_calls.push(name.clone());
                let pos = self.response.content.len();
                self.response.content.push(ContentBlock::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: Value::Object(Default::default()),
                }));
                self.open_calls.push((*index, pos, String::new()));
            }
            StreamDelta::ToolCallArgs { index, fragment } => {
                if let Some(open) = self.open_calls.iter_mut().find(|c| c.0 == *index) {
                    open.2.push_str(fragment);
                }
            }
            StreamDelta::ToolCallEnd { index } => {
                if let Some(i) = self.open_calls.iter().position(|c| c.0 == *index) {
                    let (_, pos, raw) = self.open_calls.remove(i);
                    self.finish_call(pos, &raw);
                }
            }
            StreamDelta::Thinking { .. }
            | StreamDelta::ThinkingSignature { .. }
            | StreamDelta::RedactedThinking { .. }
            | StreamDelta::Reasoning { .. } => self.push_reasoning(delta),
            StreamDelta::Hosted { api, raw } => self.response.content.push(ContentBlock::Hosted {
                api: *api,
                raw: raw.clone(),
            }),
            StreamDelta::Usage(u) => self.response.usage.merge_latest(u),
            StreamDelta::Stop {
                reason,
                stop_sequence,
            } => {
                self.response.stop_reason = Some(reason.clone());
                self.response.stop_sequence.clone_from(stop_sequence);
            }
        }
    }

    /// Applies a thinking or reasoning delta (the model's reasoning, kept
    /// to go back to the provider unchanged).
    fn push_reasoning(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Thinking { text } => match self.response.content.last_mut() {
                Some(ContentBlock::Thinking {
                    thinking,
                    signature: None,
                }) => thinking.push_str(text),
                _ => self.response.content.push(ContentBlock::Thinking {
                    thinking: text.clone(),
                    signature: None,
                }),
            },
            StreamDelta::ThinkingSignature { signature } => {
                match self.response.content.last_mut() {
                    Some(ContentBlock::Thinking { signature: s, .. }) if s.is_none() => {
                        *s = Some(signature.clone());
                    }
                    // A block whose text was not shown still needs its signature back.
                    _ => self.response.content.push(ContentBlock::Thinking {
                        thinking: String::new(),
                        signature: Some(signature.clone()),
                    }),
                }
            }
            StreamDelta::RedactedThinking { data } => {
                self.response
                    .content
                    .push(ContentBlock::RedactedThinking { data: data.clone() });
            }
            StreamDelta::Reasoning {
                id,
                summary,
                encrypted_content,
            } => {
                // The summary streamed as thinking pieces; the item replaces them.
                if matches!(
                    self.response.content.last(),
                    Some(ContentBlock::Thinking {
                        signature: None,
                        ..
                    })
                ) {
                    self.response.content.pop();
                }
                self.response.content.push(ContentBlock::Reasoning {
                    id: id.clone(),
                    summary: summary.clone(),
                    encrypted_content: encrypted_content.clone(),
                });
            }
            _ => {}
        }
    }

    fn finish_call(&mut self, pos: usize, raw: &str) {
        let args = parse_arguments(raw);
        if let Some(ContentBlock::ToolCall(call)) = self.response.content.get_mut(pos) {
            call.arguments = args;
        }
    }

    /// What has been delivered so far, for errors.
    pub fn partial(&self) -> PartialOutput {
        PartialOutput {
            text: self.text.clone(),
            usage: self.response.usage,
            tool_calls_started: self.started_calls.clone(),
        }
    }

    /// Whether any content (text or tool call) has been seen.
    pub fn has_content(&self) -> bool {
        !self.response.content.is_empty()
    }

    /// The response; tool calls never closed are finished with what arrived.
    pub fn finish(mut self) -> ChatResponse {
        for (_, pos, raw) in std::mem::take(&mut self.open_calls) {
            self.finish_call(pos, &raw);
        }
        self.response
    }
}

/// Parses tool-call arguments. Empty means `{}`; invalid JSON is kept as a
/// JSON string so the tool layer can report it instead of it being lost.
pub fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// How [`replay`] cuts a response into deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pieces {
    /// Longest text (and thinking) delta, in bytes (cut on char boundaries,
    /// preferably after a space); 0: one delta per block.
    pub text: usize,
    /// Longest tool-argument fragment, in bytes; 0: one fragment per call.
    pub args: usize,
}

impl Pieces {
    /// Every block in one delta.
    pub const WHOLE: Pieces = Pieces { text: 0, args: 0 };
}

/// The deltas a provider would have streamed for `response`: the inverse
/// of [`ResponseBuilder`]. Text and thinking come in `pieces`, each tool
/// call as start, argument fragments and end; usage, then the stop (its
/// reason defaults to `tool_use` when there are calls). Arguments held as a
/// JSON string are the raw text a model sent (what the builder keeps when
/// they do not parse) and are streamed as that text.
pub fn replay(response: &ChatResponse, pieces: Pieces) -> Vec<StreamDelta> {
    let mut out = vec![StreamDelta::Start {
        id: response.id.clone(),
        model: response.model.clone(),
    }];
    let mut index = 0;
    for block in &response.content {
        match block {
            ContentBlock::Text { text } => out.extend(
                cut(text, pieces.text)
                    .into_iter()
                    .map(|text| StreamDelta::Text { text }),
            ),
            ContentBlock::Thinking {
                thinking,
                signature,
            } => {
                out.extend(
                    cut(thinking, pieces.text)
                        .into_iter()
                        .map(|text| StreamDelta::Thinking { text }),
                );
                if let Some(signature) = signature {
                    out.push(StreamDelta::ThinkingSignature {
                        signature: signature.clone(),
                    });
                }
            }
            ContentBlock::RedactedThinking { data } => {
                out.push(StreamDelta::RedactedThinking { data: data.clone() })
            }
            ContentBlock::Reasoning {
                id,
                summary,
                encrypted_content,
            } => out.push(StreamDelta::Reasoning {
                id: id.clone(),
                summary: summary.clone(),
                encrypted_content: encrypted_content.clone(),
            }),
            ContentBlock::Hosted { api, raw } => out.push(StreamDelta::Hosted {
                api: *api,
                raw: raw.clone(),
            }),
            ContentBlock::ToolCall(call) => {
                out.push(StreamDelta::ToolCallStart {
                    index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                let args = match &call.arguments {
                    Value::String(raw) => raw.clone(),
                    Value::Null => "{}".to_owned(),
                    other => other.to_string(),
                };
                out.extend(
                    cut(&args, pieces.args)
                        .into_iter()
                        .map(|fragment| StreamDelta::ToolCallArgs { index, fragment }),
                );
                out.push(StreamDelta::ToolCallEnd { index });
                index += 1;
            }
            // Results, images and documents are the caller's input, never model output.
            ContentBlock::ToolResult { .. }
            | ContentBlock::Image { .. }
            | ContentBlock::Document { .. } => {}
        }
    }
    out.push(StreamDelta::Usage(response.usage));
    let reason = response.stop_reason.clone().unwrap_or(if index > 0 {
        StopReason::ToolUse
    } else {
        StopReason::EndTurn
    });
    out.push(StreamDelta::Stop {
        reason,
        stop_sequence: response.stop_sequence.clone(),
    });
    out
}

/// Splits text into pieces of at most `max` bytes on char boundaries,
/// preferring to cut after a space past half of `max`; `max` 0 keeps it
/// whole. Empty text gives no pieces.
fn cut(text: &str, max: usize) -> Vec<String> {
    if max == 0 {
        return if text.is_empty() {
            Vec::new()
        } else {
            vec![text.to_owned()]
        };
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        cur.push(ch);
        if cur.len() >= max || (ch == ' ' && cur.len() >= max / 2) {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod replay_tests {
    use north_protocol::{ChatResponse, ContentBlock, StopReason, ToolCall, Usage};
    use serde_json::json;

    use super::{Pieces, ResponseBuilder, replay};

    fn rebuilt(response: &ChatResponse, pieces: Pieces) -> ChatResponse {
        let mut builder = ResponseBuilder::new();
        for delta in replay(response, pieces) {
            builder.push(&delta);
        }
        builder.finish()
    }

    #[test]
    fn replay_is_the_inverse_of_the_builder() {
        let response = ChatResponse {
            id: Some("r1".into()),
            model: Some("m".into()),
            content: vec![
                ContentBlock::Thinking {
                    thinking: "weigh the options first".into(),
                    signature: Some("sig".into()),
                },
                ContentBlock::Text {
                    text: "Réading the file — then editing.".into(),
                },
                ContentBlock::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "src/lib.rs", "range": [1, 40]}),
                }),
                ContentBlock::ToolCall(ToolCall {
                    id: "c2".into(),
                    name: "shell_run".into(),
                    arguments: json!("{\"command\": \"ls"),
                }),
            ],
            stop_reason: Some(StopReason::ToolUse),
            stop_sequence: None,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Default::default()
            },
        };
        for pieces in [Pieces::WHOLE, Pieces { text: 3, args: 2 }] {
            assert_eq!(rebuilt(&response, pieces), response, "{pieces:?}");
        }
        let many = replay(&response, Pieces { text: 3, args: 2 });
        assert!(many.len() > 20, "small pieces stream in many deltas");
    }

    #[test]
    fn the_stop_reason_follows_the_content_when_unset() {
        let mut response = ChatResponse {
            content: vec![ContentBlock::Text { text: "hi".into() }],
            ..Default::default()
        };
        assert_eq!(
            rebuilt(&response, Pieces::WHOLE).stop_reason,
            Some(StopReason::EndTurn)
        );
        response.content.push(ContentBlock::ToolCall(ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: json!({}),
        }));
        assert_eq!(
            rebuilt(&response, Pieces::WHOLE).stop_reason,
            Some(StopReason::ToolUse)
        );
    }
}
