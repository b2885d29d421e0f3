//! Decoding a complete (non-streaming) Responses API response.

use north_protocol::{ChatResponse, ContentBlock, StopReason, ToolCall};
use serde_json::Value;

use super::decode::{incomplete_reason, reasoning_item, usage_from};
use crate::accumulate::parse_arguments;
use crate::decode::str_field;
use crate::error::ResponseError;

/// Decodes a non-streaming Responses API response.
pub fn decode_response(v: &Value) -> Result<ChatResponse, ResponseError> {
    if str_field(v, "status") == Some("failed") {
        let err = v.get("error").unwrap_or(&Value::Null);
        return Err(ResponseError::Failed {
            error_type: str_field(err, "code").unwrap_or("error").to_string(),
            message: str_field(err, "message")
                .unwrap_or("(no message)")
                .to_string(),
        });
    }
    let output = v
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| ResponseError::missing("`output` array", v))?;
    let mut out = ChatResponse {
        id: str_field(v, "id").map(str::to_string),
        model: str_field(v, "model").map(str::to_string),
        ..Default::default()
    };
    let mut calls = 0;
    for item in output {
        match str_field(item, "type") {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let text = str_field(part, "text").or_else(|| str_field(part, "refusal"));
                    if let Some(text) = text.filter(|t| !t.is_empty()) {
                        out.content.push(ContentBlock::text(text));
                    }
                }
            }
            Some("function_call") => {
                calls += 1;
                out.content.push(ContentBlock::ToolCall(ToolCall {
                    id: str_field(item, "call_id").unwrap_or_default().to_string(),
                    name: str_field(item, "name").unwrap_or_default().to_string(),
                    arguments: parse_arguments(str_field(item, "arguments").unwrap_or_default()),
                }));
            }
            Some("reasoning") => out.content.push(reasoning_item(item).into_block()),
            other => {
                tracing::warn!(provider = "openai", item_type = ?other, "unknown output item in response skipped")
            }
        }
    }
    out.stop_reason = Some(match str_field(v, "status") {
        Some("incomplete") => incomplete_reason(v),
        _ if calls > 0 => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    });
    if let Some(u) = v.get("usage") {
        out.usage = usage_from(u);
    }
    Ok(out)
}
