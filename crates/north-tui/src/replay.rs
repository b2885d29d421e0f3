//! A stored conversation as the timeline showed it live (for `/resume`
//! and resumed sessions).

use north_protocol::{ContentBlock, Message, Role};

use crate::transcript::Item;

/// The timeline of a stored conversation, as it looked live: the user's
/// messages, the answers, each tool call's intent line and its result.
pub(crate) fn replay(messages: &[Message]) -> Vec<Item> {
    let mut names: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut items = Vec::new();
    for m in messages {
        let mut text = String::new();
        for block in &m.content {
            match block {
                ContentBlock::Text { text: t } => text.push_str(t),
                ContentBlock::ToolCall(call) => {
                    flush_text(&mut items, m.role, &mut text);
                    names.insert(call.id.clone(), call.name.clone());
                    items.push(Item::Intent(north_agent::intent::intent_line(
                        &call.name,
                        &call.arguments,
                    )));
                }
                ContentBlock::ToolResult {
                    call_id, content, ..
                } => {
                    let tool = names.get(call_id).cloned().unwrap_or_default();
                    let outcome: north_protocol::ToolOutcome = serde_json::from_str(content)
                        .unwrap_or_else(|_| {
                            north_protocol::ToolOutcome::ok(content.clone().into())
                        });
                    items.push(Item::Result {
                        summary: north_agent::intent::summary(&tool, &outcome),
                        ok: outcome.ok,
                        tool,
                        has_details: false,
                    });
                }
                _ => {}
            }
        }
        flush_text(&mut items, m.role, &mut text);
    }
    items
}

fn flush_text(items: &mut Vec<Item>, role: Role, text: &mut String) {
    let (visible, _) = north_agent::blocks::split_blocks(text);
    let visible = visible.trim().to_string();
    text.clear();
    if visible.is_empty() {
        return;
    }
    match role {
        Role::User => items.push(Item::User(visible)),
        Role::Assistant => items.push(Item::Assistant(visible)),
        _ => {}
    }
}
