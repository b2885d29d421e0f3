//! Decoding a complete (non-streaming) Messages API response.

use north_protocol::{ChatResponse, ContentBlock, ToolCall};
use serde_json::{Value, json};

use super::decode::{stop_reason, usage_from};
use crate::error::ResponseError;

const P: &str = "anthropic";

fn text_of(block: &Value, key: &str) -> String {
    block
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Decodes a non-streaming Messages API response.
pub fn decode_response(v: &Value) -> Result<ChatResponse, ResponseError> {
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ResponseError::missing("`content` array", v))?;
    let mut out = ChatResponse {
        id: v.get("id").and_then(Value::as_str).map(str::to_string),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        ..Default::default()
    };
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => out.content.push(ContentBlock::text(text_of(block, "text"))),
            Some("tool_use") => out.content.push(ContentBlock::ToolCall(ToolCall {
                id: text_of(block, "id"),
                name: text_of(block, "name"),
                arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
            })),
            Some("thinking") => out.content.push(ContentBlock::Thinking {
                thinking: text_of(block, "thinking"),
                signature: block
                    .get("signature")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }),
            Some("redacted_thinking") => out.content.push(ContentBlock::RedactedThinking {
                data: text_of(block, "data"),
            }),
            Some("server_tool_use" | "web_search_tool_result") => {
                out.content.push(ContentBlock::Hosted {
                    api: north_protocol::HostedApi::Anthropic,
                    raw: block.clone(),
                })
            }
            other => {
                tracing::warn!(provider = P, block_type = ?other, "unknown content block in response skipped")
            }
        }
    }
    out.stop_reason = v
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(stop_reason);
    out.stop_sequence = v
        .get("stop_sequence")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(u) = v.get("usage") {
        out.usage = usage_from(u);
    }
    Ok(out)
}
