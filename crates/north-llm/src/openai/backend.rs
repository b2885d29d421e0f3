//! The OpenAI backend: requests over the shared HTTP transport (built with
//! the `http` feature; encoding and decoding are in the parent module).

use crate::error::{LlmError, ResponseError};
use crate::key::ApiKey;
use crate::transport::{HttpCall, Transport};
use crate::{Backend, DeltaStream};
use futures::future::BoxFuture;
use north_protocol::{ChatRequest, ChatResponse};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::*;

/// Talks to the Responses API or Chat Completions.
#[derive(Debug, Clone)]
pub struct OpenAiBackend {
    transport: Arc<Transport>,
    /// The base URL (for `/models`).
    base: String,
    url: String,
    key: Option<ApiKey>,
    api: OpenAiApi,
    /// OpenAI itself wants `max_completion_tokens`; compatible servers `max_tokens`.
    official: bool,
    key_header: crate::KeyHeader,
    /// Headers for every request, checked once when the backend is made.
    headers: reqwest::header::HeaderMap,
}

impl OpenAiBackend {
    /// A backend from `config`. A key is required only for the official endpoint.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let base = config.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::Config {
                provider: P,
                message: format!("base URL `{base}` must start with http:// or https://"),
            });
        }
        let official = is_official(base);
        if official && config.api_key.is_none() {
            return Err(LlmError::MissingKey {
                provider: P,
                env_var: KEY_VAR,
            });
        }
        let api = config.api.unwrap_or_else(|| OpenAiApi::default_for(base));
        let path = match api {
            OpenAiApi::Responses => "responses",
            OpenAiApi::Chat => "chat/completions",
        };
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &config.headers {
            let bad = |what: &str| LlmError::Config {
                provider: P,
                message: format!("header `{name}`: {what}"),
            };
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| bad("not a valid header name"))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| bad("its value has characters HTTP does not allow"))?;
            headers.insert(name, value);
        }
        let transport = Transport::new(
            P,
            config.transport,
            config.api_key.clone(),
            config.key_var.clone(),
        )?;
        Ok(OpenAiBackend {
            transport: Arc::new(transport),
            base: base.to_string(),
            url: format!("{base}/{path}"),
            key: config.api_key,
            api,
            official,
            key_header: config.key_header,
            headers,
        })
    }

    /// The API this backend speaks.
    pub fn api(&self) -> OpenAiApi {
        self.api
    }

    /// The ids of the models the server offers (`GET {base}/models`), with
    /// the backend's key and headers; redirects are not followed (the key
    /// goes nowhere else).
    pub async fn models(&self) -> Result<Vec<String>, LlmError> {
        let config = |message: String| LlmError::Config {
            provider: P,
            message,
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(crate::USER_AGENT)
            .timeout(std::time::Duration::from_secs(20))
            .build()
            .map_err(|e| config(format!("cannot make an HTTP client: {e}")))?;
        let mut request = client.get(format!("{}/models", self.base));
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        request = match (&self.key, self.key_header) {
            (Some(key), crate::KeyHeader::Bearer) => request.bearer_auth(key.expose()),
            (Some(key), crate::KeyHeader::ApiKey) => request.header("api-key", key.expose()),
            (None, _) => request,
        };
        let url = format!("{}/models", crate::transport::printable_url(&self.base));
        let response = request.send().await.map_err(|e| {
            config(format!(
                "GET {url}: {}",
                self.transport.scrub(&e.to_string())
            ))
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(config(format!("GET {url}: HTTP {status}")));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| config(format!("GET {url}: {e}")))?;
        let body: Value = serde_json::from_slice(&bytes)
            .map_err(|e| config(format!("GET {url}: not a models list: {e}")))?;
        let mut ids: Vec<String> = body
            .get("data")
            .or_else(|| body.get("models"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| {
                m.get("id")
                    .or_else(|| m.get("name"))
                    .and_then(Value::as_str)
            })
            .map(str::to_string)
            .collect();
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        match self.api {
            OpenAiApi::Responses => responses::encode_request(request, stream),
            OpenAiApi::Chat => encode_request(request, stream, self.official),
        }
    }

    fn call(&self, request: &ChatRequest, stream: bool) -> Result<HttpCall, LlmError> {
        let mut call = HttpCall::json(P, self.url.clone(), &self.body(request, stream));
        for (name, value) in &self.headers {
            call.headers.insert(name.clone(), value.clone());
        }
        match (&self.key, self.key_header) {
            (Some(key), crate::KeyHeader::Bearer) => {
                call.secret_header("authorization", &format!("Bearer {}", key.expose()))
            }
            (Some(key), crate::KeyHeader::ApiKey) => call.secret_header("api-key", key.expose()),
            (None, _) => Ok(call),
        }
    }
}

impl Backend for OpenAiBackend {
    fn provider(&self) -> &'static str {
        P
    }

    fn server_tools(&self) -> &'static [north_protocol::ServerTool] {
        match self.api {
            OpenAiApi::Responses => &[north_protocol::ServerTool::WebSearch],
            // Chat Completions has no search tool (only search models).
            OpenAiApi::Chat => &[],
        }
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let call = self.call(&request, false)?;
            let body = self
                .transport
                .send_json(&call, &CancellationToken::new())
                .await?;
            let decoded: Result<ChatResponse, ResponseError> = match self.api {
                OpenAiApi::Responses => responses::decode_response(&body),
                OpenAiApi::Chat => decode_response(&body),
            };
            decoded.map_err(|e| e.into_llm(P, |t| self.transport.scrub(t)))
        })
    }

    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream {
        let call = match self.call(&request, true) {
            Ok(call) => call,
            Err(e) => return Box::pin(futures::stream::once(async move { Err(e) })),
        };
        let transport = self.transport.clone();
        match self.api {
            OpenAiApi::Responses => transport.stream(call, ResponsesDecoder::new, cancel),
            OpenAiApi::Chat => transport.stream(call, OpenAiDecoder::new, cancel),
        }
    }
}
