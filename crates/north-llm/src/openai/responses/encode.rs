//! Encoding a provider-neutral request as a Responses API body.

use north_protocol::{ChatRequest, ContentBlock, Role, ServerTool};
use serde_json::{Map, Value, json};

use super::super::chat::{arguments_text, effort_name};
use crate::catalog;

fn message(role: &str, kind: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
}

/// The input items of one message, in order.
fn items(role: Role, content: &[ContentBlock], out: &mut Vec<Value>) {
    for block in content {
        match (role, block) {
            (_, ContentBlock::Text { text }) if text.is_empty() => {}
            (Role::Assistant, ContentBlock::Text { text }) => {
                out.push(message("assistant", "output_text", text));
            }
            (Role::System, ContentBlock::Text { text }) => {
                out.push(message("developer", "input_text", text));
            }
            (_, ContentBlock::Text { text }) => out.push(message("user", "input_text", text)),
            (_, ContentBlock::ToolCall(call)) => out.push(json!({
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": arguments_text(&call.arguments),
            })),
            (
                _,
                ContentBlock::ToolResult {
                    call_id, content, ..
                },
            ) => out.push(json!({"type": "function_call_output", "call_id": call_id, "output": content})),
            // Without its encrypted content a reasoning item could only be
            // sent by id, and nothing is stored: it is left out.
            (
                _,
                ContentBlock::Reasoning {
                    summary,
                    encrypted_content: Some(encrypted),
                    ..
                },
            ) => out.push(json!({
                "type": "reasoning",
                "summary": summary.iter().map(|s| json!({"type": "summary_text", "text": s})).collect::<Vec<_>>(),
                "encrypted_content": encrypted,
            })),
            // An image (the user's, or one a tool read) is a user input:
            // after the tool output it belongs to.
            (_, ContentBlock::Image { media_type, data }) => out.push(json!({
                "type": "message",
                "role": "user",
                "content": [{"type": "input_image", "image_url": format!("data:{media_type};base64,{data}")}],
            })),
            // The Responses API reads the pages' text, as Chat does.
            (_, ContentBlock::Document { name, pages, .. }) => out.push(message(
                "user",
                "input_text",
                &ContentBlock::document_text(name, pages),
            )),
            // A web search the API ran is not sent back: with `store:
            // false` it could only be referred to by an id nothing keeps,
            // and the answer that followed it already says what it found.
            (_, ContentBlock::Hosted { .. }) => {}
            // Another provider's thinking has no place here.
            (_, ContentBlock::Reasoning { .. })
            | (_, ContentBlock::Thinking { .. })
            | (_, ContentBlock::RedactedThinking { .. }) => {}
        }
    }
}

/// Encodes a provider-neutral request as a Responses API body: `store:
/// false`, and for reasoning models the encrypted reasoning included and a
/// reasoning summary requested.
pub fn encode_request(req: &ChatRequest, stream: bool) -> Value {
    let mut input = Vec::new();
    for msg in &req.messages {
        items(msg.role, &msg.content, &mut input);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("instructions".into(), json!(system));
    }
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(
                req.tools
                    .iter()
                    .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema, "strict": false}))
                    .collect(),
            ),
        );
    }
    if req.server_tools.contains(&ServerTool::WebSearch) {
        let tools = body
            .entry("tools")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(tools) = tools.as_array_mut() {
            tools.push(json!({"type": "web_search"}));
        }
    }
    body.insert("max_output_tokens".into(), json!(req.max_tokens));
    body.insert("store".into(), json!(false));
    if let Some(key) = &req.cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if catalog::is_reasoning_model(&req.model) {
        let mut reasoning = Map::new();
        if let Some(effort) = effort_name(req.reasoning) {
            reasoning.insert("effort".into(), json!(effort));
        }
        reasoning.insert("summary".into(), json!("auto"));
        body.insert("reasoning".into(), Value::Object(reasoning));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    } else if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(schema) = &req.output_schema {
        body.insert(
            "text".into(),
            json!({"format": {"type": "json_schema", "name": "output", "schema": schema, "strict": true}}),
        );
    }
    if !req.stop_sequences.is_empty() {
        tracing::debug!("the Responses API has no stop sequences; they are not sent");
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}
