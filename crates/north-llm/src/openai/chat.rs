//! Chat Completions request encoding and complete-response decoding, for
//! OpenAI and every compatible server.

use north_protocol::{
    ChatRequest, ChatResponse, ContentBlock, Message, ReasoningEffort, Role, ToolCall,
};
use serde_json::{Map, Value, json};

use super::decode::{finish_reason, usage_from};
use crate::accumulate::parse_arguments;
use crate::error::ResponseError;

/// Tool-call arguments as the JSON text the API wants. Arguments that were
/// not a JSON object (a call cut off by the token limit keeps its raw text
/// as a string) are wrapped, so what goes back always parses: servers such
/// as llama.cpp refuse a request whose history holds invalid JSON.
pub(crate) fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Object(_) => arguments.to_string(),
        other => json!({ "_raw": other }).to_string(),
    }
}

/// The `reasoning_effort` value for `effort`, if one is sent.
pub(crate) fn effort_name(effort: Option<ReasoningEffort>) -> Option<&'static str> {
    match effort? {
        ReasoningEffort::Off => None,
        e => Some(e.as_str()),
    }
}

/// A user message's content parts: text, images as data URLs, documents
/// as the text of their pages.
fn user_parts(content: &[ContentBlock]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.is_empty() => {
                Some(json!({"type": "text", "text": text}))
            }
            ContentBlock::Image { media_type, data } => Some(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{media_type};base64,{data}")},
            })),
            ContentBlock::Document { name, pages, .. } => Some(json!({
                "type": "text",
                "text": ContentBlock::document_text(name, pages),
            })),
            _ => None,
        })
        .collect()
}

/// One message in Chat Completions' terms, added to `messages` (a tool
/// message may become several; an empty assistant turn none).
fn encode_message(msg: &Message, messages: &mut Vec<Value>) {
    match msg.role {
        Role::System => messages.push(json!({"role": "system", "content": msg.text_content()})),
        Role::User
            if msg
                .content
                .iter()
                .any(|b| b.is_image() || matches!(b, ContentBlock::Document { .. })) =>
        {
            messages.push(json!({"role": "user", "content": user_parts(&msg.content)}));
        }
        Role::User => messages.push(json!({"role": "user", "content": msg.text_content()})),
        Role::Assistant => {
            let text = msg.text_content();
            let calls: Vec<Value> = msg
                .tool_calls()
                .map(|c| {
                    json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_text(&c.arguments)}})
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                return;
            }
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
                    } => messages
                        .push(json!({"role": "tool", "tool_call_id": call_id, "content": content})),
                    ContentBlock::Text { text } if !text.is_empty() => {
                        messages.push(json!({"role": "user", "content": text}));
                    }
                    _ => {}
                }
            }
            // Images a tool read: a tool message holds only text, so
            // they follow as the user's.
            let images: Vec<ContentBlock> = msg
                .content
                .iter()
                .filter(|b| b.is_image())
                .cloned()
                .collect();
            if !images.is_empty() {
                let mut parts =
                    vec![json!({"type": "text", "text": "The image the tool returned:"})];
                parts.extend(user_parts(&images));
                messages.push(json!({"role": "user", "content": parts}));
            }
        }
    }
}

/// Encodes a provider-neutral request as a Chat Completions body.
/// `official`: OpenAI's own endpoint, which wants `max_completion_tokens`
/// and accepts `reasoning_effort`; compatible servers get `max_tokens`.
/// Reasoning blocks never go back: Chat Completions has no place for them.
pub fn encode_request(req: &ChatRequest, stream: bool, official: bool) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for msg in &req.messages {
        encode_message(msg, &mut messages);
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
    if official && let Some(effort) = effort_name(req.reasoning) {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    // Only OpenAI's own endpoint: a strict compatible server may refuse a
    // field it does not know.
    if official && let Some(key) = &req.cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
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
pub fn decode_response(v: &Value) -> Result<ChatResponse, ResponseError> {
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| ResponseError::missing("`choices`", v))?;
    let message = choice
        .get("message")
        .ok_or_else(|| ResponseError::missing("`message` in its first choice", v))?;
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
        .map(|r| finish_reason(r, !calls.is_empty()));
    if let Some(u) = v.get("usage") {
        out.usage = usage_from(u);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_arguments_are_wrapped_as_valid_json() {
        let text = arguments_text(&Value::String("{\"path\": \"READ".into()));
        let back: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(back, json!({"_raw": "{\"path\": \"READ"}));
        assert_eq!(arguments_text(&json!({"a": 1})), r#"{"a":1}"#);
    }
}
