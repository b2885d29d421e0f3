//! `north sessions list|show|export`: what sessions a project has, and what
//! was said and done in one.

use std::process::ExitCode;

use anyhow::Context;
use north_agent::store::SessionStore;
use north_protocol::{Checkpoint, ContentBlock, Message, Role};
use serde_json::json;

use crate::args::{SessionsArgs, SessionsCommand};

/// Runs `north sessions`.
pub fn main(args: SessionsArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let store = SessionStore::new(&root);
    match args.command {
        SessionsCommand::List { json } => {
            let sessions = store.list()?;
            if sessions.is_empty() && !json {
                println!("no sessions in {}", store.dir().display());
            }
            for (s, cp) in sessions {
                let name = s.name();
                let Some(cp) = cp else {
                    if !json {
                        println!("{}  (empty)", s.id);
                    }
                    continue;
                };
                let title = title(&cp);
                let messages = cp.messages.len().max(cp.recent_messages.len());
                if json {
                    println!(
                        "{}",
                        json!({"id": s.id, "name": name, "updated_ts": cp.updated_ts, "messages": messages, "title": title})
                    );
                } else {
                    let named = name.map(|n| format!("[{n}]  ")).unwrap_or_default();
                    println!(
                        "{}  {}  {:>4} msgs  {named}{}",
                        s.id,
                        date(cp.updated_ts),
                        messages,
                        title
                    );
                }
            }
        }
        SessionsCommand::Show { id, json } => {
            let session = store.resolve(&id)?;
            let cp = session
                .load_checkpoint()?
                .with_context(|| format!("session {id} has nothing saved yet"))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&cp)?);
            } else {
                print!("{}", transcript(&cp));
            }
        }
        SessionsCommand::Export { id, output } => {
            let session = store.resolve(&id)?;
            let replayed = session.transcript()?;
            anyhow::ensure!(replayed.found, "session {id} has nothing saved yet");
            let markdown = north_agent::store::markdown(&id, &replayed);
            match output {
                Some(path) => {
                    north_agent::store::write_atomic(&path, markdown.as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!("wrote {} ({} bytes)", path.display(), markdown.len());
                }
                None => print!("{markdown}"),
            }
        }
        SessionsCommand::Import { paths } => {
            return crate::sessions_import::import(&root, &paths);
        }
        SessionsCommand::Rename { id, name } => {
            let session = store.resolve(&id)?;
            session.rename(&name)?;
            match session.name() {
                Some(name) => println!(
                    "session {} is named `{name}` (resume it with: north --resume '{name}')",
                    session.id
                ),
                None => println!("session {} has no name now", session.id),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The whole transcript as Markdown: what was condensed for the model
/// first (marked), then the conversation as the model sees it now.
/// The first line of the first user message, shortened.
fn title(cp: &Checkpoint) -> String {
    let first = cp
        .recent_messages
        .iter()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .unwrap_or_default();
    let line = first.lines().next().unwrap_or_default();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_string()
    }
}

/// `YYYY-MM-DD HH:MM` (UTC) of a Unix time; `-` for none.
fn date(ts: f64) -> String {
    if ts <= 0.0 {
        return "-".repeat(16);
    }
    let secs = ts as u64;
    let stamp = north_agent::store::utc_stamp(secs);
    // `YYYYMMDD-HHMMSS` → `YYYY-MM-DD HH:MM`
    format!(
        "{}-{}-{} {}:{}",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13]
    )
}

/// A readable transcript: who said what, tool calls and results in short.
fn transcript(cp: &Checkpoint) -> String {
    let mut out = format!("session {}  (revision {})\n", cp.session_id, cp.revision);
    if let Some(model) = &cp.model {
        out.push_str(&format!("model: {} {}\n", model.provider, model.model));
    }
    let state = north_agent::context::state_text(&cp.state);
    if !state.is_empty() {
        out.push_str(&format!("\n{state}\n"));
    }
    if cp.messages.is_empty() {
        for m in &cp.recent_messages {
            out.push_str(&format!("\n{}:\n{}\n", m.role.as_str(), m.content));
        }
        return out;
    }
    for m in &cp.messages {
        out.push_str(&message(m));
    }
    out
}

fn message(m: &Message) -> String {
    let mut out = String::new();
    let who = match m.role {
        Role::User => "you",
        Role::Assistant => "north",
        Role::Tool => "tools",
        Role::System => "system",
    };
    for block in &m.content {
        match block {
            ContentBlock::Text { text } if !text.trim().is_empty() => {
                out.push_str(&format!("\n{who}: {}\n", text.trim()));
            }
            ContentBlock::ToolCall(call) => {
                out.push_str(&format!(
                    "  → {} {}\n",
                    call.name,
                    short(&call.arguments.to_string(), 160)
                ));
            }
            ContentBlock::ToolResult {
                content, is_error, ..
            } => {
                let mark = if *is_error { "✗" } else { "↳" };
                out.push_str(&format!("  {mark} {}\n", short(content, 160)));
            }
            _ => {}
        }
    }
    out
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ⏎ ");
    if one_line.chars().count() > max {
        format!("{}…", one_line.chars().take(max - 1).collect::<String>())
    } else {
        one_line
    }
}
