//! Folding stream deltas into a complete response.

use north_protocol::{ChatResponse, ContentBlock, StreamDelta, ToolCall};
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
