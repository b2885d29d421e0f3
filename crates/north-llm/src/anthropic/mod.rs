//! The Anthropic Messages API backend.

mod decode;

use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ChatRequest, ChatResponse, ContentBlock, Message, Role, ToolCall};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use decode::AnthropicDecoder;

use crate::error::LlmError;
use crate::key::ApiKey;
use crate::transport::{HttpCall, Transport, TransportConfig};
use crate::{Backend, DeltaStream};

const P: &str = "anthropic";

/// The default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The default API base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
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
        let transport = Transport::new(P, config.transport, Some(key.clone()))?;
        Ok(AnthropicBackend {
            transport: Arc::new(transport),
            url,
            key,
        })
    }

    fn call(&self, request: &ChatRequest, stream: bool) -> Result<HttpCall, LlmError> {
        HttpCall::json(self.url.clone(), &encode_request(request, stream))
            .secret_header("x-api-key", self.key.expose())
            .and_then(|c| c.header("anthropic-version", API_VERSION))
            .map_err(|message| LlmError::Config {
                provider: P,
                message,
            })
    }
}

impl Backend for AnthropicBackend {
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
                .stream(call, AnthropicDecoder::new, cancel),
            Err(e) => Box::pin(futures::stream::once(async move { Err(e) })),
        }
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn wire_role(role: Role) -> &'static str {
    match role {
        Role::Assistant => "assistant",
        // Tool results travel in user messages; system text is lifted out.
        Role::User | Role::Tool | Role::System => "user",
    }
}

fn encode_block(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::ToolCall(ToolCall {
            id,
            name,
            arguments,
        }) => {
            let input = match arguments {
                Value::Object(_) => arguments.clone(),
                // The model produced non-object arguments; the API needs an object.
                other => json!({ "_raw": other }),
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        ContentBlock::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            let mut v = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
            if *is_error {
                v["is_error"] = Value::Bool(true);
            }
            v
        }
    }
}

/// Encodes a provider-neutral request as a Messages API body.
///
/// Prompt caching: breakpoints go on the last tool definition, the system
/// prompt and the newest message, so each turn of a long session re-reads
/// the whole prefix from cache.
pub fn encode_request(req: &ChatRequest, stream: bool) -> Value {
    let mut system_text: Vec<String> = req.system.iter().cloned().collect();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for Message { role, content } in &req.messages {
        if *role == Role::System {
            system_text.push(
                Message {
                    role: *role,
                    content: content.clone(),
                }
                .text_content(),
            );
            continue;
        }
        let role = wire_role(*role);
        let blocks: Vec<Value> = content
            .iter()
            .filter(|b| !matches!(b, ContentBlock::Text { text } if text.is_empty()))
            .map(encode_block)
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    if let Some(schema) = &req.output_schema {
        system_text.push(format!(
            "Answer with a single JSON value that validates against this JSON Schema, and nothing else:\n{schema}"
        ));
    }
    if let Some((_, blocks)) = messages.last_mut()
        && let Some(Value::Object(last)) = blocks.last_mut()
    {
        last.insert("cache_control".into(), ephemeral());
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("max_tokens".into(), json!(req.max_tokens));
    let system = system_text.join("\n\n");
    if !system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}]),
        );
    }
    body.insert(
        "messages".into(),
        Value::Array(
            messages
                .into_iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect(),
        ),
    );
    if !req.tools.is_empty() {
        let n = req.tools.len();
        let tools = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut v = json!({"name": t.name, "description": t.description, "input_schema": t.input_schema});
                if i + 1 == n {
                    v["cache_control"] = ephemeral();
                }
                v
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !req.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(req.stop_sequences));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

/// Decodes a non-streaming Messages API response.
pub fn decode_response(v: &Value) -> Result<ChatResponse, String> {
    let content = v.get("content").and_then(Value::as_array).ok_or_else(|| {
        format!(
            "response has no `content` array: {}",
            crate::decode::excerpt(&v.to_string())
        )
    })?;
    let mut out = ChatResponse {
        id: v.get("id").and_then(Value::as_str).map(str::to_string),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        ..Default::default()
    };
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => out.content.push(ContentBlock::text(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            )),
            Some("tool_use") => out.content.push(ContentBlock::ToolCall(ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
            })),
            other => {
                tracing::warn!(provider = P, block_type = ?other, "unknown content block in response skipped")
            }
        }
    }
    out.stop_reason = v
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(decode::stop_reason);
    out.stop_sequence = v
        .get("stop_sequence")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(u) = v.get("usage") {
        out.usage = decode::usage_from(u);
    }
    Ok(out)
}
