//! `north mcp import`: the MCP servers configured in Claude Code
//! (`~/.claude.json`: the user's and this project's), Claude Desktop and
//! Codex (`~/.codex/config.toml`), shown, then written to your own North
//! config on confirmation. A secret in the source (an API key in `env`, a
//! bearer token in a header or URL) is never copied: it becomes a `${VAR}`
//! reference, named so you can set it in your environment.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use north_mcp::config::{Scope, ServersFile};
use serde_json::{Map, Value, json};

/// Where servers are imported from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Source {
    /// Claude Code's `~/.claude.json` (your servers and this project's).
    Claude,
    /// Claude Desktop's `claude_desktop_config.json`.
    Desktop,
    /// Codex's `config.toml` (`$CODEX_HOME`, else `~/.codex`).
    Codex,
}

/// `north mcp import` options.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Only from this tool [default: every one found].
    #[arg(long, value_enum)]
    pub from: Option<Source>,
    /// Add them without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Replace servers of the same name already in your config.
    #[arg(long)]
    pub force: bool,
}

/// One server found, as North writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its name.
    pub name: String,
    /// The file it came from.
    pub from: PathBuf,
    /// Its entry in North's format.
    pub entry: Value,
    /// The variables its secrets became (set them in your environment).
    pub variables: Vec<String>,
}

/// What the sources hold: servers to add, and what was left out (why).
#[derive(Debug, Default)]
pub struct Harvest {
    /// The servers.
    pub servers: Vec<Found>,
    /// What was not taken, with why.
    pub skipped: Vec<String>,
}

/// Runs `north mcp import`.
pub fn import(root: &Path, args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set: North finds the other tools' configuration under it")?;
    let mut found = Harvest::default();
    for source in [Source::Claude, Source::Desktop, Source::Codex] {
        if args.from.is_some_and(|f| f != source) {
            continue;
        }
        read_source(source, &home, root, &mut found);
    }
    let path = north_runtime::user_mcp_file()
        .context("no config directory for your own servers (set HOME or XDG_CONFIG_HOME)")?;
    let mut file = ServersFile::load(&path, Scope::User)?;
    for s in &found.skipped {
        println!("skipped {s}");
    }
    let mut adding = Vec::new();
    for server in found.servers {
        if file.entry(&server.name).is_some() && !args.force {
            println!(
                "skipped `{}` from {}: your config has a server of that name (--force replaces it)",
                server.name,
                server.from.display()
            );
            continue;
        }
        println!(
            "add `{}` from {}: {}",
            server.name,
            server.from.display(),
            describe(&server.entry)
        );
        for v in &server.variables {
            println!("    its secret is not copied: set {v} in your environment");
        }
        adding.push(server);
    }
    if adding.is_empty() {
        println!("nothing to import");
        return Ok(ExitCode::SUCCESS);
    }
    if !args.yes
        && !confirm(&format!(
            "Add {} server(s) to {}? [y/N] ",
            adding.len(),
            path.display()
        ))?
    {
        println!("nothing written (run again with --yes to add them)");
        return Ok(ExitCode::SUCCESS);
    }
    for server in &adding {
        file.put(&server.name, server.entry.clone())?;
    }
    println!("added {} server(s) to {}", adding.len(), path.display());
    Ok(ExitCode::SUCCESS)
}

/// Asks on the terminal (no terminal: no).
pub(crate) fn confirm(question: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    print!("{question}");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

/// One line about an entry.
fn describe(entry: &Value) -> String {
    match entry.get("url").and_then(Value::as_str) {
        Some(url) => format!("http {url}"),
        None => {
            let mut words = vec![entry["command"].as_str().unwrap_or("?").to_string()];
            words.extend(
                entry["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().map(String::from)),
            );
            format!("stdio `{}`", words.join(" "))
        }
    }
}

fn read_source(source: Source, home: &Path, root: &Path, found: &mut Harvest) {
    match source {
        Source::Claude => {
            let path = home.join(".claude.json");
            let Some(value) = read_json(&path, found) else {
                return;
            };
            from_map(value.get("mcpServers"), &path, found);
            // This project's servers (Claude Code's "local" scope).
            let project = value
                .get("projects")
                .and_then(|p| p.get(root.to_string_lossy().as_ref()))
                .and_then(|p| p.get("mcpServers"));
            from_map(project, &path, found);
        }
        Source::Desktop => {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".config"));
            for path in [
                config.join("Claude/claude_desktop_config.json"),
                home.join("Library/Application Support/Claude/claude_desktop_config.json"),
            ] {
                if let Some(value) = read_json(&path, found) {
                    from_map(value.get("mcpServers"), &path, found);
                }
            }
        }
        Source::Codex => {
            let dir = std::env::var_os("CODEX_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".codex"));
            let path = dir.join("config.toml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                return;
            };
            match text.parse::<toml::Table>() {
                Ok(table) => codex(&table, &path, found),
                Err(e) => found
                    .skipped
                    .push(format!("{}: not TOML ({e})", path.display())),
            }
        }
    }
}

fn read_json(path: &Path, found: &mut Harvest) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            found
                .skipped
                .push(format!("{}: not JSON ({e})", path.display()));
            None
        }
    }
}

