//! Custom agents: Markdown files with front matter (`name`, `description`,
//! `tools`, `model`, `mode`) whose body is the agent's system prompt, as
//! Claude Code writes them. The model hands a focused task to one with the
//! `agent` tool; it runs in a fresh context with only its tools.
//!
//! Found in `~/.config/north/agents/` (yours) and, in a trusted project
//! only — an agent's instructions are code — `.north/agents/` and
//! `.claude/agents/`. Built in: `general` (every tool) and `explore`
//! (read-only search and read).
//!
//! This module reads definitions; the agent loop runs them.

use std::path::{Path, PathBuf};

use north_protocol::PermissionMode;

use crate::hooks::Matcher;

/// The project directories agents are read from (trusted projects only).
pub(crate) const PROJECT_AGENT_DIRS: &[&str] = &[".north/agents", ".claude/agents"];

/// The largest definition file read, in bytes.
const MAX_FILE: u64 = 256 * 1024;

/// Characters of a description the `agent` tool's list shows.
const MAX_DESCRIPTION: usize = 300;

/// Where an agent was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentOrigin {
    /// North's own.
    BuiltIn,
    /// The user's config dir.
    User(PathBuf),
    /// A trusted project's file.
    Project(PathBuf),
    /// An installed plugin's `agents/` (named `PLUGIN:NAME`).
    Plugin(String),
}

impl std::fmt::Display for AgentOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentOrigin::BuiltIn => f.write_str("built in"),
            AgentOrigin::User(p) => write!(f, "yours, {}", p.display()),
            AgentOrigin::Project(p) => write!(f, "project, {}", p.display()),
            AgentOrigin::Plugin(name) => write!(f, "plugin {name}"),
        }
    }
}

/// One agent definition.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    /// Its name, as the `agent` tool takes it.
    pub name: String,
    /// When to use it (shown to the model).
    pub description: String,
    /// The tools it may use (North or Claude Code names, globs or regular
    /// expressions); `None`: every tool the parent may use.
    pub tools: Option<Vec<String>>,
    /// Its model (`None` or `inherit`: the parent's).
    pub model: Option<String>,
    /// Its permission mode, never wider than the parent's.
    pub mode: Option<PermissionMode>,
    /// Its system prompt.
    pub prompt: String,
    /// Where it was defined.
    pub origin: AgentOrigin,
    /// Where it works (Claude Code's `isolation: worktree`: a git worktree
    /// of its own, its changes reviewed back into the main tree).
    pub isolation: Isolation,
}

/// Where a sub-agent works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// In the parent's working tree, with the parent's shell.
    #[default]
    Shared,
    /// In a git worktree of its own, with a shell of its own.
    Worktree,
}

/// An `isolation` North does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("isolation `{0}`: use `worktree` (or leave it out)")]
pub struct UnknownIsolation(pub String);

impl std::str::FromStr for Isolation {
    type Err = UnknownIsolation;

    /// The value of `isolation` in a definition or an `agent` call.
    fn from_str(word: &str) -> Result<Isolation, UnknownIsolation> {
        match word.trim() {
            "" | "none" | "shared" => Ok(Isolation::Shared),
            "worktree" => Ok(Isolation::Worktree),
            other => Err(UnknownIsolation(other.to_string())),
        }
    }
}

/// One tool pattern: a glob (`edit_*`) or a regular expression, on North
/// or Claude Code names.
fn pattern(p: &str) -> Option<Matcher> {
    let glob = p
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | ':'));
    let regex = if glob {
        regex::escape(p).replace("\\*", ".*")
    } else {
        p.to_string()
    };
    Matcher::new(&regex).ok()
}

impl AgentDef {
    /// Whether the agent may use tool `name`.
    pub fn allows(&self, name: &str) -> bool {
        match &self.tools {
            None => true,
            Some(patterns) => patterns
                .iter()
                .filter_map(|p| pattern(p))
                .any(|m| m.matches(name)),
        }
    }

    /// The mode it runs in under a parent in `parent`: its own when that is
    /// no wider, else the parent's.
    pub(crate) fn mode_under(&self, parent: PermissionMode) -> PermissionMode {
        let rank = |m: PermissionMode| match m {
            PermissionMode::Plan => 0,
            PermissionMode::Ask => 1,
            PermissionMode::AcceptEdits => 2,
            PermissionMode::Auto => 3,
        };
        match self.mode {
            Some(m) if rank(m) <= rank(parent) => m,
            _ => parent,
        }
    }

    /// The model it asks for, if not the parent's.
    pub(crate) fn own_model(&self) -> Option<&str> {
        self.model
            .as_deref()
            .filter(|m| !m.is_empty() && *m != "inherit")
    }
}

