//! Runtime behaviour of natural functions, on the stub backend and on the
//! scripted north-llm backend. One test binary; modules by concept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conflicts;
mod effects;
mod environment;
mod errors;
mod locals;
mod memory;
mod scripted;
mod state;
mod stub;
mod summaries;
mod tools;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use north_llm::{Backend, DeltaStream, LlmError, ScriptedBackend};
use north_natural::{Configuration, Envelope, Environment, Memory, StubBackend};
use north_protocol::{ChatRequest, ChatResponse, ContentBlock, Role};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// A typed label, as a classifier would fill it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Sentiment {
    /// Good.
    Positive,
    /// Bad.
    Negative,
    /// Neither.
    Neutral,
}

/// Memory used by the tests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notes {
    /// Facts learned so far.
    pub facts: Vec<String>,
    /// How many times something happened.
    pub count: u32,
}

/// Wraps a backend and keeps every request it receives.
pub struct Recorder {
    inner: Box<dyn Backend>,
    /// Every request, in order.
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl Recorder {
    /// Records requests to `inner`.
    pub fn new(inner: impl Backend + 'static) -> Arc<Self> {
        Arc::new(Recorder {
            inner: Box::new(inner),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// Tool results sent back to the model, in order, as (content, is_error).
    pub fn tool_results(&self) -> Vec<(String, bool)> {
        let mut seen = Vec::new();
        let requests = self.requests();
        let Some(last) = requests.last() else {
            return seen;
        };
        for m in last.messages.iter().filter(|m| m.role == Role::Tool) {
            for b in &m.content {
                if let ContentBlock::ToolResult {
                    content, is_error, ..
                } = b
                {
                    seen.push((content.clone(), *is_error));
                }
            }
        }
        seen
    }

    /// The user message of the first request.
    pub fn first_prompt(&self) -> String {
        self.requests()[0].messages[0].text_content()
    }
}

impl Backend for Recorder {
    fn provider(&self) -> &'static str {
        self.inner.provider()
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.chat(request)
    }

    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.stream_chat(request, cancel)
    }
}

/// An environment on a stub serving `envelopes`.
pub fn stub(envelopes: impl IntoIterator<Item = Envelope>) -> Environment {
    Environment::stub(StubBackend::new(envelopes))
}

/// An environment on any backend, with every required field spelled out.
pub fn on(backend: Arc<dyn Backend>) -> Environment {
    Environment::builder()
        .configuration(Configuration::default())
        .workspace_root(env!("CARGO_MANIFEST_DIR"))
        .backend(backend)
        .memory(Memory::none())
        .build()
}

/// An environment on a scripted backend.
pub fn scripted(script: serde_json::Value) -> Environment {
    on(Arc::new(
        ScriptedBackend::from_json(&script.to_string()).unwrap(),
    ))
}

/// A scripted final answer turn.
pub fn final_turn(answer: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"text": answer.to_string()})
}

/// A scripted turn calling one tool.
pub fn call_turn(name: &str, args: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"tool_calls": [{"name": name, "args": args}]})
}
