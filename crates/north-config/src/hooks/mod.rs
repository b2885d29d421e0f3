//! Hook definitions: what the user configured in the `hooks` key of their
//! config, a trusted project's `.north/project.json`, or Claude Code's
//! `.claude/settings.json` / `.claude/settings.local.json` — read, checked
//! and described, never run (running is `north-agent`'s `hooks`).
//!
//! Main types: [`HookSet`] (configured hooks, with where each came from),
//! [`HookDef`], [`Matcher`] (Claude Code's tool names match too),
//! [`HookError`] (the field that is wrong, and why).

mod names;
mod parse;

pub use names::{claude_names, hook_tool_input};
pub use parse::{DEFAULT_TIMEOUT, HookError};

use std::path::{Path, PathBuf};
use std::time::Duration;

use north_protocol::HookEvent;
use serde_json::Value;

/// Project files whose `hooks` key North reads (trusted projects only):
/// its own, then Claude Code's.
pub const PROJECT_HOOK_FILES: &[&str] = &[
    ".north/project.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// Where a hook was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOrigin {
    /// The user's own config file.
    User(PathBuf),
    /// A project file (it runs only while the project is trusted).
    Project(PathBuf),
    /// An installed plugin's `hooks/hooks.json` (it runs only once its
    /// contents were reviewed at install or update).
    Plugin {
        /// The plugin's name.
        name: String,
        /// Its folder (`CLAUDE_PLUGIN_ROOT`).
        root: PathBuf,
    },
}

impl HookOrigin {
    /// The folder of the plugin a hook came from, for its
    /// `CLAUDE_PLUGIN_ROOT`.
    pub fn plugin_root(&self) -> Option<&Path> {
        match self {
            HookOrigin::Plugin { root, .. } => Some(root),
            _ => None,
        }
    }
}

impl std::fmt::Display for HookOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookOrigin::User(p) => write!(f, "your config {}", p.display()),
            HookOrigin::Project(p) => write!(f, "project {}", p.display()),
            HookOrigin::Plugin { name, .. } => write!(f, "plugin {name}"),
        }
    }
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// A matcher: a regular expression on the whole tool name (North's, or
/// its Claude Code name), or on the event's source for `SessionStart` and
/// `PreCompact`. Empty or `*` matches everything.
#[derive(Debug, Clone)]
pub struct Matcher {
    text: String,
    regex: Option<regex::Regex>,
}

impl Matcher {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Result<Matcher, regex::Error> {
        let trimmed = pattern.trim();
        let regex = if trimmed.is_empty() || trimmed == "*" {
            None
        } else {
            Some(regex::Regex::new(&format!("^(?:{trimmed})$"))?)
        };
        Ok(Matcher {
            text: trimmed.to_string(),
            regex,
        })
    }

    /// The pattern as written (empty: everything).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether `subject` (a North tool name, or an event source) matches.
    pub fn matches(&self, subject: &str) -> bool {
        let Some(re) = &self.regex else {
            return true;
        };
        re.is_match(subject) || claude_names(subject).iter().any(|n| re.is_match(n))
    }
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq)]
pub struct HookDef {
    /// When it runs.
    pub event: HookEvent,
    /// Which calls (or sources) it runs for.
    pub matcher: Matcher,
    /// The shell command.
    pub command: String,
    /// How long it may run before it is killed.
    pub timeout: Duration,
    /// Whether it may reach the network (the user's config only).
    pub network: bool,
    /// Where it was configured.
    pub origin: HookOrigin,
}

/// The configured hooks, in the order their files were read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookSet {
    defs: Vec<HookDef>,
    /// What was skipped while reading (events or hook types North does
    /// not have, a project's `network`), one line each.
    pub skipped: Vec<String>,
}

impl HookSet {
    /// The hooks of one `hooks` block from `origin`; `strict` for North's
    /// own files (any problem is an error naming the field), lenient for
    /// Claude Code's.
    pub fn parse(value: &Value, origin: HookOrigin, strict: bool) -> Result<HookSet, HookError> {
        let parsed = parse::parse(value, &origin, strict)?;
        Ok(HookSet {
            defs: parsed.defs,
            skipped: parsed.skipped,
        })
    }

    /// Adds `other`'s hooks after these.
    pub fn extend(&mut self, other: HookSet) {
        self.defs.extend(other.defs);
        self.skipped.extend(other.skipped);
    }

    /// Every hook.
    pub fn defs(&self) -> &[HookDef] {
        &self.defs
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Whether any hook runs at `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.defs.iter().any(|d| d.event == event)
    }

    /// The hooks that run at `event` for `subject`, each command once.
    pub fn matching(&self, event: HookEvent, subject: Option<&str>) -> Vec<&HookDef> {
        let mut seen = std::collections::HashSet::new();
        self.defs
            .iter()
            .filter(|d| d.event == event)
            .filter(|d| subject.is_none_or(|s| d.matcher.matches(s)))
            .filter(|d| seen.insert(d.command.as_str()))
            .collect()
    }

    /// One line per hook, as `/hooks` shows them.
    pub fn describe(&self) -> Vec<String> {
        self.defs.iter().map(describe_def).collect()
    }
}

/// `PreToolUse [Bash] runs `check.sh` (timeout 30s) — your config …`.
fn describe_def(d: &HookDef) -> String {
    let matcher = if d.matcher.text().is_empty() {
        String::new()
    } else {
        format!(" [{}]", d.matcher.text())
    };
    format!(
        "{}{matcher} runs `{}` (timeout {}s{}) — from {}",
        d.event,
        d.command,
        d.timeout.as_secs_f64(),
        if d.network { ", network" } else { "" },
        d.origin
    )
}

/// The `hooks` blocks a project's files hold, file by file: `(relative
/// path, block)`. Unreadable or hook-less files are left out.
pub fn project_blocks(root: &Path) -> Vec<(&'static str, Value)> {
    PROJECT_HOOK_FILES
        .iter()
        .filter_map(|rel| {
            let text = crate::read_settings(&root.join(rel)).ok()??;
            let value: Value = serde_json::from_str(&text).ok()?;
            let hooks = value.get("hooks")?.clone();
            Some((*rel, hooks))
        })
        .collect()
}

/// The hooks a project's files configure (Claude Code's files read
/// leniently; `.north/project.json` is checked strictly by the config).
pub fn project_hooks(root: &Path) -> HookSet {
    let mut set = HookSet::default();
    for (rel, block) in project_blocks(root) {
        let strict = rel.starts_with(".north/");
        match HookSet::parse(&block, HookOrigin::Project(PathBuf::from(rel)), strict) {
            Ok(s) => set.extend(s),
            Err(e) => set.skipped.push(format!("{rel}: {e}")),
        }
    }
    set
}
