//! The stub backend: runs natural programs deterministically with no model.
//! Each block takes one JSON envelope `{natural_final, bindings}`; the
//! bindings are applied through `nh_assign` (so they are validated exactly
//! like a model's) and `natural_final` is the final answer.

use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use north_llm::{Backend, DeltaStream, LlmError};
use north_protocol::{
    ChatRequest, ChatResponse, ContentBlock, Role, StopReason, StreamDelta, ToolCall,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::env::{Configuration, Environment};
use crate::memory::{Memory, MemoryHandle};
use crate::prompt::program_of;
use crate::sync::lock;

/// The stub backend's provider name.
pub const PROVIDER: &str = "stub";

const MARK: &str = "[stub] natural_final: ";

/// An error of the stub backend. `LlmError::Script` would read "scripted
/// backend: …" and send the user to the wrong backend; `Config` carries the
/// provider name, and a stub's envelopes are its configuration.
fn stub_error(message: String) -> LlmError {
    LlmError::Config {
        provider: PROVIDER,
        message,
    }
}

/// What the stub does for one block.
///
/// ```json
/// {"natural_final": {"effect": {"type": "break"}},
///  "bindings": {"label": "positive", "memory.facts": ["sky is blue"]},
///  "tool_calls": [{"name": "nh_eval", "args": {"expression": ".items | length"}}]}
/// ```
///
/// `bindings` become `nh_assign` calls (a binding name or `memory.<field>`
/// with the value as a JSON literal); `tool_calls` are made as given;
/// `natural_final` is sent as the final answer (a string is sent as it is,
/// so a non-JSON answer can be simulated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The final answer.
    #[serde(default = "empty_object")]
    pub natural_final: Value,
    /// Values to assign, by target.
    #[serde(default)]
    pub bindings: Map<String, Value>,
    /// Further tool calls, made after the bindings.
    #[serde(default)]
    pub tool_calls: Vec<StubToolCall>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl Default for Envelope {
    fn default() -> Self {
        Envelope {
            natural_final: empty_object(),
            bindings: Map::new(),
            tool_calls: Vec::new(),
        }
    }
}

/// A tool call an envelope makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StubToolCall {
    /// The tool.
    pub name: String,
    /// Its arguments object.
    #[serde(default = "empty_object")]
    pub args: Value,
}

impl Envelope {
    /// An envelope that assigns nothing and finishes with no effect.
    pub fn done() -> Self {
        Envelope::default()
    }

    /// Adds a binding (`name` or `memory.<field>`). A value that cannot be
    /// turned into JSON becomes `null`.
    #[must_use]
    pub fn bind(mut self, target: impl Into<String>, value: impl Serialize) -> Self {
        self.bindings.insert(
            target.into(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }

    /// Adds a tool call.
    #[must_use]
    pub fn call(mut self, name: impl Into<String>, args: Value) -> Self {
        self.tool_calls.push(StubToolCall {
            name: name.into(),
            args,
        });
        self
    }

    /// Finishes with `continue`.
    #[must_use]
    pub fn continue_loop(mut self) -> Self {
        self.natural_final = json!({"effect": {"type": "continue", "value_json": null}});
        self
    }

    /// Finishes with `break`.
    #[must_use]
    pub fn break_loop(mut self) -> Self {
        self.natural_final = json!({"effect": {"type": "break", "value_json": null}});
        self
    }

    /// Finishes with `return` of `value`.
    #[must_use]
    pub fn returning(mut self, value: impl Serialize) -> Self {
        let text = serde_json::to_string(&value).unwrap_or_else(|_| "null".to_owned());
        self.natural_final = json!({"effect": {"type": "return", "value_json": text}});
        self
    }

    /// Finishes with an error report.
    #[must_use]
    pub fn error(mut self, message: impl Into<String>, error_type: Option<&str>) -> Self {
        self.natural_final = json!({"error": {"message": message.into(), "type": error_type}});
        self
    }

    /// Finishes with this exact text (it need not be JSON).
    #[must_use]
    pub fn final_text(mut self, text: impl Into<String>) -> Self {
        self.natural_final = Value::String(text.into());
        self
    }

    fn final_answer(&self) -> String {
        match &self.natural_final {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    fn calls(&self) -> Vec<ToolCall> {
        let assigns = self.bindings.iter().map(|(target, value)| {
            (
                "nh_assign".to_owned(),
                json!({"target": target, "expression": value.to_string()}),
            )
        });
        let extra = self
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.args.clone()));
        assigns
            .chain(extra)
            .enumerate()
            .map(|(i, (name, arguments))| ToolCall {
                id: format!("stub_{i}"),
                name,
                arguments,
            })
            .collect()
    }
}

/// What a function-driven stub sees of a block.
#[derive(Debug)]
pub struct StubBlock<'a> {
    /// The block's program, interpolated.
    pub program: &'a str,
    /// The whole request.
    pub request: &'a ChatRequest,
    /// How many blocks the stub served before this one.
    pub index: usize,
}

type EnvelopeFn = Box<dyn Fn(&StubBlock<'_>) -> Envelope + Send + Sync>;

enum Source {
    Queue(Mutex<VecDeque<Envelope>>),
    Func(EnvelopeFn),
}

/// A [`Backend`] that answers each block from an [`Envelope`]: from a
/// queue (one per block, in order) or from a function of the block.
pub struct StubBackend {
    source: Source,
    served: Mutex<usize>,
}

impl fmt::Debug for StubBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StubBackend")
            .field("served", &*lock(&self.served))
            .finish_non_exhaustive()
    }
}

