//! What a person reads before a plugin's files are installed: what it
//! adds and what it will run (hooks with their commands, MCP servers with
//! their command lines, agents with their tools), read by the same code
//! that loads it; and for an update, what changes, file by file.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use north_mcp::config::Transport;

use crate::manifest::Manifest;
use crate::parts::Parts;
use crate::registry::InstalledPlugin;

/// The most lines of one file's diff shown.
const MAX_DIFF_LINES: usize = 400;

/// The lines describing what the plugin in `dir` adds and runs, with its
/// folder written `${CLAUDE_PLUGIN_ROOT}`.
pub fn contents(dir: &Path, manifest: &Manifest) -> Vec<String> {
    let parts = Parts::read(dir, manifest);
    let root = dir.display().to_string();
    let shown = |s: &str| s.replace(&root, "${CLAUDE_PLUGIN_ROOT}");
    let mut out = Vec::new();
    for c in &parts.commands {
        out.push(format!("command {} — {}", c.name, c.description));
    }
    for a in parts.agents.defs() {
        let tools = a
            .tools
            .as_ref()
            .map_or("every tool".into(), |t| t.join(", "));
        let model = a
            .model
            .as_deref()
            .map(|m| format!(", model {m}"))
            .unwrap_or_default();
        out.push(format!("agent {} — tools: {tools}{model}", a.name));
    }
    for s in parts.skills.skills() {
        out.push(format!("skill {} — {}", s.name, s.description));
    }
    for h in parts.hooks.defs() {
        let matcher = match h.matcher.text() {
            "" | "*" => String::new(),
            m => format!(" [{m}]"),
        };
        out.push(format!(
            "hook {}{matcher} runs: {}",
            h.event,
            shown(&h.command)
        ));
    }
    for s in &parts.servers {
        out.push(format!("MCP server {} {}", s.name, shown(&server_line(s))));
        let mut words: Vec<&str> = Vec::new();
        match &s.transport {
            Transport::Stdio {
                command, args, env, ..
            } => {
                words.push(command);
                words.extend(args.iter().map(String::as_str));
                words.extend(env.values().map(String::as_str));
                let launcher = Path::new(command).file_name().and_then(|n| n.to_str());
                if matches!(launcher, Some("npx" | "uvx" | "bunx" | "pipx" | "dlx")) {
                    out.push(format!(
                        "MCP server {} fetches its code each time it starts ({}): not pinned by North",
                        s.name,
                        launcher.unwrap_or_default()
                    ));
                }
            }
            Transport::Http { url, headers } => {
                words.push(url);
                words.extend(headers.values().map(String::as_str));
            }
        }
        let vars = variables(&words);
        if !vars.is_empty() {
            out.push(format!(
                "MCP server {} is given your environment's {}",
                s.name,
                vars.join(", ")
            ));
        }
    }
    for p in &parts.problems {
        out.push(format!("not taken: {}", shown(p)));
    }
    out
}

/// How a server starts or where it connects, every field that shapes it.
fn server_line(s: &north_mcp::config::ServerConfig) -> String {
    match &s.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut line = format!("runs: {command}");
            for a in args {
                line.push(' ');
                line.push_str(a);
            }
            for (k, v) in env.iter().filter(|(k, _)| *k != "CLAUDE_PLUGIN_ROOT") {
                line.push_str(&format!("; env {k}={v}"));
            }
            if let Some(dir) = cwd {
                line.push_str(&format!("; in {}", dir.display()));
            }
            line
        }
        Transport::Http { url, headers } => {
            let mut line = format!("connects to {url}");
            for (k, v) in headers {
                line.push_str(&format!("; header {k}: {v}"));
            }
            if s.oauth.is_some() {
                line.push_str("; logs in with OAuth");
            }
            line
        }
    }
}

/// The `${VAR}` names in `words`, each once.
fn variables(words: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in words {
        let mut rest = *word;
        while let Some(start) = rest.find("${") {
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else { break };
            let name = after[..end]
                .split(":-")
                .next()
                .unwrap_or_default()
                .to_string();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
            rest = &after[end..];
        }
    }
    out
}

/// `text` with every control character but the newline written out
/// (`\u{1b}`): a plugin's words cannot move the cursor, clear a line or
/// hide what follows them.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            let hidden = c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if c == '\n' || !hidden {
                c.to_string()
            } else {
                format!("\\u{{{:x}}}", u32::from(c))
            }
        })
        .collect()
}

