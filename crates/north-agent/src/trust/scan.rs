//! Reading a project's trust files into a fingerprint: exactly what could
//! widen North's behaviour is hashed, so unrelated edits (a model name) do
//! not ask again, and each widening is named for the trust prompt.

use std::collections::BTreeMap;
use std::path::Path;

use north_policy::MeshPolicy;
use north_tools::allowlist::ProjectAllowlist;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::named::{self, describe_server, feed_named_files, server_argv};
use super::{PROJECT_ENDPOINT_KEYS, PROJECT_SECURITY_KEYS};

pub(super) struct Scan {
    pub(super) fingerprint: String,
    /// The fingerprint of everything but the allowlist: what a rule the
    /// user adds with "Always" must leave unchanged to keep the project
    /// trusted.
    pub(super) others: String,
    /// Whether anything but the allowlist asks for trust.
    pub(super) others_want: bool,
    pub(super) wants: Vec<String>,
    pub(super) never: Vec<String>,
}

/// Reads the trust files of `root`: the fingerprint covers exactly what
/// could widen North's behaviour, so unrelated edits (a model name) do not
/// ask again.
pub(super) fn scan(root: &Path) -> Scan {
    let mut hasher = Sha256::new();
    let mut others = Sha256::new();
    let mut wants = Vec::new();
    let mut never = Vec::new();
    let mut feed = |name: &str, content: &[u8]| {
        let allowlist = name.starts_with(ProjectAllowlist::RELATIVE_PATH);
        for (h, is_others) in [(&mut hasher, false), (&mut others, true)] {
            if is_others && allowlist {
                continue;
            }
            h.update(name.as_bytes());
            h.update([0]);
            h.update((content.len() as u64).to_le_bytes());
            h.update(content);
        }
    };
    scan_project_file(root, &mut feed, &mut wants, &mut never);
    // Hooks are code the project runs at every event.
    named::scan_hooks(root, &mut feed, &mut wants);
    // Agents and skills are instructions North would follow.
    named::scan_definitions(root, &mut feed, &mut wants);
    scan_allowlist(root, &mut feed, &mut wants);
    scan_claude_permissions(root, &mut feed, &mut wants);
    scan_policy(root, &mut feed, &mut wants);
    scan_mcp(root, &mut feed, &mut wants);
    scan_plugins(root, &mut feed, &mut wants);
    scan_memory(root, &mut feed, &mut wants);
    let others_want = wants
        .iter()
        .any(|w| !w.starts_with(ProjectAllowlist::RELATIVE_PATH));
    Scan {
        fingerprint: format!("{:x}", hasher.finalize()),
        others: format!("{:x}", others.finalize()),
        others_want,
        wants,
        never,
    }
}

/// `enabledPlugins` in the project's settings: switching one of the
/// user's plugins on runs its hooks and servers here, so each `true` is
/// named (a `false` only narrows, but every entry is hashed).
fn scan_plugins(root: &Path, feed: &mut impl FnMut(&str, &[u8]), wants: &mut Vec<String>) {
    for rel in [
        ".north/project.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ] {
        let Some(Value::Object(map)) = read_json(&root.join(rel)).and_then(|v| {
            v.get("enabledPlugins")
                .cloned()
                .or(v.get("enabled_plugins").cloned())
        }) else {
            continue;
        };
        let sorted: BTreeMap<&String, &Value> = map.iter().collect();
        feed(
            &format!("{rel} enabledPlugins"),
            serde_json::to_string(&sorted)
                .unwrap_or_default()
                .as_bytes(),
        );
        for (name, on) in sorted {
            if on.as_bool() == Some(true) {
                wants.push(format!("{rel} switches on your plugin `{name}`"));
            }
        }
    }
}