/// The built-in agents.
pub fn builtin() -> Vec<AgentDef> {
    vec![
        AgentDef {
            name: "general".into(),
            description: "multi-step work (research, changes, checks) with every tool you have".into(),
            tools: None,
            model: None,
            mode: None,
            prompt: "You are a sub-agent of North, a coding assistant, working in the user's repository on one task another agent handed you. Do the task with your tools, then answer with what you found or did, complete and concise: your final message is all the other agent sees.".into(),
            origin: AgentOrigin::BuiltIn,
            isolation: Isolation::Shared,
        },
        AgentDef {
            name: "explore".into(),
            description: "read-only search: where something is defined or configured, how it works".into(),
            tools: Some(
                ["find_files", "search_text", "read_file", "list_root", "read_readme", "detect_languages", "hotfiles"]
                    .map(String::from)
                    .to_vec(),
            ),
            model: None,
            mode: Some(PermissionMode::Plan),
            prompt: "You are a read-only explorer for North, a coding assistant. Search and read the repository to answer the question you were given. Cite files and line numbers. Never guess: say what you could not find. Your final message is all the other agent sees.".into(),
            origin: AgentOrigin::BuiltIn,
            isolation: Isolation::Shared,
        },
    ]
}

/// The agents available: built in, the user's, and a trusted project's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentSet {
    defs: Vec<AgentDef>,
    /// Definitions not taken, one line each (unreadable, unnamed, an
    /// untrusted project's).
    pub ignored: Vec<String>,
}

impl AgentSet {
    /// Built in, then the user's (`config_dir/agents`), then — when
    /// `trusted` — the project's; a later definition of a name replaces an
    /// earlier one.
    pub fn load(root: &Path, config_dir: Option<&Path>, trusted: bool) -> AgentSet {
        let mut set = AgentSet {
            defs: builtin(),
            ignored: Vec::new(),
        };
        if let Some(dir) = config_dir {
            let dir = dir.join("agents");
            set.load_dir(&dir, |p| AgentOrigin::User(p.to_path_buf()));
        }
        for rel in PROJECT_AGENT_DIRS {
            let dir = root.join(rel);
            if !dir.is_dir() {
                continue;
            }
            if let Some(link) = north_tools::repo::linked_component(root, Path::new(rel)) {
                set.ignored.push(format!(
                    "{rel}/: {} is a link; North reads a project's agents only from real directories inside it",
                    link.display()
                ));
                continue;
            }
            if trusted {
                set.load_dir(&dir, |p| {
                    AgentOrigin::Project(p.strip_prefix(root).unwrap_or(p).to_path_buf())
                });
            } else {
                set.ignored.push(format!(
                    "{rel}/: the project is not trusted (an agent's instructions are code; run `north trust` after review)"
                ));
            }
        }
        set
    }

    /// The agents of an installed plugin's agent folder `dir`, each named
    /// `PLUGIN:NAME` as Claude Code names them (`${CLAUDE_PLUGIN_ROOT}` in
    /// a prompt standing for the plugin's folder `root`); and what was not
    /// taken.
    pub fn plugin(dir: &Path, plugin: &str, root: &Path) -> AgentSet {
        let mut set = AgentSet {
            defs: Vec::new(),
            ignored: Vec::new(),
        };
        match dir.parent() {
            // A path to one definition (`"agents": ["./agents/x.md"]`).
            Some(parent) if dir.is_file() => match read_def(dir, parent) {
                Ok(mut def) => {
                    def.origin = AgentOrigin::Plugin(plugin.to_string());
                    set.defs.push(def);
                }
                Err(why) => set.ignored.push(format!("{}: {why}", dir.display())),
            },
            _ => set.load_dir(dir, |_| AgentOrigin::Plugin(plugin.to_string())),
        }
        for def in &mut set.defs {
            def.name = format!("{plugin}:{}", def.name);
            def.prompt = crate::commands::plugin_root_in(&def.prompt, root);
        }
        set
    }

    /// Adds `other`'s agents; a name already here keeps its first
    /// definition (a plugin never replaces the user's or the project's).
    pub fn add(&mut self, other: AgentSet) {
        for def in other.defs {
            if self.get(&def.name).is_none() {
                self.defs.push(def);
            }
        }
        self.ignored.extend(other.ignored);
    }

    /// A set of exactly `defs` (for tests and library users).
    pub fn of(defs: Vec<AgentDef>) -> AgentSet {
        AgentSet {
            defs,
            ignored: Vec::new(),
        }
    }

