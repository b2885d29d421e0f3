//! The scripted backend: replays a JSON script of model turns as a real
//! stream, so North runs with no model (tests, demos, offline use).
//!
//! Script format (a bare array of turns is accepted too):
//!
//! ```json
//! {"turns": [
//!   {"thinking": "The README first.", "text": "Let me look.", "tool_calls": [{"id": "t1", "name": "read_file", "args": {"path": "README.md"}}]},
//!   {"text": "Done.", "usage": {"input_tokens": 120, "output_tokens": 8}},
//!   {"text": "Partial answer", "error": {"type": "overloaded_error", "message": "Overloaded"}}
//! ]}
//! ```
//!
//! Each model request consumes the next turn. Text arrives in several
//! deltas and tool arguments in small fragments, exactly as a provider
//! streams them. `stop_reason` defaults to `tool_use` when the turn has tool
//! calls and `end_turn` otherwise; `usage` defaults to an estimate (4 bytes a
//! token). An `error` turn streams its text and then fails like a provider.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use futures::future::BoxFuture;
use north_protocol::{
    ChatRequest, ChatResponse, ContentBlock, StopReason, StreamDelta, ToolCall, Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::accumulate::{Pieces, replay};

use crate::error::{LlmError, PartialOutput};
use crate::{Backend, DeltaStream, collect};

/// A whole script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// The turns, in the order requests consume them.
    pub turns: Vec<ScriptTurn>,
}

/// One model response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// Reasoning streamed before the answer (shown as thinking).
    #[serde(default)]
    pub thinking: String,
    /// Assistant text (may contain NOTES or tool-call blocks for the text protocols).
    #[serde(default)]
    pub text: String,
    /// Native tool calls.
    #[serde(default)]
    pub tool_calls: Vec<ScriptToolCall>,
    /// Stop reason; defaults from the content.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// Usage; defaults to an estimate.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Fail after streaming `text`, like a provider error event.
    #[serde(default)]
    pub error: Option<ScriptError>,
}

/// A native tool call in a script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptToolCall {
    /// Call id; defaults to `call_<turn>_<n>`.
    #[serde(default)]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments object.
    #[serde(default, alias = "arguments")]
    pub args: Value,
    /// Arguments streamed verbatim instead of `args`, e.g. JSON cut off
    /// mid-string, as a model stopped by its token limit sends it.
    #[serde(default)]
    pub raw_args: Option<String>,
}

/// A simulated provider failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptError {
    /// Error type, e.g. `overloaded_error`.
    #[serde(rename = "type")]
    pub error_type: String,
    /// Message.
    pub message: String,
}

/// Replays a [`Script`]; optionally records each request as a JSON line.
#[derive(Debug)]
pub struct ScriptedBackend {
    turns: Mutex<VecDeque<ScriptTurn>>,
    served: Mutex<usize>,
    record: Option<Mutex<File>>,
}

impl ScriptedBackend {
    /// A backend replaying `script`.
    pub fn new(script: Script) -> Self {
        ScriptedBackend {
            turns: Mutex::new(script.turns.into()),
            served: Mutex::new(0),
            record: None,
        }
    }

    /// Parses a script from JSON text.
    pub fn from_json(text: &str) -> Result<Self, LlmError> {
        // Parse in two steps so serde's error names the offending field
        // (an untagged enum would only say "did not match any variant").
        let invalid = |e: serde_json::Error| LlmError::Script(format!("invalid script: {e}"));
        let value: Value = serde_json::from_str(text).map_err(invalid)?;
        let script = if value.is_array() {
            Script {
                turns: serde_json::from_value(value).map_err(invalid)?,
            }
        } else {
            serde_json::from_value(value).map_err(invalid)?
        };
        Ok(Self::new(script))
    }

    /// Reads a script file.
    pub fn from_file(path: &Path) -> Result<Self, LlmError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LlmError::Script(format!("cannot read script {}: {e}", path.display())))?;
        Self::from_json(&text).map_err(|e| LlmError::Script(format!("{}: {e}", path.display())))
    }

    /// Appends every request received to `path`, one JSON object per line.
    pub fn record_to(mut self, path: impl Into<PathBuf>) -> Result<Self, LlmError> {
        let path = path.into();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| {
                LlmError::Script(format!("cannot open record file {}: {e}", path.display()))
            })?;
        self.record = Some(Mutex::new(file));
        Ok(self)
    }

    /// Turns not yet consumed.
    pub fn remaining(&self) -> usize {
        self.turns.lock().map(|t| t.len()).unwrap_or(0)
    }

    fn next_turn(&self, request: &ChatRequest) -> Result<(usize, ScriptTurn), LlmError> {
        if let Some(file) = &self.record
            && let Ok(mut f) = file.lock()
        {
            let line = serde_json::to_string(request).unwrap_or_default();
            let _ = writeln!(f, "{line}");
        }
        let mut served = self
            .served
            .lock()
            .map_err(|_| LlmError::Script("state poisoned".into()))?;
        let turn = self
            .turns
            .lock()
            .map_err(|_| LlmError::Script("state poisoned".into()))?
            .pop_front()
            .ok_or_else(|| {
                LlmError::Script(format!(
                    "the script is exhausted: request {} has no turn left (the script had {} turn(s))",
                    *served + 1,
                    *served
                ))
            })?;
        *served += 1;
        Ok((*served, turn))
    }
}

