//! Model backends for North.
//!
//! Main types: the [`Backend`] contract (`chat` and `stream_chat` with
//! cancellation), [`AnthropicBackend`] (Messages API with extended
//! thinking), [`OpenAiBackend`] (the Responses API, or Chat Completions for
//! any OpenAI-compatible server, see [`OpenAiApi`]) and [`ScriptedBackend`]
//! (replays a JSON script as a real stream). Both HTTP providers share one
//! transport: retries with backoff and jitter, `retry-after`, idle timeouts,
//! a `User-Agent`, and no retry once output has reached the caller; a
//! broken stream ends in an [`LlmError`] carrying the partial output.
//!
//! The [`catalog`] knows model aliases, context windows, output limits and
//! prices; [`discovery`] asks local servers (llama.cpp, vLLM, Ollama) for
//! their window; [`ModelLimits`] turns both into a session's budgets.
//!
//! Request encoding and stream decoding are pure functions, tested from
//! bytes ([`decode::decode_chunks`]). This crate must not run tools, hold
//! conversation state, or print: it turns requests into deltas. API keys are
//! wrapped in [`ApiKey`] and never appear in errors or logs.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `sse`: an incremental Server-Sent Events parser
//! - `decode`: the typed stream-decoding contract shared by the HTTP providers (uses `sse`)
//! - `error`: errors from model backends (uses `decode`)
//! - `accumulate`: folding stream deltas into a complete response (uses `error`)
//! - `key`: API keys that never print
//! - `transport`: the one HTTP transport every provider uses (uses `accumulate`, `decode`, `error`, `key`, `sse`)
//! - `anthropic`: the Anthropic Messages API backend (uses `decode`, `error`, `key`, `sse`, `transport`)
//! - `discovery`: context discovery (uses `key`, `transport`)
//! - `catalog`: the model catalogue (uses `discovery`)
//! - `openai`: the OpenAI backend (uses `accumulate`, `catalog`, `decode`, `error`, `key`, `sse`, `transport`)
//! - `presets`: providers as presets over the OpenAI-compatible backend
//! - `scripted`: the scripted backend (uses `error`)
//!
//! The `http` feature (on by default) builds the HTTP providers and context
//! discovery on `reqwest`. Without it the crate is its pure part — encoding,
//! decoding, the catalogue — which the fuzz targets build alone; the
//! helpers only the transport calls are then unused, and said so once here
//! rather than at each of them.
#![cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]

mod accumulate;
pub mod anthropic;
pub mod catalog;
pub mod decode;
pub mod discovery;
mod error;
mod key;
pub mod openai;
pub mod presets;
pub mod scripted;
pub mod sse;
mod transport;

use std::pin::Pin;

use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use north_protocol::{ChatRequest, ChatResponse, StreamDelta};
use tokio_util::sync::CancellationToken;

pub use accumulate::{Pieces, ResponseBuilder, parse_arguments, replay};
#[cfg(feature = "http")]
pub use anthropic::AnthropicBackend;
pub use anthropic::AnthropicConfig;
pub use catalog::{LimitSource, ModelInfo, ModelLimits};
#[cfg(feature = "http")]
pub use discovery::discover_context_window;
pub use discovery::{Discovered, DiscoverySource};
pub use error::{LlmError, PartialOutput, ResponseError};
pub use key::{ApiKey, env_setting, scrub_secret};
#[cfg(feature = "http")]
pub use openai::OpenAiBackend;
pub use openai::{OpenAiApi, OpenAiConfig};
pub use presets::{KeyHeader, PRESETS, Preset, preset};
pub use scripted::ScriptedBackend;
pub use transport::{
    RetryNotice, RetryObserver, RetryPolicy, TransportConfig, USER_AGENT, observe_retries,
};

/// A stream of deltas ending with `None` on success or an error.
pub type DeltaStream = Pin<Box<dyn Stream<Item = Result<StreamDelta, LlmError>> + Send>>;

/// A model provider.
pub trait Backend: Send + Sync {
    /// Provider name (`anthropic`, `openai`, `scripted`).
    fn provider(&self) -> &'static str;

    /// The tools this provider's API runs on its side (its web search),
    /// which a request may ask for in `server_tools`.
    fn server_tools(&self) -> &'static [north_protocol::ServerTool] {
        &[]
    }

    /// One complete response (non-streaming).
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>>;

    /// A streamed response; cancelling `cancel` stops the request at once
    /// and ends the stream with [`LlmError::Cancelled`].
    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream;
}

/// Drains a delta stream into a complete response.
pub async fn collect(mut stream: DeltaStream) -> Result<ChatResponse, LlmError> {
    let mut builder = ResponseBuilder::new();
    while let Some(item) = stream.next().await {
        builder.push(&item?);
    }
    Ok(builder.finish())
}