/// Claude Code's and Claude Desktop's `mcpServers` map.
fn from_map(servers: Option<&Value>, from: &Path, found: &mut Harvest) {
    let Some(servers) = servers.and_then(Value::as_object) else {
        return;
    };
    for (name, server) in servers {
        let kind =
            server
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(if server.get("url").is_some() {
                    "http"
                } else {
                    "stdio"
                });
        let converted = match kind {
            "stdio" => stdio(server.get("command"), server.get("args"), server.get("env")),
            "http" | "streamable-http" => http(
                name,
                server.get("url"),
                server.get("headers").and_then(Value::as_object).cloned(),
            ),
            other => Err(format!(
                "a `{other}` server: North speaks stdio and streamable HTTP"
            )),
        };
        push(found, name, from, converted);
    }
}

/// Codex's `[mcp_servers.NAME]` tables.
fn codex(table: &toml::Table, from: &Path, found: &mut Harvest) {
    let Some(servers) = table.get("mcp_servers").and_then(toml::Value::as_table) else {
        return;
    };
    for (name, server) in servers {
        let server = serde_json::to_value(server).unwrap_or(Value::Null);
        let converted = if let Some(url) = server.get("url") {
            let mut headers = server
                .get("http_headers")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Some(var) = server.get("bearer_token_env_var").and_then(Value::as_str) {
                headers.insert("Authorization".into(), json!(format!("Bearer ${{{var}}}")));
            }
            if let Some(env_headers) = server.get("env_http_headers").and_then(Value::as_object) {
                for (header, var) in env_headers {
                    if let Some(var) = var.as_str() {
                        headers.insert(header.clone(), json!(format!("${{{var}}}")));
                    }
                }
            }
            http(name, Some(url), Some(headers))
        } else {
            stdio(server.get("command"), server.get("args"), server.get("env"))
        };
        push(found, name, from, converted);
    }
}

fn push(
    found: &mut Harvest,
    name: &str,
    from: &Path,
    converted: Result<(Value, Vec<String>), String>,
) {
    match converted {
        Ok((entry, variables)) => found.servers.push(Found {
            name: server_name(name),
            from: from.to_path_buf(),
            entry,
            variables,
        }),
        Err(why) => found
            .skipped
            .push(format!("`{name}` from {}: {why}", from.display())),
    }
}

/// A name as North's tool names carry it (`mcp__<server>__<tool>`).
fn server_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned
        .trim_matches('_')
        .chars()
        .take(32)
        .collect::<String>();
    if cleaned.is_empty() {
        "imported".into()
    } else {
        cleaned
    }
}

type Converted = Result<(Value, Vec<String>), String>;

fn stdio(command: Option<&Value>, args: Option<&Value>, env: Option<&Value>) -> Converted {
    let command = command
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or("no command")?;
    let mut entry = Map::new();
    entry.insert("command".into(), json!(command));
    if let Some(args) = args.and_then(Value::as_array).filter(|a| !a.is_empty()) {
        entry.insert("args".into(), Value::Array(args.clone()));
    }
    let mut variables = Vec::new();
    if let Some(env) = env.and_then(Value::as_object).filter(|e| !e.is_empty()) {
        let mut out = Map::new();
        for (key, value) in env {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if is_secret(key, &text) {
                let var = variable(key);
                out.insert(key.clone(), json!(format!("${{{var}}}")));
                variables.push(var);
            } else {
                out.insert(key.clone(), json!(text));
            }
        }
        entry.insert("env".into(), Value::Object(out));
    }
    Ok((Value::Object(entry), variables))
}

