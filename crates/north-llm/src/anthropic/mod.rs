//! The Anthropic Messages API backend: streaming, tool use, prompt caching
//! and extended thinking (thinking and redacted_thinking blocks decoded,
//! shown, and passed back unchanged in a tool loop).

mod decode;
mod encode;
mod response;

use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ChatRequest, ChatResponse};
use tokio_util::sync::CancellationToken;

pub use decode::AnthropicDecoder;
pub use encode::{encode_request, thinking_budget};
pub use response::decode_response;

use crate::error::LlmError;
use crate::key::ApiKey;
use crate::transport::{HttpCall, Transport, TransportConfig};
use crate::{Backend, DeltaStream};

const P: &str = "anthropic";

/// The default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The default API base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The environment variable the key is read from.
pub const KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// The `anthropic-version` header value.
pub const API_VERSION: &str = "2023-06-01";

/// Settings for [`AnthropicBackend`].
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Base URL (without `/v1/messages`).
    pub base_url: String,
    /// The API key.
    pub api_key: Option<ApiKey>,
    /// Retries and timeouts.
    pub transport: TransportConfig,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key: None,
            transport: TransportConfig::default(),
        }
    }
}

impl AnthropicConfig {
    /// Defaults overridden by `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
    pub fn from_env() -> Self {
        AnthropicConfig {
            api_key: ApiKey::from_env("ANTHROPIC_API_KEY"),
            base_url: crate::key::env_setting("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            ..Default::default()
        }
    }
}

/// Talks to the Anthropic Messages API (or any server speaking it).
#[derive(Debug, Clone)]
pub struct AnthropicBackend {
    transport: Arc<Transport>,
    url: String,
    key: ApiKey,
}

impl AnthropicBackend {
    /// A backend from `config`; fails when there is no key.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let key = config.api_key.ok_or(LlmError::MissingKey {
            provider: P,
            env_var: "ANTHROPIC_API_KEY",
        })?;
        let base = config.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::Config {
                provider: P,
                message: format!("base URL `{base}` must start with http:// or https://"),
            });
        }
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let transport = Transport::new(P, config.transport, Some(key.clone()), KEY_VAR)?;
        Ok(AnthropicBackend {
            transport: Arc::new(transport),
            url,
            key,
        })
    }

    fn call(&self, request: &ChatRequest, stream: bool) -> Result<HttpCall, LlmError> {
        HttpCall::json(P, self.url.clone(), &encode_request(request, stream))
            .secret_header("x-api-key", self.key.expose())?
            .header("anthropic-version", API_VERSION)
    }
}

impl Backend for AnthropicBackend {
    fn provider(&self) -> &'static str {
        P
    }

    fn server_tools(&self) -> &'static [north_protocol::ServerTool] {
        &[north_protocol::ServerTool::WebSearch]
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let call = self.call(&request, false)?;
            let body = self
                .transport
                .send_json(&call, &CancellationToken::new())
                .await?;
            decode_response(&body).map_err(|e| e.into_llm(P, |t| self.transport.scrub(t)))
        })
    }

    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream {
        match self.call(&request, true) {
            Ok(call) => self
                .transport
                .clone()
                .stream(call, AnthropicDecoder::new, cancel),
            Err(e) => Box::pin(futures::stream::once(async move { Err(e) })),
        }
    }
}
