//! The OpenAI Chat Completions backend, also for OpenAI-compatible servers
//! (Ollama, llama.cpp's server, vLLM, LM Studio).

mod decode;

use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ChatRequest, ChatResponse, ContentBlock, Role, ToolCall};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use decode::OpenAiDecoder;

use crate::accumulate::parse_arguments;
use crate::error::LlmError;
use crate::key::ApiKey;
use crate::transport::{HttpCall, Transport, TransportConfig};
use crate::{Backend, DeltaStream};

const P: &str = "openai";

/// The default model.
pub const DEFAULT_MODEL: &str = "gpt-5.2";
/// The default API base URL (including `/v1`).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Settings for [`OpenAiBackend`].
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL including the version path, e.g. `http://localhost:11434/v1`.
    pub base_url: String,
    /// The API key; optional for local servers.
    pub api_key: Option<ApiKey>,
    /// Retries and timeouts.
    pub transport: TransportConfig,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key: None,
            transport: TransportConfig::default(),
        }
    }
}

impl OpenAiConfig {
    /// Defaults overridden by `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
    pub fn from_env() -> Self {
        OpenAiConfig {
            api_key: ApiKey::from_env("OPENAI_API_KEY"),
            base_url: crate::key::env_setting("OPENAI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            ..Default::default()
        }
    }
}

/// Talks to the Chat Completions API.
#[derive(Debug, Clone)]
pub struct OpenAiBackend {
    transport: Arc<Transport>,
    url: String,
    key: Option<ApiKey>,
    /// OpenAI itself wants `max_completion_tokens`; compatible servers `max_tokens`.
    official: bool,
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
        let official = base.contains("api.openai.com");
        if official && config.api_key.is_none() {
            return Err(LlmError::MissingKey {
                provider: P,
                env_var: "OPENAI_API_KEY",
            });
        }
        let transport = Transport::new(P, config.transport, config.api_key.clone())?;
        Ok(OpenAiBackend {
            transport: Arc::new(transport),
            url: format!("{base}/chat/completions"),
            key: config.api_key,
            official,
        })
    }

    fn call(&self, request: &ChatRequest, stream: bool) -> Result<HttpCall, LlmError> {
        let mut call = HttpCall::json(
            self.url.clone(),
            &encode_request(request, stream, self.official),
        );
        if let Some(key) = &self.key {
            call = call
                .secret_header("authorization", &format!("Bearer {}", key.expose()))
                .map_err(|message| LlmError::Config {
                    provider: P,
                    message,
                })?;
        }
        Ok(call)
    }
}

impl Backend for OpenAiBackend {
    fn provider(&self) -> &'static str {
        P
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let call = self.call(&request, false)?;
            let body = self
                .transport
                .send_json(&call, &CancellationToken::new())
                .await?;
            decode_response(&body).map_err(|message| LlmError::Decode {
                provider: P,
                message: self.transport.scrub(&message),
                partial: Default::default(),
            })
        })
    }

    fn stream_chat(&self, request: ChatRequest, cancel: CancellationToken) -> DeltaStream {
        match self.call(&request, true) {
            Ok(call) => self
                .transport
                .clone()
                .stream(call, OpenAiDecoder::new, cancel),
            Err(e) => Box::pin(futures::stream::once(async move { Err(e) })),
        }
    }
}

/// Encodes a provider-neutral request as a Chat Completions body.
pub fn encode_request(req: &ChatRequest, stream: bool, official: bool) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for msg in &req.messages {
        match msg.role {
            Role::System => messages.push(json!({"role": "system", "content": msg.text_content()})),
            Role::User => messages.push(json!({"role": "user", "content": msg.text_content()})),
            Role::Assistant => {
                let text = msg.text_content();
                let calls: Vec<Value> = msg
                    .tool_calls()
                    .map(|c| {
                        let arguments = match &c.arguments {
                            Value::String(raw) => raw.clone(),
                            other => other.to_string(),
                        };
                        json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
                    })
                    .collect();
                let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                messages.push(m);
            }
            Role::Tool => {
                for block in &msg.content {
                    match block {
                        ContentBlock::ToolResult {
                            call_id, content, ..
                        } => messages.push(
                            json!({"role": "tool", "tool_call_id": call_id, "content": content}),
                        ),
                        ContentBlock::Text { text } if !text.is_empty() => {
                            messages.push(json!({"role": "user", "content": text}));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    let limit_key = if official {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body.insert(limit_key.into(), json!(req.max_tokens));
    if !req.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(
                req.tools
                    .iter()
                    .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
                    .collect(),
            ),
        );
    }
    if let Some(schema) = &req.output_schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": "output", "schema": schema, "strict": true}}),
        );
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !req.stop_sequences.is_empty() {
        body.insert("stop".into(), json!(req.stop_sequences));
    }
    body.insert("stream".into(), json!(stream));
    if stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// Decodes a non-streaming Chat Completions response.
pub fn decode_response(v: &Value) -> Result<ChatResponse, String> {
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| {
            format!(
                "response has no choices: {}",
                crate::decode::excerpt(&v.to_string())
            )
        })?;
    let message = choice.get("message").ok_or("choice has no `message`")?;
    let mut out = ChatResponse {
        id: v.get("id").and_then(Value::as_str).map(str::to_string),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        ..Default::default()
    };
    if let Some(text) = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        out.content.push(ContentBlock::text(text));
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, c) in calls.iter().enumerate() {
        let f = c.get("function").unwrap_or(&Value::Null);
        let arguments = match f.get("arguments") {
            Some(Value::String(s)) => parse_arguments(s),
            Some(other) => other.clone(),
            None => json!({}),
        };
        out.content.push(ContentBlock::ToolCall(ToolCall {
            id: c
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}")),
            name: f
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            arguments,
        }));
    }
    out.stop_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(|r| decode::finish_reason(r, !calls.is_empty()));
    if let Some(u) = v.get("usage") {
        out.usage = decode::usage_from(u);
    }
    Ok(out)
}
