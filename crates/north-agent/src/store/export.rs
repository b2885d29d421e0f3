//! A session as Markdown, for people: what `north sessions export` writes.

use north_protocol::{ContentBlock, Message, Role};

use super::Replayed;

/// A session's whole transcript as Markdown: every message, tool call and
/// result, and where the model's view was condensed (`north sessions
/// export`, a server's `_north/session/export`).
pub fn markdown(id: &str, replayed: &Replayed) -> String {
    let mut out = format!("# North session {id}\n");
    if let Some(model) = &replayed.model {
        out.push_str(&format!("\nModel: {} `{}`\n", model.provider, model.model));
    }
    for m in &replayed.earlier {
        out.push_str(&markdown_message(m));
    }
    let mut view = replayed.messages.iter();
    if !replayed.earlier.is_empty() || replayed.lead {
        if replayed.lead {
            view.next();
        }
        out.push_str("\n---\n\n> **Condensed.** The messages above were replaced, for the model, by this summary:\n");
        for line in replayed.state.episode_summary.lines() {
            out.push_str(&format!("> {line}\n"));
        }
        out.push_str("\n---\n");
    }
    for m in view {
        out.push_str(&markdown_message(m));
    }
    out
}

fn markdown_message(m: &Message) -> String {
    let mut out = String::new();
    let who = match m.role {
        Role::User => "You",
        Role::Assistant => "North",
        Role::Tool => "Tool results",
        Role::System => "System",
    };
    let head = |out: &mut String| {
        if out.is_empty() {
            out.push_str(&format!("\n## {who}\n"));
        }
    };
    for block in &m.content {
        match block {
            ContentBlock::Text { text } if !text.trim().is_empty() => {
                head(&mut out);
                out.push_str(&format!("\n{}\n", text.trim()));
            }
            ContentBlock::ToolCall(call) => {
                head(&mut out);
                let args = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                out.push_str(&format!(
                    "\n**Tool call** `{}` ({})\n\n{}",
                    call.name,
                    call.id,
                    fenced("json", &args)
                ));
            }
            ContentBlock::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                head(&mut out);
                let what = if *is_error { "failed" } else { "result" };
                out.push_str(&format!(
                    "\n**{what}** ({call_id})\n\n{}",
                    fenced("", content)
                ));
            }
            _ => {}
        }
    }
    out
}

/// `text` in a code fence longer than any backtick run inside it.
fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", text.trim_end())
}