fn http(name: &str, url: Option<&Value>, headers: Option<Map<String, Value>>) -> Converted {
    let url = url.and_then(Value::as_str).ok_or("no url")?;
    let mut variables = Vec::new();
    let url = secret_query(name, url, &mut variables);
    let mut entry = Map::new();
    entry.insert("type".into(), json!("http"));
    entry.insert("url".into(), json!(url));
    if let Some(headers) = headers.filter(|h| !h.is_empty()) {
        let mut out = Map::new();
        for (header, value) in headers {
            let text = value.as_str().unwrap_or_default().to_string();
            let secret_name = matches!(
                header.to_ascii_lowercase().as_str(),
                "authorization" | "x-api-key" | "api-key" | "proxy-authorization"
            ) || is_secret(&header, &text);
            if secret_name && !text.contains("${") {
                let var = variable(&format!("{name}_{}", header.replace('-', "_")));
                let kept = match text.split_once(' ') {
                    // Keep the scheme: `Bearer ${VAR}`.
                    Some((scheme, _))
                        if scheme.eq_ignore_ascii_case("bearer")
                            || scheme.eq_ignore_ascii_case("basic") =>
                    {
                        format!("{scheme} ${{{var}}}")
                    }
                    _ => format!("${{{var}}}"),
                };
                out.insert(header, json!(kept));
                variables.push(var);
            } else {
                out.insert(header, json!(text));
            }
        }
        entry.insert("headers".into(), Value::Object(out));
    }
    Ok((Value::Object(entry), variables))
}

/// A URL whose query carries a key or token: the value becomes a variable.
fn secret_query(name: &str, url: &str, variables: &mut Vec<String>) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if is_secret(k, v) && !v.contains("${") => {
                let var = variable(&format!("{name}_{k}"));
                let out = format!("{k}=${{{var}}}");
                variables.push(var);
                out
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{base}?{}", parts.join("&"))
}

/// Whether a setting named `key` with `value` is a secret: its name says
/// so, or its value looks like a key. A `${VAR}` reference is not.
fn is_secret(key: &str, value: &str) -> bool {
    if value.contains("${") || value.trim().is_empty() {
        return false;
    }
    let key = key.to_ascii_uppercase();
    let named = [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
        "PAT",
    ]
    .iter()
    .any(|w| {
        key.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|part| part == *w)
            || key.ends_with(w)
    });
    let looks = [
        "sk-",
        "ghp_",
        "gho_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "AKIA",
        "glpat-",
        "AIza",
    ]
    .iter()
    .any(|p| value.starts_with(p));
    named || looks
}

/// An environment variable name from `text`: upper case, `_` between words.
fn variable(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("MCP_{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_become_variables_and_the_rest_stays() {
        let (entry, vars) = stdio(
            Some(&json!("npx")),
            Some(&json!(["-y", "server-github"])),
            Some(&json!({"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abc123", "LOG_LEVEL": "debug", "REF": "${ALREADY}"})),
        )
        .unwrap();
        assert_eq!(
            entry["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
            "${GITHUB_PERSONAL_ACCESS_TOKEN}"
        );
        assert_eq!(entry["env"]["LOG_LEVEL"], "debug");
        assert_eq!(entry["env"]["REF"], "${ALREADY}");
        assert_eq!(vars, vec!["GITHUB_PERSONAL_ACCESS_TOKEN"]);
        let (entry, vars) = http(
            "linear",
            Some(&json!("https://mcp.example.test/sse?api_key=abc&team=x")),
            Some(
                json!({"Authorization": "Bearer tok-123", "X-Team": "core"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .unwrap();
        assert_eq!(
            entry["headers"]["Authorization"],
            "Bearer ${LINEAR_AUTHORIZATION}"
        );
        assert_eq!(entry["headers"]["X-Team"], "core");
        assert_eq!(
            entry["url"],
            "https://mcp.example.test/sse?api_key=${LINEAR_API_KEY}&team=x"
        );
        assert_eq!(vars.len(), 2);
        assert!(!entry.to_string().contains("tok-123") && !entry.to_string().contains("=abc"));
    }
}
