//! `north sessions import FILE|DIR`: conversations from Claude Code
//! (`~/.claude/projects/*/SESSION.jsonl`), Codex (rollout JSONL under
//! `~/.codex/sessions/`) and Gemini CLI (saved chats, `checkpoint-*.json`,
//! and session files) as North sessions you resume with `--resume`.
//!
//! Messages keep their words; a tool call North has an equivalent for
//! (a shell command, a file read, an edit, a search) becomes North's call
//! with its result, so the model sees what happened as it would have in
//! North; any other call and its result are kept as text.

use std::path::{Path, PathBuf};

use anyhow::Context;
use north_protocol::{ContentBlock, Message, ModelRef, Role, ToolCall};
use serde_json::{Value, json};

/// The tool a transcript came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Claude Code session JSONL.
    ClaudeCode,
    /// Codex rollout JSONL.
    Codex,
    /// Gemini CLI saved chat (JSON).
    Gemini,
}

impl Tool {
    fn label(self) -> &'static str {
        match self {
            Tool::ClaudeCode => "claude-code",
            Tool::Codex => "codex",
            Tool::Gemini => "gemini-cli",
        }
    }
}

/// A transcript read: which tool wrote it, its messages, its model.
#[derive(Debug)]
pub struct Transcript {
    /// Which tool.
    pub tool: Tool,
    /// As North's messages.
    pub messages: Vec<Message>,
    /// The model that answered last (when the transcript says).
    pub model: Option<String>,
}