impl StubBackend {
    /// Serves `envelopes`, one per block, in order.
    pub fn new(envelopes: impl IntoIterator<Item = Envelope>) -> Self {
        StubBackend {
            source: Source::Queue(Mutex::new(envelopes.into_iter().collect())),
            served: Mutex::new(0),
        }
    }

    /// Parses envelopes from JSON: one envelope or an array of them.
    /// Invalid JSON, or an envelope with a field it does not know, is an
    /// [`LlmError::Config`] of the stub backend.
    pub fn from_json(text: &str) -> Result<Self, LlmError> {
        let invalid = |e: serde_json::Error| stub_error(format!("invalid envelopes: {e}"));
        let value: Value = serde_json::from_str(text).map_err(invalid)?;
        let envelopes: Vec<Envelope> = if value.is_array() {
            serde_json::from_value(value).map_err(invalid)?
        } else {
            vec![serde_json::from_value(value).map_err(invalid)?]
        };
        Ok(Self::new(envelopes))
    }

    /// Computes each block's envelope with `f`.
    pub fn from_fn(f: impl Fn(&StubBlock<'_>) -> Envelope + Send + Sync + 'static) -> Self {
        StubBackend {
            source: Source::Func(Box::new(f)),
            served: Mutex::new(0),
        }
    }

    /// Envelopes left in the queue (0 for a function stub).
    pub fn remaining(&self) -> usize {
        match &self.source {
            Source::Queue(q) => lock(q).len(),
            Source::Func(_) => 0,
        }
    }

    fn next_envelope(&self, request: &ChatRequest) -> Result<Envelope, LlmError> {
        let mut served = lock(&self.served);
        let index = *served;
        let envelope = match &self.source {
            Source::Queue(q) => lock(q).pop_front().ok_or_else(|| {
                let program = program_of(request).unwrap_or_default();
                let program: String = program.split_whitespace().collect::<Vec<_>>().join(" ");
                let program: String = program.chars().take(80).collect();
                stub_error(format!(
                    "natural block #{} ran (\"{program}\"), but the stub backend was given {index} envelope{}: give one envelope per block the code runs, in order",
                    index + 1,
                    if index == 1 { "" } else { "s" }
                ))
            })?,
            Source::Func(f) => f(&StubBlock {
                program: program_of(request).unwrap_or_default(),
                request,
                index,
            }),
        };
        *served += 1;
        Ok(envelope)
    }

    fn respond(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let first_answer = request.messages.iter().find(|m| m.role == Role::Assistant);
        let content = match first_answer {
            None => {
                let envelope = self.next_envelope(request)?;
                let calls = envelope.calls();
                if calls.is_empty() {
                    vec![ContentBlock::text(envelope.final_answer())]
                } else {
                    let mut content = vec![ContentBlock::text(format!(
                        "{MARK}{}",
                        envelope.final_answer()
                    ))];
                    content.extend(calls.into_iter().map(ContentBlock::ToolCall));
                    content
                }
            }
            Some(message) => {
                let text = message.text_content();
                let answer = text.strip_prefix(MARK).ok_or_else(|| {
                    stub_error("this conversation was not started by the stub backend".to_owned())
                })?;
                vec![ContentBlock::text(answer)]
            }
        };
        let has_calls = content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolCall(_)));
        Ok(ChatResponse {
            id: None,
            model: Some(request.model.clone()),
            content,
            stop_reason: Some(if has_calls {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            }),
            stop_sequence: None,
            usage: Default::default(),
        })
    }
}

impl Backend for StubBackend {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        let out = self.respond(&request);
        Box::pin(async move { out })
    }

    fn stream_chat(&self, request: ChatRequest, _cancel: CancellationToken) -> DeltaStream {
        let deltas: Vec<Result<StreamDelta, LlmError>> = match self.respond(&request) {
            Err(e) => vec![Err(e)],
            Ok(response) => north_llm::replay(&response, north_llm::Pieces::WHOLE)
                .into_iter()
                .map(Ok)
                .collect(),
        };
        Box::pin(futures::stream::iter(deltas))
    }
}

// The stub's environment lives here, beside the backend it serves, so the
// environment module does not depend on the stub.
impl Environment {
    /// An environment for the [`StubBackend`](crate::StubBackend), the
    /// spec's deterministic test mode: the default configuration, `.` as
    /// workspace root (the process's current directory when a tool resolves
    /// it) and no memory. Real backends go through
    /// [`Environment::builder`], which requires every field.
    pub fn stub(stub: StubBackend) -> Self {
        Environment::from_parts(
            Configuration::default(),
            PathBuf::from("."),
            Arc::new(stub),
            MemoryHandle::from(Memory::none()),
        )
    }
}