/// `.north/project.json`: its security keys (hashed; a widening one is
/// named) and the endpoints a project may never set.
fn scan_project_file(
    root: &Path,
    feed: &mut impl FnMut(&str, &[u8]),
    wants: &mut Vec<String>,
    never: &mut Vec<String>,
) {
    let project = read_json(&root.join(".north/project.json"));
    let mut security = BTreeMap::new();
    if let Some(Value::Object(obj)) = &project {
        for key in PROJECT_SECURITY_KEYS {
            if let Some(v) = obj.get(*key) {
                security.insert(*key, v.clone());
                let widens = match v {
                    Value::Bool(b) => *b,
                    Value::String(mode) => mode != "ask" && mode != "plan",
                    _ => true,
                };
                if widens {
                    wants.push(format!(".north/project.json sets {key} = {v}"));
                }
            }
        }
        for key in PROJECT_ENDPOINT_KEYS {
            if obj.contains_key(*key) {
                never.push((*key).to_string());
            }
        }
    }
    feed(
        ".north/project.json",
        serde_json::to_string(&security)
            .unwrap_or_default()
            .as_bytes(),
    );
    // A language server's program in the project counts as the setting.
    if let Some(Value::Object(servers)) = security.get("lsp") {
        for server in servers.values() {
            let argv: Vec<&str> = server
                .get("command")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let bases = vec![root.to_path_buf()];
            super::named::feed_named_files(feed, ".north/project.json lsp", root, &bases, &argv);
        }
    }
}

/// `.north/allowlist.json`: every rule is named, and a rule that names a
/// project file (`./scripts/check.sh`) trusts that file's content too.
fn scan_allowlist(root: &Path, feed: &mut impl FnMut(&str, &[u8]), wants: &mut Vec<String>) {
    let allowlist_path = root.join(ProjectAllowlist::RELATIVE_PATH);
    let allowlist_bytes = settings_bytes(&allowlist_path);
    feed(ProjectAllowlist::RELATIVE_PATH, &allowlist_bytes);
    match ProjectAllowlist::load_from(allowlist_path) {
        Ok(list) => {
            wants.extend(
                list.commands()
                    .iter()
                    .map(|c| format!(".north/allowlist.json allows `{c}`")),
            );
            wants.extend(
                list.prefixes()
                    .iter()
                    .map(|c| format!(".north/allowlist.json allows commands starting with `{c}`")),
            );
            wants.extend(
                list.tools()
                    .iter()
                    .map(|t| format!(".north/allowlist.json allows the tool `{t}` without asking")),
            );
            for rule in list.commands().iter().chain(list.prefixes()) {
                let words: Vec<&str> = rule.split_whitespace().collect();
                feed_named_files(
                    feed,
                    ProjectAllowlist::RELATIVE_PATH,
                    root,
                    &[root.to_path_buf()],
                    &words,
                );
            }
        }
        Err(_) if !allowlist_bytes.is_empty() => {
            wants.push(".north/allowlist.json (unreadable)".into());
        }
        Err(_) => {}
    }
}

/// Claude Code's `permissions.allow` in `.claude/settings.json`: each
/// command rule widens what runs unasked, as the allowlist's do (its deny
/// and ask rules only narrow, and apply without trust).
fn scan_claude_permissions(
    root: &Path,
    feed: &mut impl FnMut(&str, &[u8]),
    wants: &mut Vec<String>,
) {
    let rules = north_config::claude::ClaudeRules::of_project(root);
    let allow = &rules.allow;
    if allow.is_empty() && rules.allow_hosts.is_empty() && rules.edit_allow.is_empty() {
        return;
    }
    feed(
        ".claude/settings.json permissions (hosts, edits)",
        format!("{:?}{:?}", rules.allow_hosts, rules.edit_allow).as_bytes(),
    );
    wants.extend(
        rules
            .allow_hosts
            .iter()
            .map(|h| format!(".claude/settings.json lets North reach {h} (`net:{h}`)")),
    );
    wants.extend(
        rules
            .edit_allow
            .iter()
            .map(|p| format!(".claude/settings.json applies edits to `{p}` without asking")),
    );
    let mut block = allow.exact.clone();
    block.extend(allow.prefixes.iter().map(|p| format!("{p}:*")));
    block.push(format!("all={}", allow.all));
    feed(
        ".claude/settings.json permissions",
        block.join("\n").as_bytes(),
    );
    wants.extend(
        allow
            .exact
            .iter()
            .map(|c| format!(".claude/settings.json allows `{c}`")),
    );
    wants.extend(
        allow
            .prefixes
            .iter()
            .map(|c| format!(".claude/settings.json allows commands starting with `{c}`")),
    );
    if allow.all {
        wants.push(".claude/settings.json allows every command (`Bash`)".into());
    }
    for rule in allow.exact.iter().chain(&allow.prefixes) {
        let words: Vec<&str> = rule.split_whitespace().collect();
        feed_named_files(
            feed,
            ".claude/settings.json",
            root,
            &[root.to_path_buf()],
            &words,
        );
    }
}