/// The review shown before an install: who, from where, pinned to what,
/// and every line of [`contents`], with the executable files.
pub fn install(dir: &Path, manifest: &Manifest, record: &InstalledPlugin) -> String {
    let mut out = header(manifest, record);
    let lines = contents(dir, manifest);
    if lines.is_empty() {
        out.push_str("  (it adds nothing North loads)\n");
    }
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
    let files = files(dir);
    let exec: Vec<&str> = files.iter().filter(|f| f.1).map(|f| f.0.as_str()).collect();
    if !exec.is_empty() {
        let _ = writeln!(out, "  executable files: {}", exec.join(", "));
    }
    let _ = writeln!(
        out,
        "  {} files. Hooks and MCP servers run in North's sandbox, without network for hooks; nothing of the plugin has run yet.",
        files.len()
    );
    printable(&out)
}

/// The review shown before an update: what the plugin adds or runs that
/// changes, then each file that changes with its diff.
pub fn update(
    old_dir: &Path,
    old: &Manifest,
    new_dir: &Path,
    new: &Manifest,
    record: &InstalledPlugin,
    previous: &InstalledPlugin,
) -> String {
    let mut out = header(new, record);
    let _ = writeln!(out, "  update from {} to {}", previous.pin(), record.pin());
    let before: BTreeSet<String> = contents(old_dir, old).into_iter().collect();
    let after: BTreeSet<String> = contents(new_dir, new).into_iter().collect();
    for gone in before.difference(&after) {
        let _ = writeln!(out, "  - {gone}");
    }
    for added in after.difference(&before) {
        let _ = writeln!(out, "  + {added}");
    }
    let old_files: BTreeSet<(String, bool)> = files(old_dir).into_iter().collect();
    let new_files: BTreeSet<(String, bool)> = files(new_dir).into_iter().collect();
    let names: BTreeSet<&String> = old_files.iter().chain(&new_files).map(|f| &f.0).collect();
    for name in names {
        let a = std::fs::read(old_dir.join(name)).ok();
        let b = std::fs::read(new_dir.join(name)).ok();
        let mode = |set: &BTreeSet<(String, bool)>| set.iter().find(|f| &f.0 == name).map(|f| f.1);
        if a == b && mode(&old_files) == mode(&new_files) {
            continue;
        }
        match (&a, &b) {
            (None, Some(_)) => {
                let _ = writeln!(out, "\nnew file {name}");
            }
            (Some(_), None) => {
                let _ = writeln!(out, "\nremoved {name}");
            }
            _ => {
                let _ = writeln!(out, "\nchanged {name}");
            }
        }
        if mode(&old_files) != mode(&new_files) && a.is_some() && b.is_some() {
            let _ = writeln!(
                out,
                "  executable: {:?} → {:?}",
                mode(&old_files).unwrap_or(false),
                mode(&new_files).unwrap_or(false)
            );
        }
        let text = |v: &Option<Vec<u8>>| {
            v.as_deref()
                .map(|b| std::str::from_utf8(b).map(str::to_string))
        };
        match (
            text(&a).unwrap_or(Ok(String::new())),
            text(&b).unwrap_or(Ok(String::new())),
        ) {
            (Ok(a), Ok(b)) => {
                let diff = similar::TextDiff::from_lines(&a, &b);
                let unified = diff.unified_diff().context_radius(3).to_string();
                let lines: Vec<&str> = unified.lines().collect();
                for line in lines.iter().take(MAX_DIFF_LINES) {
                    let _ = writeln!(out, "  {line}");
                }
                if lines.len() > MAX_DIFF_LINES {
                    let _ = writeln!(out, "  … {} more lines", lines.len() - MAX_DIFF_LINES);
                }
            }
            _ => {
                let _ = writeln!(out, "  (binary)");
            }
        }
    }
    printable(&out)
}

fn header(manifest: &Manifest, record: &InstalledPlugin) -> String {
    let mut out = format!("Plugin {}", manifest.name);
    if let Some(v) = &manifest.version {
        let _ = write!(out, " {v}");
    }
    if let Some(d) = &manifest.description {
        let _ = write!(out, " — {d}");
    }
    out.push('\n');
    let by = manifest
        .author
        .as_deref()
        .map(|a| format!("by {a}, "))
        .unwrap_or_default();
    let _ = writeln!(out, "  {by}from {}, {}", record.origin, record.pin());
    out
}

/// Every file of the plugin in `dir` (relative, `/`-joined) and whether
/// it is executable, in path order.
fn files(dir: &Path) -> Vec<(String, bool)> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, bool)>) {
        let Ok(entries) = crate::fetch::sorted_entries(dir) else {
            return;
        };
        for e in entries {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                out.push((
                    rel,
                    meta.is_file() && meta.permissions().mode() & 0o111 != 0,
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}
