//! A plugin read into what North runs: commands named `/PLUGIN:NAME`,
//! agents and skills named `PLUGIN:NAME`, hooks with `CLAUDE_PLUGIN_ROOT`,
//! and MCP servers named `PLUGIN_SERVER`. The review shows exactly these
//! (one reading for both, so what was shown is what runs).

use std::path::Path;

use north_agent::commands::CustomCommand;
use north_agent::hooks::{HookOrigin, HookSet};
use north_agent::skills::SkillSet;
use north_agent::subagents::AgentSet;
use north_mcp::config::{Scope, ServerConfig, ServersFile, Transport};
use serde_json::{Map, Value};

use crate::manifest::{Block, Manifest, read_json};

/// What a plugin adds to a session.
#[derive(Debug, Clone)]
pub struct Parts {
    /// Its slash commands.
    pub commands: Vec<CustomCommand>,
    /// Its agents.
    pub agents: AgentSet,
    /// Its skills.
    pub skills: SkillSet,
    /// Its hooks.
    pub hooks: HookSet,
    /// Its MCP servers.
    pub servers: Vec<ServerConfig>,
    /// What could not be read, a line each.
    pub problems: Vec<String>,
}

impl Parts {
    /// Reads the parts `manifest` names in the plugin folder `root`.
    pub fn read(root: &Path, manifest: &Manifest) -> Parts {
        let name = manifest.name.as_str();
        let mut problems = Vec::new();
        let mut commands = Vec::new();
        for rel in &manifest.commands {
            commands.extend(north_agent::commands::load_plugin(
                &root.join(rel),
                name,
                root,
            ));
        }
        let mut agents = AgentSet::of(Vec::new());
        for rel in &manifest.agents {
            agents.add(AgentSet::plugin(&root.join(rel), name, root));
        }
        let mut skills = SkillSet::default();
        for rel in &manifest.skills {
            skills.add(SkillSet::plugin(&root.join(rel), name, root));
        }
        problems.append(&mut agents.ignored);
        problems.append(&mut skills.ignored);
        let mut hooks = HookSet::default();
        for block in &manifest.hooks {
            match block_value(root, block) {
                Ok(value) => {
                    let value = substitute(&value, root);
                    // A hooks file wraps its events in `"hooks"`.
                    let events = value
                        .get("hooks")
                        .filter(|h| h.is_object())
                        .unwrap_or(&value);
                    let origin = HookOrigin::Plugin {
                        name: name.to_string(),
                        root: root.to_path_buf(),
                    };
                    match HookSet::parse(events, origin, false) {
                        Ok(set) => hooks.extend(set),
                        Err(e) => problems.push(format!("hooks: {e}")),
                    }
                }
                Err(e) => problems.push(e),
            }
        }
        problems.extend(hooks.skipped.iter().map(|s| format!("hooks: {s}")));
        let mut servers = Vec::new();
        for block in &manifest.mcp {
            match block_value(root, block) {
                Ok(value) => servers.extend(mcp_servers(root, name, &value, &mut problems)),
                Err(e) => problems.push(e),
            }
        }
        Parts {
            commands,
            agents,
            skills,
            hooks,
            servers,
            problems,
        }
    }
}

/// The JSON of a block: its file's, or itself.
fn block_value(root: &Path, block: &Block) -> Result<Value, String> {
    match block {
        Block::Inline(v) => Ok(v.clone()),
        Block::File(rel) => match read_json(&root.join(rel)) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(format!("{}: no such file in the plugin", rel.display())),
            Err(e) => Err(e.to_string()),
        },
    }
}

/// The servers of an `mcpServers` block (wrapped, or the bare map), named
/// `PLUGIN_SERVER` (shortened with a hash past MCP's 32 characters), with
/// `CLAUDE_PLUGIN_ROOT` set and substituted.
fn mcp_servers(
    root: &Path,
    plugin: &str,
    value: &Value,
    problems: &mut Vec<String>,
) -> Vec<ServerConfig> {
    let map = value
        .get("mcpServers")
        .and_then(Value::as_object)
        .or_else(|| value.as_object())
        .cloned()
        .unwrap_or_default();
    let mut renamed = Map::new();
    for (server, entry) in map {
        renamed.insert(server_name(plugin, &server), substitute(&entry, root));
    }
    let path = root.join(".mcp.json");
    let doc = Value::Object(Map::from_iter([(
        "mcpServers".to_string(),
        Value::Object(renamed),
    )]));
    let file = match ServersFile::of_doc(&path, Scope::Plugin, doc) {
        Ok(f) => f,
        Err(e) => {
            problems.push(e.to_string());
            return Vec::new();
        }
    };
    let (mut servers, errors) = file.servers();
    problems.extend(errors.iter().map(|e| format!("MCP: {e}")));
    servers.retain_mut(|server| {
        let Transport::Stdio { env, cwd, .. } = &mut server.transport else {
            return true;
        };
        env.insert("CLAUDE_PLUGIN_ROOT".into(), root.display().to_string());
        // A server works in its plugin's folder (or a folder inside it):
        // its folder is what the sandbox opens for it.
        let dir = cwd
            .take()
            .map_or_else(|| root.to_path_buf(), |c| lexical(&root.join(c)));
        if !dir.starts_with(root) {
            problems.push(format!(
                "MCP server `{}`: its cwd {} is outside the plugin's folder; not started",
                server.name,
                dir.display()
            ));
            return false;
        }
        *cwd = Some(dir);
        true
    });
    servers
}

/// `path` with `.` and `..` taken out by their words (no link followed).
fn lexical(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The name a plugin's server gets: `PLUGIN_SERVER`, letters, digits, `-`
/// and `_` only, at most 32 (its tools are `mcp__PLUGIN_SERVER__TOOL`).
pub fn server_name(plugin: &str, server: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let name = format!("{}_{}", clean(plugin), clean(server));
    if name.len() <= 32 {
        return name;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let tag: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("{}-{tag}", &name[..25])
}

/// `value` with `${CLAUDE_PLUGIN_ROOT}` replaced by `root` in every
/// string.
fn substitute(value: &Value, root: &Path) -> Value {
    fn walk(v: &Value, root: &Path) -> Value {
        match v {
            Value::String(s) => Value::String(north_agent::commands::plugin_root_in(s, root)),
            Value::Array(items) => Value::Array(items.iter().map(|i| walk(i, root)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), walk(v, root)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(value, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_fit_mcps_limit() {
        assert_eq!(server_name("fmt", "db"), "fmt_db");
        let long = server_name("example-plugin", "example-server");
        assert!(
            long.len() <= 32 && long.starts_with("example-plugin_example"),
            "{long}"
        );
        assert_ne!(long, server_name("example-plugin", "example-serves"));
        assert_eq!(server_name("a.b", "c d"), "a-b_c-d");
    }
}