/// The deltas of one scripted turn: text in pieces of about 12 bytes and
/// arguments in fragments of 7, so a turn streams in many deltas as a real
/// provider's does; a turn that ends in an error has no stop.
fn turn_deltas(n: usize, turn: &ScriptTurn, request: &ChatRequest) -> Vec<StreamDelta> {
    let mut content = Vec::new();
    if !turn.thinking.is_empty() {
        content.push(ContentBlock::Thinking {
            thinking: turn.thinking.clone(),
            signature: None,
        });
    }
    if !turn.text.is_empty() {
        content.push(ContentBlock::Text {
            text: turn.text.clone(),
        });
    }
    let mut arg_bytes = 0;
    for (i, call) in turn.tool_calls.iter().enumerate() {
        // Raw text that is not JSON is held as a JSON string, as the
        // response builder holds it, and streamed verbatim.
        let arguments = match (&call.raw_args, &call.args) {
            (Some(raw), _) => {
                arg_bytes += raw.len();
                Value::String(raw.clone())
            }
            (None, args) => {
                arg_bytes += args.to_string().len();
                args.clone()
            }
        };
        content.push(ContentBlock::ToolCall(ToolCall {
            id: call.id.clone().unwrap_or_else(|| format!("call_{n}_{i}")),
            name: call.name.clone(),
            arguments,
        }));
    }
    let usage = turn.usage.unwrap_or_else(|| Usage {
        input_tokens: (serde_json::to_string(request).map(|s| s.len()).unwrap_or(0) / 4) as u64,
        output_tokens: ((turn.text.len() + arg_bytes) / 4 + 1) as u64,
        ..Default::default()
    });
    let response = ChatResponse {
        id: Some(format!("scripted-{n}")),
        model: Some(request.model.clone()),
        content,
        stop_reason: turn.stop_reason.clone(),
        stop_sequence: None,
        usage,
    };
    let mut deltas = replay(&response, Pieces { text: 12, args: 7 });
    if turn.error.is_some() {
        deltas.pop();
    }
    deltas
}

impl Backend for ScriptedBackend {
    fn provider(&self) -> &'static str {
        "scripted"
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move { collect(self.stream_chat(request, CancellationToken::new())).await })
    }

    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream {
        let (n, turn) = match self.next_turn(&request) {
            Ok(t) => t,
            Err(e) => return Box::pin(futures::stream::once(async move { Err(e) })),
        };
        let mut queue: VecDeque<StreamDelta> = turn_deltas(n, &turn, &request).into();
        let error = turn.error.clone();
        let mut text = String::new();
        let mut finished = false;
        Box::pin(futures::stream::poll_fn(move |cx| {
            if finished {
                return std::task::Poll::Ready(None);
            }
            if cancel.is_cancelled() {
                finished = true;
                return std::task::Poll::Ready(Some(Err(LlmError::Cancelled {
                    partial: Box::new(PartialOutput {
                        text: text.clone(),
                        ..Default::default()
                    }),
                })));
            }
            match queue.pop_front() {
                Some(d) => {
                    if let StreamDelta::Text { text: t } = &d {
                        text.push_str(t);
                    }
                    // Wake again so other tasks (renderers, cancellation) interleave.
                    cx.waker().wake_by_ref();
                    std::task::Poll::Ready(Some(Ok(d)))
                }
                None => {
                    finished = true;
                    match &error {
                        Some(e) => std::task::Poll::Ready(Some(Err(LlmError::StreamError {
                            provider: "scripted",
                            error_type: e.error_type.clone(),
                            message: e.message.clone(),
                            partial: Box::new(PartialOutput {
                                text: text.clone(),
                                ..Default::default()
                            }),
                        }))),
                        None => std::task::Poll::Ready(None),
                    }
                }
            }
        }))
    }
}
