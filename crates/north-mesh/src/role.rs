//! Role agents: one model call with a role as its system prompt. The
//! planner and the memory agent are role agents; [`MeshAgent`] is how a new
//! agent joins the pipeline.

use std::sync::Arc;

use futures::future::BoxFuture;
use north_llm::{Backend, LlmError};
use north_protocol::{ChatRequest, ChatResponse, Message};
use tokio_util::sync::CancellationToken;

use super::log::ExecutionLog;

/// A named role over a backend: `call` sends one request with the role as
/// the system prompt (unless the request brings its own).
#[derive(Clone)]
pub struct RoleAgent {
    name: String,
    role: String,
    backend: Arc<dyn Backend>,
    model: String,
    max_tokens: u32,
}

impl std::fmt::Debug for RoleAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoleAgent")
            .field("name", &self.name)
            .field("role", &self.role)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl RoleAgent {
    /// A role agent answering as `model` on `backend`.
    pub fn new(
        name: impl Into<String>,
        role: impl Into<String>,
        backend: Arc<dyn Backend>,
        model: impl Into<String>,
    ) -> Self {
        RoleAgent {
            name: name.into(),
            role: role.into(),
            backend,
            model: model.into(),
            max_tokens: 2048,
        }
    }

    /// Sets the output token limit (default 2,048).
    #[must_use]
    pub(crate) fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The role (system prompt).
    pub fn role(&self) -> &str {
        &self.role
    }

    /// A request with the role as system prompt and `input` as the user message.
    pub fn request(&self, input: &str) -> ChatRequest {
        let mut req = ChatRequest::new(self.model.clone(), vec![Message::user(input)]);
        req.system = Some(self.role.clone());
        req.max_tokens = self.max_tokens;
        req
    }

    /// Sends `request` (streamed, collected); the role fills an empty system prompt.
    pub async fn call(
        &self,
        mut request: ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        if request.system.as_deref().is_none_or(str::is_empty) {
            request.system = Some(self.role.clone());
        }
        north_llm::collect(self.backend.stream_chat(request, cancel.clone())).await
    }

    /// Asks with the role as system prompt; returns the answer's text.
    pub async fn ask(&self, input: &str, cancel: &CancellationToken) -> Result<String, LlmError> {
        Ok(self.call(self.request(input), cancel).await?.text())
    }
}

/// An extra agent in the pipeline. It runs after the executor and before
/// the memory agent, reads the execution log, and may return a note that is
/// added to the log (and so to what the memory agent summarizes).
pub trait MeshAgent: Send + Sync {
    /// The agent's name (shown in progress and in the log).
    fn name(&self) -> &str;

    /// Looks at the run; `Ok(Some(note))` adds a note to the log.
    fn run<'a>(
        &'a self,
        log: &'a ExecutionLog,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<String>, LlmError>>;
}