    fn load_dir(&mut self, dir: &Path, origin: impl Fn(&Path) -> AgentOrigin) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for path in files {
            if path.extension().and_then(|e| e.to_str()) != Some("md") {
                continue;
            }
            match read_def(&path, dir) {
                Ok(mut def) => {
                    def.origin = origin(&path);
                    self.defs.retain(|d| d.name != def.name);
                    self.defs.push(def);
                }
                Err(why) => self.ignored.push(format!("{}: {why}", path.display())),
            }
        }
    }

    /// Every agent, built-in ones first.
    pub fn defs(&self) -> &[AgentDef] {
        &self.defs
    }

    /// The agent called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        self.defs.iter().find(|d| d.name == name)
    }

    /// Their names.
    pub fn names(&self) -> Vec<&str> {
        self.defs.iter().map(|d| d.name.as_str()).collect()
    }

    /// One line per agent, as `/agents` shows them.
    pub fn describe(&self) -> Vec<String> {
        self.defs
            .iter()
            .map(|d| {
                let tools = match &d.tools {
                    None => "every tool".to_string(),
                    Some(t) => t.join(", "),
                };
                format!("{} — {} [{tools}] ({})", d.name, d.description, d.origin)
            })
            .collect()
    }
}

/// Reads one definition file (never through a link out of `dir`).
fn read_def(path: &Path, dir: &Path) -> Result<AgentDef, String> {
    let text = crate::frontmatter::read_within(path, dir, MAX_FILE).map_err(|e| e.to_string())?;
    let doc = crate::frontmatter::parse(&text);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let name = doc.text("name").unwrap_or_else(|| stem.to_string());
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "name `{name}`: use letters, digits, `-` or `_` (at most 64)"
        ));
    }
    let description: String = doc
        .text("description")
        .ok_or("no `description` in its front matter (the model chooses agents by it)")?
        .chars()
        .take(MAX_DESCRIPTION)
        .collect();
    let mode = match doc.text("mode").or_else(|| doc.text("permissionmode")) {
        None => None,
        Some(m) => Some(match m.as_str() {
            "default" => PermissionMode::Ask,
            "acceptEdits" => PermissionMode::AcceptEdits,
            "bypassPermissions" => PermissionMode::Auto,
            other => other
                .parse()
                .map_err(|_| format!("mode `{other}`: use ask, accept-edits, plan or auto"))?,
        }),
    };
    if doc.body.trim().is_empty() {
        return Err("no body: the body is the agent's system prompt".into());
    }
    let isolation: Isolation = doc
        .text("isolation")
        .unwrap_or_default()
        .parse()
        .map_err(|e: UnknownIsolation| e.to_string())?;
    Ok(AgentDef {
        name,
        description,
        tools: doc
            .fields
            .get("tools")
            .map(|t| t.items())
            .filter(|t| !t.is_empty()),
        model: doc.text("model"),
        mode,
        prompt: doc.body.trim().to_string(),
        origin: AgentOrigin::BuiltIn,
        isolation,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_agents_load_with_their_tool_names_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join(".claude/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(
            agents.join("reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: inherit\n---\nYou review.\n",
        )
        .unwrap();
        std::fs::write(agents.join("broken.md"), "no front matter").unwrap();
        let set = AgentSet::load(dir.path(), None, true);
        let r = set.get("reviewer").unwrap();
        assert!(r.allows("read_file") && r.allows("search_text"));
        assert!(!r.allows("shell_run") && !r.allows("edit_create_file"));
        assert_eq!(r.own_model(), None);
        assert_eq!(r.prompt, "You review.");
        assert!(set.get("general").is_some() && set.get("explore").is_some());
        assert_eq!(set.ignored.len(), 1, "{:?}", set.ignored);

        let untrusted = AgentSet::load(dir.path(), None, false);
        assert!(untrusted.get("reviewer").is_none());
        assert!(untrusted.ignored[0].contains("not trusted"));
    }

    #[test]
    fn patterns_and_modes() {
        let mut def = builtin().remove(0);
        def.tools = Some(vec!["edit_*".into(), "fs.read_text".into()]);
        assert!(def.allows("edit_create_file") && def.allows("fs.read_text"));
        assert!(!def.allows("fs_read_text") && !def.allows("shell_run"));
        def.mode = Some(PermissionMode::Auto);
        assert_eq!(def.mode_under(PermissionMode::Ask), PermissionMode::Ask);
        def.mode = Some(PermissionMode::Plan);
        assert_eq!(def.mode_under(PermissionMode::Auto), PermissionMode::Plan);
    }
}