/// Imports `paths` (files, or directories searched for transcripts) into
/// the sessions of `root`; prints one line per session.
pub fn import(root: &Path, paths: &[PathBuf]) -> anyhow::Result<std::process::ExitCode> {
    let store = north_agent::store::SessionStore::new(root);
    let mut files = Vec::new();
    for p in paths {
        collect(p, 0, &mut files).with_context(|| format!("cannot read {}", p.display()))?;
    }
    anyhow::ensure!(
        !files.is_empty(),
        "no transcript found in {} (Claude Code: ~/.claude/projects/*/*.jsonl, Codex: ~/.codex/sessions/**/rollout-*.jsonl, Gemini CLI: ~/.gemini/tmp/*/checkpoint-*.json)",
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut failed = 0;
    for file in files {
        match read(&file) {
            Ok(t) if t.messages.is_empty() => {
                println!("skipped {}: no conversation in it", file.display());
            }
            Ok(t) => {
                let model = ModelRef {
                    provider: t.tool.label().into(),
                    model: t.model.clone().unwrap_or_else(|| "unknown".into()),
                };
                let stem = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let short: String = stem
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .rev()
                    .take(8)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                let name = format!("{} {short}", t.tool.label());
                let origin = json!({
                    "imported_from": t.tool.label(),
                    "file": file.display().to_string(),
                    "messages": t.messages.len(),
                });
                let session = store.import(&t.messages, &model, &name, &origin)?;
                println!(
                    "imported {} ({} messages from {}) as session {} `{name}` — north --resume {}",
                    file.display(),
                    t.messages.len(),
                    t.tool.label(),
                    session.id,
                    session.id
                );
            }
            Err(e) => {
                failed += 1;
                eprintln!("north: {}: {e:#}", file.display());
            }
        }
    }
    Ok(if failed == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}

/// Transcripts under `path`: itself if a file, else `.jsonl`/`.json`
/// files a few levels down (Codex keeps `YYYY/MM/DD/`).
fn collect(path: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    if depth > 4 {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for e in entries {
        let is_transcript = e.extension().is_some_and(|x| x == "jsonl" || x == "json");
        if e.is_dir() {
            collect(&e, depth + 1, out)?;
        } else if is_transcript {
            out.push(e);
        }
    }
    Ok(())
}

/// Reads one transcript, telling the format from its content.
pub fn read(file: &Path) -> anyhow::Result<Transcript> {
    let text = std::fs::read_to_string(file).context("cannot read it")?;
    if let Ok(whole) = serde_json::from_str::<Value>(&text) {
        return gemini(&whole).context("not a Gemini CLI chat");
    }
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("neither JSON nor JSON lines")?;
    let codex = lines.iter().any(|l| {
        l.get("payload").is_some()
            || matches!(l["type"].as_str(), Some("session_meta" | "response_item"))
    });
    if codex {
        Ok(codex_rollout(&lines))
    } else if lines.iter().any(|l| l.get("message").is_some()) {
        Ok(claude_code(&lines))
    } else {
        // An old Codex rollout: the items themselves, one per line.
        Ok(codex_rollout(&lines))
    }
}

/// A call of another tool as North's, when North has the same tool.
fn north_call(tool: &str, args: &Value) -> Option<(String, Value)> {
    let s = |k: &str| args.get(k).and_then(Value::as_str).map(String::from);
    let path = || {
        s("file_path")
            .or_else(|| s("absolute_path"))
            .or_else(|| s("path"))
    };
    Some(match tool {
        "Bash" | "run_shell_command" => ("shell_run".into(), json!({"command": s("command")?})),
        "shell" | "local_shell" => {
            let command = match args.get("command") {
                Some(Value::Array(words)) => {
                    let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                    match words.as_slice() {
                        [sh, "-lc" | "-c", line] if sh.ends_with("sh") => (*line).to_string(),
                        _ => words.join(" "),
                    }
                }
                Some(Value::String(line)) => line.clone(),
                _ => return None,
            };
            ("shell_run".into(), json!({"command": command}))
        }
        "Read" | "read_file" => ("read_file".into(), json!({"path": path()?})),
        "Write" | "write_file" => (
            "edit_create_file".into(),
            json!({"path": path()?, "content": s("content")?}),
        ),
        "Edit" | "replace" => (
            "edit_replace_exact".into(),
            json!({"path": path()?, "old": s("old_string")?, "new": s("new_string")?}),
        ),
        "Glob" | "glob" => ("find_files".into(), json!({"pattern": s("pattern")?})),
        "Grep" | "search_file_content" => {
            let mut a = json!({"pattern": s("pattern")?});
            if let Some(p) = s("path") {
                a["path"] = json!(p);
            }
            ("search_text".into(), a)
        }
        _ => return None,
    })
}

/// Builds North messages: consecutive pieces of one role join one message.
#[derive(Default)]
struct Builder {
    messages: Vec<Message>,
    /// Calls kept as North's (their results follow as results), by id.
    structured: std::collections::HashSet<String>,
}

impl Builder {
    fn push(&mut self, role: Role, block: ContentBlock) {
        match self.messages.last_mut() {
            Some(m) if m.role == role => m.content.push(block),
            _ => self.messages.push(Message {
                role,
                content: vec![block],
            }),
        }
    }

    fn text(&mut self, role: Role, text: &str) {
        if !text.trim().is_empty() {
            self.push(role, ContentBlock::text(text));
        }
    }

    fn call(&mut self, source: Tool, id: &str, name: &str, args: &Value) {
        match north_call(name, args) {
            Some((north, arguments)) => {
                self.structured.insert(id.to_string());
                self.push(
                    Role::Assistant,
                    ContentBlock::ToolCall(ToolCall {
                        id: id.to_string(),
                        name: north,
                        arguments,
                    }),
                );
            }
            None => self.text(
                Role::Assistant,
                &format!("[{} called `{name}` with {args}]", source.label()),
            ),
        }
    }

    fn result(&mut self, source: Tool, id: &str, content: &str, is_error: bool) {
        if self.structured.contains(id) {
            self.push(
                Role::Tool,
                ContentBlock::ToolResult {
                    call_id: id.to_string(),
                    content: content.to_string(),
                    is_error,
                },
            );
        } else {
            let what = if is_error { "failed" } else { "result" };
            self.text(
                Role::User,
                &format!("[{} tool {what}]\n{content}", source.label()),
            );
        }
    }

    /// The messages, each call answered right after it (a call whose
    /// result the transcript lost gets one saying so).
    fn finish(self) -> Vec<Message> {
        let mut messages = self.messages;
        let mut i = 0;
        while i < messages.len() {
            let calls: Vec<String> = messages[i]
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolCall(c) => Some(c.id.clone()),
                    _ => None,
                })
                .collect();
            if !calls.is_empty() {
                if messages.get(i + 1).map(|n| n.role) != Some(Role::Tool) {
                    messages.insert(
                        i + 1,
                        Message {
                            role: Role::Tool,
                            content: Vec::new(),
                        },
                    );
                }
                let results = &mut messages[i + 1].content;
                for call in calls {
                    let answered = results.iter().any(
                        |b| matches!(b, ContentBlock::ToolResult { call_id, .. } if *call_id == call),
                    );
                    if !answered {
                        results.push(ContentBlock::ToolResult {
                            call_id: call,
                            content: "(the imported transcript has no result for this call)".into(),
                            is_error: true,
                        });
                    }
                }
            }
            i += 1;
        }
        messages
    }
}

/// Text of a content value: a string, or text blocks.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Claude Code's session JSONL.
fn claude_code(lines: &[Value]) -> Transcript {
    let mut b = Builder::default();
    let mut model = None;
    for line in lines {
        // Sub-agents' lines and North-less bookkeeping are not the conversation.
        if line["isSidechain"] == true || line["isMeta"] == true {
            continue;
        }
        let role = match line["type"].as_str() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => continue,
        };
        let message = &line["message"];
        if let Some(m) = message["model"].as_str() {
            model = Some(m.to_string());
        }
        match &message["content"] {
            Value::String(s) => b.text(role, s),
            Value::Array(blocks) => {
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => b.text(role, block["text"].as_str().unwrap_or_default()),
                        Some("tool_use") => b.call(
                            Tool::ClaudeCode,
                            block["id"].as_str().unwrap_or_default(),
                            block["name"].as_str().unwrap_or_default(),
                            &block["input"],
                        ),
                        Some("tool_result") => b.result(
                            Tool::ClaudeCode,
                            block["tool_use_id"].as_str().unwrap_or_default(),
                            &text_of(&block["content"]),
                            block["is_error"] == true,
                        ),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Transcript {
        tool: Tool::ClaudeCode,
        messages: b.finish(),
        model,
    }
}

/// A Codex rollout: items wrapped as `response_item` payloads (or, in old
/// rollouts, the items themselves).
fn codex_rollout(lines: &[Value]) -> Transcript {
    let mut b = Builder::default();
    let mut model = None;
    for line in lines {
        let item = match line["type"].as_str() {
            Some("response_item") => &line["payload"],
            Some("turn_context") => {
                if let Some(m) = line["payload"]["model"].as_str() {
                    model = Some(m.to_string());
                }
                continue;
            }
            Some("session_meta" | "event_msg" | "compacted") => continue,
            _ => line,
        };
        match item["type"].as_str() {
            Some("message") => {
                let role = match item["role"].as_str() {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    _ => continue,
                };
                let text = text_of(&item["content"]);
                // The context Codex adds to the first message is not the user's.
                if role == Role::User
                    && (text.starts_with("<environment_context>")
                        || text.starts_with("<user_instructions>"))
                {
                    continue;
                }
                b.text(role, &text);
            }
            Some("function_call") => {
                let args = item["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                b.call(
                    Tool::Codex,
                    item["call_id"].as_str().unwrap_or_default(),
                    item["name"].as_str().unwrap_or_default(),
                    &args,
                );
            }
            Some("local_shell_call") => b.call(
                Tool::Codex,
                item["call_id"].as_str().unwrap_or_default(),
                "local_shell",
                &item["action"],
            ),
            Some("function_call_output" | "local_shell_call_output") => {
                let output = &item["output"];
                let text = match output.as_str() {
                    // Often a JSON string of {output, metadata}.
                    Some(s) => serde_json::from_str::<Value>(s)
                        .ok()
                        .and_then(|v| v.get("output").and_then(Value::as_str).map(String::from))
                        .unwrap_or_else(|| s.to_string()),
                    None => text_of(output.get("content").unwrap_or(output)),
                };
                b.result(
                    Tool::Codex,
                    item["call_id"].as_str().unwrap_or_default(),
                    &text,
                    output.get("success") == Some(&Value::Bool(false)),
                );
            }
            _ => {}
        }
    }
    Transcript {
        tool: Tool::Codex,
        messages: b.finish(),
        model,
    }
}

/// Gemini CLI: a saved chat (`[{role, parts}]`) or a session file
/// (`{messages: [{type, content, toolCalls}]}`).
fn gemini(whole: &Value) -> anyhow::Result<Transcript> {
    let mut b = Builder::default();
    let mut model = None;
    let mut n = 0;
    if let Some(turns) = whole.as_array() {
        let mut pending: std::collections::VecDeque<(String, String)> = Default::default();
        for turn in turns {
            let role = match turn["role"].as_str() {
                Some("user") => Role::User,
                Some("model") => Role::Assistant,
                _ => anyhow::bail!("a turn without a user or model role"),
            };
            for part in turn["parts"].as_array().into_iter().flatten() {
                if let Some(t) = part["text"].as_str() {
                    if part["thought"] != true {
                        b.text(role, t);
                    }
                } else if let Some(call) = part.get("functionCall") {
                    n += 1;
                    let id = call["id"]
                        .as_str()
                        .map_or_else(|| format!("gemini-{n}"), String::from);
                    let name = call["name"].as_str().unwrap_or_default().to_string();
                    b.call(Tool::Gemini, &id, &name, &call["args"]);
                    pending.push_back((id, name));
                } else if let Some(resp) = part.get("functionResponse") {
                    let name = resp["name"].as_str().unwrap_or_default();
                    let id = match resp["id"].as_str() {
                        Some(id) => id.to_string(),
                        None => {
                            let at = pending.iter().position(|(_, n)| n == name).unwrap_or(0);
                            pending.remove(at).map(|(id, _)| id).unwrap_or_default()
                        }
                    };
                    let r = &resp["response"];
                    let text = r
                        .get("output")
                        .or_else(|| r.get("error"))
                        .map_or_else(|| r.to_string(), text_of);
                    b.result(Tool::Gemini, &id, &text, r.get("error").is_some());
                }
            }
        }
    } else if let Some(messages) = whole["messages"].as_array() {
        for m in messages {
            match m["type"].as_str() {
                Some("user") => b.text(Role::User, &text_of(&m["content"])),
                Some("gemini") => {
                    if let Some(x) = m["model"].as_str() {
                        model = Some(x.to_string());
                    }
                    b.text(Role::Assistant, &text_of(&m["content"]));
                    for call in m["toolCalls"].as_array().into_iter().flatten() {
                        n += 1;
                        let id = call["id"]
                            .as_str()
                            .map_or_else(|| format!("gemini-{n}"), String::from);
                        b.call(
                            Tool::Gemini,
                            &id,
                            call["name"].as_str().unwrap_or_default(),
                            &call["args"],
                        );
                        let result = call["resultDisplay"]
                            .as_str()
                            .map(String::from)
                            .unwrap_or_else(|| text_of(&call["result"]));
                        b.result(Tool::Gemini, &id, &result, call["status"] == "error");
                    }
                }
                _ => {}
            }
        }
    } else {
        anyhow::bail!("neither a saved chat (a list of turns) nor a session (`messages`)");
    }
    Ok(Transcript {
        tool: Tool::Gemini,
        messages: b.finish(),
        model,
    })
}
