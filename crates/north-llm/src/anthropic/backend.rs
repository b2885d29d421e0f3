//! The Anthropic backend: requests over the shared HTTP transport (built
//! with the `http` feature; encoding and decoding are in the parent module).

use crate::error::LlmError;
use crate::key::ApiKey;
use crate::transport::{HttpCall, Transport};
use crate::{Backend, DeltaStream};
use futures::future::BoxFuture;
use north_protocol::{ChatRequest, ChatResponse};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::*;

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
