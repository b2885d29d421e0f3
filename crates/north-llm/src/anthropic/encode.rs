//! Encoding a provider-neutral request as a Messages API body.

use north_protocol::{
    ChatRequest, ContentBlock, HostedApi, Message, ReasoningEffort, Role, ServerTool, ToolCall,
};
use serde_json::{Map, Value, json};

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

/// A tool-use id the API accepts (`^[a-zA-Z0-9_-]+$`). Ids from other
/// providers or the text protocol can hold other characters; the same
/// mapping applies to the call and its result, so they still pair up.
fn wire_id(id: &str) -> String {
    let clean = north_protocol::wire_safe(id);
    if clean.is_empty() {
        "toolu_unnamed".to_string()
    } else {
        clean
    }
}

/// A block as the API wants it; `None` for what it must not receive:
/// another provider's reasoning, and thinking whose signature never
/// arrived (the API rejects an unsigned thinking block).
fn encode_block(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } if text.is_empty() => return None,
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
            json!({"type": "tool_use", "id": wire_id(id), "name": name, "input": input})
        }
        ContentBlock::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            let mut v =
                json!({"type": "tool_result", "tool_use_id": wire_id(call_id), "content": content});
            if *is_error {
                v["is_error"] = Value::Bool(true);
            }
            v
        }
        ContentBlock::Thinking {
            thinking,
            signature: Some(signature),
        } => json!({"type": "thinking", "thinking": thinking, "signature": signature}),
        ContentBlock::Thinking {
            signature: None, ..
        } => return None,
        ContentBlock::RedactedThinking { data } => {
            json!({"type": "redacted_thinking", "data": data})
        }
        ContentBlock::Reasoning { .. } => return None,
        ContentBlock::Hosted {
            api: HostedApi::Anthropic,
            raw,
        } => raw.clone(),
        ContentBlock::Hosted { .. } => return None,
        ContentBlock::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }),
        ContentBlock::Document {
            name,
            media_type,
            data,
            ..
        } => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": media_type, "data": data},
            "title": name,
        }),
    })
}

/// An image a tool returned goes inside its tool result (the API takes
/// images there), not beside it.
fn nest_tool_images(blocks: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let is_image = block["type"] == "image";
        match out.last_mut() {
            Some(prev) if is_image && prev["type"] == "tool_result" => {
                if let Value::String(text) = prev["content"].take() {
                    prev["content"] = json!([{"type": "text", "text": text}]);
                }
                if let Some(parts) = prev["content"].as_array_mut() {
                    parts.push(block);
                }
            }
            _ => out.push(block),
        }
    }
    out
}

/// The thinking budget for `effort` under `max_tokens`, or None when
/// thinking stays off. The API needs at least 1,024 tokens of budget and
/// room for the answer after it.
pub fn thinking_budget(effort: Option<ReasoningEffort>, max_tokens: u32) -> Option<u32> {
    let wanted = match effort? {
        ReasoningEffort::Off => return None,
        ReasoningEffort::Low => 2_048,
        ReasoningEffort::Medium => 8_192,
        ReasoningEffort::High => 24_576,
    };
    let budget = wanted.min(max_tokens / 4 * 3);
    (budget >= 1_024).then_some(budget)
}

/// The system text (the request's and any system messages') and the
/// messages in the API's roles, consecutive ones of a role merged.
fn conversation(req: &ChatRequest) -> (Vec<String>, Vec<(&'static str, Vec<Value>)>) {
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
        let tool = *role == Role::Tool;
        let role = wire_role(*role);
        let blocks: Vec<Value> = content.iter().filter_map(encode_block).collect();
        let blocks = if tool {
            nest_tool_images(blocks)
        } else {
            blocks
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    (system_text, messages)
}

/// The tool definitions, a cache breakpoint on the last, and the hosted
/// web search when asked for; `None` when there is none.
fn tools(req: &ChatRequest) -> Option<Value> {
    let n = req.tools.len();
    let mut tools: Vec<Value> = req
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
    if req.server_tools.contains(&ServerTool::WebSearch) {
        tools.push(json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5}));
    }
    (!tools.is_empty()).then_some(Value::Array(tools))
}

/// Encodes a provider-neutral request as a Messages API body.
///
/// Prompt caching: breakpoints go on the last tool definition, the system
/// prompt and the newest message, so each turn of a long session re-reads
/// the whole prefix from cache. Thinking and redacted thinking go back
/// unchanged (the API checks their signatures); reasoning items of other
/// providers are left out.
pub fn encode_request(req: &ChatRequest, stream: bool) -> Value {
    let (mut system_text, mut messages) = conversation(req);
    if let Some(schema) = &req.output_schema {
        system_text.push(format!(
            "Answer with a single JSON value that validates against this JSON Schema, and nothing else:\n{schema}"
        ));
    }
    // Thinking blocks cannot carry a cache breakpoint.
    if let Some((_, blocks)) = messages.last_mut()
        && let Some(Value::Object(last)) = blocks
            .iter_mut()
            .rev()
            .find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
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
    if let Some(tools) = tools(req) {
        body.insert("tools".into(), tools);
    }
    let thinking = thinking_budget(req.reasoning, req.max_tokens);
    if let Some(budget) = thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    // With thinking on, the API accepts only the default temperature.
    if let Some(t) = req.temperature.filter(|_| thinking.is_none()) {
        body.insert("temperature".into(), json!(t));
    }
    if !req.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(req.stop_sequences));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_mapped_to_what_the_api_accepts() {
        assert_eq!(wire_id("call_1.2:x"), "call_1_2_x");
        assert_eq!(wire_id("toolu_01-A"), "toolu_01-A");
        assert_eq!(wire_id(""), "toolu_unnamed");
    }

    #[test]
    fn thinking_budget_leaves_room_for_the_answer() {
        assert_eq!(
            thinking_budget(Some(ReasoningEffort::High), 32_000),
            Some(24_000)
        );
        assert_eq!(
            thinking_budget(Some(ReasoningEffort::Low), 8_192),
            Some(2_048)
        );
        assert_eq!(thinking_budget(Some(ReasoningEffort::Low), 1_000), None);
        assert_eq!(thinking_budget(Some(ReasoningEffort::Off), 32_000), None);
        assert_eq!(thinking_budget(None, 32_000), None);
    }
}