/// The mesh's `policy.json`: what it widens over the default.
fn scan_policy(root: &Path, feed: &mut impl FnMut(&str, &[u8]), wants: &mut Vec<String>) {
    let policy_bytes = settings_bytes(&root.join("policy.json"));
    feed("policy.json", &policy_bytes);
    if !policy_bytes.is_empty() {
        match serde_json::from_slice::<MeshPolicy>(&policy_bytes) {
            Ok(p) => wants.extend(
                p.widenings_over(&MeshPolicy::default())
                    .into_iter()
                    .map(|w| format!("policy.json sets {w}")),
            ),
            Err(_) => wants.push("policy.json (malformed)".into()),
        }
    }
}

/// `.mcp.json`: each server is named, and the files it runs are part of
/// what the user trusts (changing only `mcp/server.sh` asks again).
fn scan_mcp(root: &Path, feed: &mut impl FnMut(&str, &[u8]), wants: &mut Vec<String>) {
    let mcp_bytes = settings_bytes(&root.join(".mcp.json"));
    feed(".mcp.json", &mcp_bytes);
    if mcp_bytes.is_empty() {
        return;
    }
    let servers = serde_json::from_slice::<Value>(&mcp_bytes)
        .ok()
        .and_then(|v| v.get("mcpServers").and_then(Value::as_object).cloned());
    let Some(servers) = servers else {
        wants.push(".mcp.json (MCP servers)".into());
        return;
    };
    for (name, server) in &servers {
        wants.push(format!(
            ".mcp.json: MCP server `{name}` {}",
            describe_server(server)
        ));
        let (argv, cwd) = server_argv(server);
        let mut bases = vec![root.to_path_buf()];
        if let Some(cwd) = cwd {
            bases.insert(0, root.join(cwd));
        }
        let words: Vec<&str> = argv.iter().map(String::as_str).collect();
        feed_named_files(feed, ".mcp.json", root, &bases, &words);
    }
}

/// Memories the repository shipped in `.north/memory.json` would reach
/// the model as if remembered: they ask for trust like any setting.
/// North's own entries (marked) never change the fingerprint.
fn scan_memory(root: &Path, feed: &mut impl FnMut(&str, &[u8]), wants: &mut Vec<String>) {
    if let Ok((_, shipped)) = crate::memory::MemoryFile::project(root).load_by_provenance()
        && !shipped.is_empty()
    {
        wants.push(format!(
            ".north/memory.json holds {} memories North did not write (the repository's)",
            shipped.len()
        ));
        feed(
            ".north/memory.json (shipped entries)",
            serde_json::to_string(&shipped)
                .unwrap_or_default()
                .as_bytes(),
        );
    }
}

fn read_json(path: &Path) -> Option<Value> {
    let text = north_config::read_settings(path).ok()??;
    serde_json::from_str(&text).ok()
}

/// A settings file's bytes for the fingerprint, read bounded (a link to
/// `/dev/zero` or a fifo, or a file too large, reads as its refusal).
fn settings_bytes(path: &Path) -> Vec<u8> {
    match north_config::read_settings(path) {
        Ok(Some(text)) => text.into_bytes(),
        Ok(None) => Vec::new(),
        Err(e) => format!("unreadable: {e}").into_bytes(),
    }
}
