//! A stored conversation as the timeline showed it live (for `/resume`
//! and resumed sessions).

use north_protocol::{ContentBlock, Message, Role};

use crate::transcript::Item;

/// The timeline of a stored conversation, as it looked live: the user's
/// messages, the answers, each tool call's intent line and its result.
pub(crate) fn replay(messages: &[Message], tools: &north_agent::Describer) -> Vec<Item> {
    let mut names: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut items = Vec::new();
    for m in messages {
        let mut text = String::new();
        for block in &m.content {
            match block {
                // An interrupt, where it happened, as it showed live.
                b if north_agent::is_interrupted_note(b) => {
                    flush_text(&mut items, m.role, &mut text);
                    items.push(Item::Interrupted);
                }
                ContentBlock::Text { text: t } => text.push_str(t),
                ContentBlock::ToolCall(call) => {
                    flush_text(&mut items, m.role, &mut text);
                    names.insert(call.id.clone(), call.name.clone());
                    items.push(Item::Intent(tools.describe(call).1));
                }
                ContentBlock::ToolResult {
                    call_id, content, ..
                } => {
                    let tool = names.get(call_id).cloned().unwrap_or_default();
                    let outcome: north_protocol::ToolOutcome = serde_json::from_str(content)
                        .unwrap_or_else(|_| {
                            north_protocol::ToolOutcome::ok(content.clone().into())
                        });
                    let value = serde_json::to_value(&outcome).ok();
                    items.push(Item::result(
                        tool.clone(),
                        outcome.ok,
                        tools.summary(&tool, &outcome),
                        value.as_ref(),
                        false,
                        false,
                    ));
                }
                _ => {}
            }
        }
        flush_text(&mut items, m.role, &mut text);
    }
    items
}

fn flush_text(items: &mut Vec<Item>, role: Role, text: &mut String) {
    let (visible, _) = north_protocol::blocks::split_blocks(text);
    let visible = visible.trim().to_string();
    text.clear();
    if visible.is_empty() {
        return;
    }
    match role {
        Role::User => match user_command(&visible) {
            Some(ran) => items.extend(ran),
            // The user's own words, without what hooks added to them.
            None => {
                let own = north_agent::hooks::without_context(&visible);
                if !own.trim().is_empty() {
                    items.push(Item::User(own));
                }
            }
        },
        Role::Assistant => items.push(Item::Assistant(visible)),
        _ => {}
    }
}

/// A command the user ran (`!cmd`), stored as the note the model reads,
/// shown again as it was live: the "You ran" line and its result.
fn user_command(text: &str) -> Option<Vec<Item>> {
    let rest = text.strip_prefix("[I ran a command myself in the project shell: `")?;
    let (command, rest) = rest.split_once("`; ")?;
    let rest = rest.strip_suffix(']').unwrap_or(rest);
    let mut items = vec![Item::Intent(format!("You ran: `{command}`"))];
    let Some(body) = rest.strip_prefix("exit code ") else {
        items.push(Item::Result {
            tool: "shell_run".into(),
            ok: false,
            summary: rest.to_string(),
            has_details: false,
            tail: Vec::new(),
        });
        return Some(items);
    };
    let (code, streams) = body.split_once('\n').unwrap_or((body, ""));
    let (stdout, stderr) = streams
        .strip_prefix("stdout:\n")
        .and_then(|s| s.split_once("\nstderr:\n"))
        .unwrap_or(("", ""));
    let outcome = serde_json::json!({"output": {
        "exitCode": code.trim().parse::<i64>().ok(),
        "stdout": stdout,
        "stderr": stderr,
    }});
    let lines = stdout.lines().count() + stderr.lines().count();
    items.push(Item::result(
        "shell_run".into(),
        true,
        format!("exit code {}, {lines} line(s) of output", code.trim()),
        Some(&outcome),
        false,
        true,
    ));
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_the_user_ran_replays_as_it_showed_live() {
        let items = user_command(
            "[I ran a command myself in the project shell: `echo hi`; exit code 0\nstdout:\nhi\n\nstderr:\n]",
        )
        .unwrap();
        assert_eq!(items[0], Item::Intent("You ran: `echo hi`".into()));
        match &items[1] {
            Item::Result {
                ok, tail, summary, ..
            } => {
                assert!(ok);
                assert_eq!(summary, "exit code 0, 1 line(s) of output");
                assert_eq!(tail, &vec![(false, "hi".to_string())]);
            }
            other => panic!("{other:?}"),
        }
        assert!(user_command("just words").is_none());
    }
}
