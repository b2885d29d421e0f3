//! Configuration: built-in defaults < global `config.json` (XDG config dir)
//! < project `.north/project.json` < environment < flags. Every effective
//! value remembers where it came from, for `north config`.
//!
//! Config files never hold API keys: keys come from the environment only,
//! and a file naming a key field is rejected.
//!
//! Main types: [`Config`] (the effective values, each with its [`Source`]),
//! [`ConfigFile`] (one file as written), [`ConfigError`] (the file and the
//! field), [`hooks::HookSet`] (the hooks configured).
//!
//! This crate must not run anything, talk to the network or decide trust
//! (the caller says whether a project's widening settings apply): it reads
//! and checks. It builds without an HTTP client, so its parser is fuzzed
//! on its own.
//!
//! Module map, lowest first (settings files are read bounded, regular files
//! only, by `north_policy::read_settings`, re-exported here):
//! - `hooks`: hook definitions, Claude Code's format read too
//! - `claude`: Claude Code's permission rules, as North's policy takes them
//! - `dirs`: the XDG locations of the global files
//! - `keys`: the TUI keys a user rebinds (`keybindings`)
//! - `file`: one config file and its parser (uses `hooks`, `keys`)
//! - `apply`: one file's values laid over the defaults (uses `file`, `hooks`)
//!
//! This file merges the sources.

use std::fmt;
use std::path::{Path, PathBuf};

use north_llm::OpenAiApi;
use north_protocol::ReasoningEffort;
use serde::{Deserialize, Serialize};
use thiserror::Error;

mod apply;
pub mod claude;
mod dirs;
mod file;
pub mod hooks;
pub mod keys;

pub use dirs::{data_dir, global_config_path, runtime_dir, state_dir};
pub use file::{
    ConfigFile, HostPattern, LspFile, Provider, ProviderApi, ProviderFile, StatusLineFile,
    StatusLineKind, UnknownProvider, parse_file, read_file,
};
pub use north_policy::{SETTINGS_MAX, read_settings};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// North's built-in default.
    Default,
    /// The global config file.
    Global(PathBuf),
    /// The project config file.
    Project(PathBuf),
    /// An environment variable.
    Env(&'static str),
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::Global(p) | Source::Project(p) => write!(f, "{}", p.display()),
            Source::Env(v) => write!(f, "env {v}"),
            Source::Flag(fl) => write!(f, "flag {fl}"),
        }
    }
}

/// A value and its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub source: Source,
}

impl<T> Sourced<T> {
    fn default(value: T) -> Self {
        Sourced {
            value,
            source: Source::Default,
        }
    }
    fn set(&mut self, value: T, source: Source) {
        self.value = value;
        self.source = source;
    }
}

/// How tool calls travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolProtocol {
    /// The provider's native tool calling.
    Native,
    /// `<<<TOOL_CALLS_JSON>>>` blocks in text (runtime-contracts §3).
    Text,
}

/// How North tells the user it needs them while the terminal is not
/// focused (a turn ended, a prompt or a server's form waits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notifications {
    /// By the terminal: OSC 9 where it shows it (iTerm2, WezTerm, ghostty,
    /// kitty), OSC 777 (foot, urxvt), else the bell.
    #[default]
    Auto,
    /// `ESC ] 9 ; text BEL` (iTerm2's desktop notification).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL`.
    Osc777,
    /// The terminal bell.
    Bell,
    /// None.
    Off,
}

/// The TUI's palette (`theme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThemeSetting {
    /// By the terminal's background where it says (`COLORFGBG`), else dark.
    #[default]
    Auto,
    /// For a dark background.
    Dark,
    /// For a light background.
    Light,
    /// The terminal's 16 colours only.
    Ansi,
}

/// Condensation starts at this share of the budget, in percent, unless
/// configured (`compact_at`).
pub const DEFAULT_COMPACT_AT: u8 = 85;

/// The effective configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// Provider name.
    pub provider: Sourced<String>,
    /// Model (None: the provider's default).
    pub model: Sourced<Option<String>>,
    /// Anthropic base URL (None: the official endpoint).
    pub anthropic_base_url: Sourced<Option<String>>,
    /// OpenAI base URL (None: the official endpoint).
    pub openai_base_url: Sourced<Option<String>>,
    /// Maximum model steps per turn.
    pub max_steps: Sourced<u32>,
    /// Approve edits without asking.
    pub approve_edits: Sourced<bool>,
    /// Run shell commands without asking.
    pub allow_shell: Sourced<bool>,
    /// Tool-call protocol.
    pub tool_protocol: Sourced<ToolProtocol>,
    /// Context budget in tokens (None: from the model's context window).
    pub context_budget: Sourced<Option<u64>>,
    /// Share of the budget, in percent, at which condensation starts.
    pub compact_at: Sourced<u8>,
    /// OpenAI API (None: Responses for OpenAI's endpoint, Chat elsewhere).
    pub openai_api: Sourced<Option<OpenAiApi>>,
    /// Context window (None: discovered from the server, else the catalogue).
    pub context_window: Sourced<Option<u64>>,
    /// Hosts `net` may reach; `None`: any (a project may narrow it).
    pub net_allowlist: Sourced<Option<Vec<String>>>,
    /// Reasoning effort (None: the provider's default).
    pub thinking: Sourced<Option<ReasoningEffort>>,
    /// Permission mode at start.
    pub mode: Sourced<north_protocol::PermissionMode>,
    /// The TUI keys the user rebound (`keybindings`).
    pub keybindings: keys::KeyBindings,
    /// How the user is told North needs them (`notifications`).
    pub notifications: Sourced<Notifications>,
    /// The user's own `~/.claude/settings.json` permission rules apply
    /// (`claude_permissions`; the user's config only).
    pub claude_user_permissions: Sourced<bool>,
    /// The TUI's palette (`theme`).
    pub theme: Sourced<ThemeSetting>,
    /// Whether commands run inside the OS sandbox (only the user's config
    /// or flag turns it off).
    pub sandbox: Sourced<bool>,
    /// Paths hidden from sandboxed commands besides the secret stores.
    pub sandbox_deny_read: Sourced<Vec<std::path::PathBuf>>,
    /// Paths under the home directory sandboxed commands may read besides
    /// the built-in allow-list.
    pub sandbox_allow_read: Sourced<Vec<std::path::PathBuf>>,
    /// Whether sandboxed commands may create Unix sockets.
    pub sandbox_unix_sockets: Sourced<bool>,
    /// Hosts sandboxed commands may reach through North's proxy (the
    /// user's `sandbox.network.allow`).
    pub sandbox_network_allow: Sourced<Vec<HostPattern>>,
    /// Hosts sandboxed commands never reach: the user's
    /// `sandbox.network.deny`, and a project's (which may only narrow).
    pub sandbox_network_deny: Sourced<Vec<HostPattern>>,
    /// Whether the registries the user's package managers use are allowed
    /// (`sandbox.network.registries`).
    pub sandbox_network_registries: Sourced<bool>,
    /// The user's own providers and preset overrides (their config only).
    pub providers: std::collections::BTreeMap<String, ProviderFile>,
    /// The hooks that run: the user's, and a trusted project's.
    #[serde(skip)]
    pub hooks: crate::hooks::HookSet,
    /// The SearXNG endpoint `web_search` asks (your own config only).
    pub web_search_url: Option<String>,
    /// `web_search.provider: true`: the provider's own search, where its
    /// API has one (your own config only).
    pub web_search_provider: bool,
    /// The status line command (the user's own config only).
    pub status_line: Option<StatusLineFile>,
    /// Language servers by language: the user's, and a trusted project's
    /// (a later file's entry for a language wins).
    pub lsp: std::collections::BTreeMap<String, LspFile>,
    /// Installed plugins switched on (`true`) or off by name (`NAME` or
    /// `NAME@MARKETPLACE`): the user's config, then a trusted project's
    /// `.north/project.json` and `.claude/settings.json`.
    pub enabled_plugins: std::collections::BTreeMap<String, bool>,
    /// Project settings that were not applied, and why.
    pub ignored: Vec<IgnoredSetting>,
    /// Claude Code's permission rules from the project's
    /// `.claude/settings.json` (allow rules only when it is trusted).
    pub claude: claude::ClaudeRules,
}

/// The plugins a project's Claude Code settings switch on or off
/// (`"enabledPlugins": {"NAME@MARKETPLACE": true}`), the local file last.
fn claude_enabled_plugins(root: &Path) -> std::collections::BTreeMap<String, bool> {
    let mut out = std::collections::BTreeMap::new();
    for rel in [".claude/settings.json", ".claude/settings.local.json"] {
        let Ok(Some(text)) = read_settings(&root.join(rel)) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if let Some(map) = value.get("enabledPlugins").and_then(|v| v.as_object()) {
            for (name, on) in map {
                if let Some(on) = on.as_bool() {
                    out.insert(name.clone(), on);
                }
            }
        }
    }
    out
}

/// A setting in `.north/project.json` North did not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredSetting {
    /// The key.
    pub key: &'static str,
    /// Why it was not applied.
    pub because: IgnoredBecause,
}

/// Why a project setting was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IgnoredBecause {
    /// It widens what North does unasked, and the project is not trusted.
    Untrusted,
    /// It chooses where an API key is sent; only the user may.
    EndpointFromProject,
    /// It shapes the OS sandbox; only the user's own config may.
    SandboxFromProject,
    /// It runs a command of the user's on every screen update; only the
    /// user's own config may set one.
    UserOnly,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            provider: Sourced::default("anthropic".into()),
            model: Sourced::default(None),
            anthropic_base_url: Sourced::default(None),
            openai_base_url: Sourced::default(None),
            max_steps: Sourced::default(25),
            approve_edits: Sourced::default(false),
            allow_shell: Sourced::default(false),
            tool_protocol: Sourced::default(ToolProtocol::Native),
            context_budget: Sourced::default(None),
            compact_at: Sourced::default(DEFAULT_COMPACT_AT),
            openai_api: Sourced::default(None),
            context_window: Sourced::default(None),
            net_allowlist: Sourced::default(None),
            thinking: Sourced::default(None),
            sandbox: Sourced::default(true),
            sandbox_deny_read: Sourced::default(Vec::new()),
            sandbox_allow_read: Sourced::default(Vec::new()),
            sandbox_unix_sockets: Sourced::default(false),
            sandbox_network_allow: Sourced::default(Vec::new()),
            sandbox_network_deny: Sourced::default(Vec::new()),
            sandbox_network_registries: Sourced::default(false),
            mode: Sourced::default(north_protocol::PermissionMode::Ask),
            notifications: Sourced::default(Notifications::Auto),
            claude_user_permissions: Sourced::default(false),
            theme: Sourced::default(ThemeSetting::Auto),
            keybindings: keys::KeyBindings::default(),
            providers: std::collections::BTreeMap::new(),
            hooks: crate::hooks::HookSet::default(),
            web_search_url: None,
            web_search_provider: false,
            status_line: None,
            lsp: std::collections::BTreeMap::new(),
            enabled_plugins: std::collections::BTreeMap::new(),
            ignored: Vec::new(),
            claude: claude::ClaudeRules::default(),
        }
    }
}

/// A configuration problem, naming the file and the field.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is malformed.
    #[error("{path}: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the field.
        problem: FileProblem,
    },
    /// The file's `hooks` block cannot be run.
    #[error("{path}: {source}")]
    Hooks {
        /// The file.
        path: PathBuf,
        /// The field and what is wrong with it.
        source: crate::hooks::HookError,
    },
    /// An environment variable has a bad value.
    #[error("environment variable {var}: `{value}` is not a whole number of at least 1")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The provider named is not one North knows.
    #[error("{error} (provider set by {source_of})")]
    Provider {
        /// Where the name came from.
        source_of: String,
        /// The name and the known ones.
        error: UnknownProvider,
    },
}

/// What is wrong in a config file.
#[derive(Debug, Error)]
pub enum FileProblem {
    /// The text is not JSON.
    #[error("not valid JSON: {0}")]
    Json(serde_json::Error),
    /// A field looks like it holds a key.
    #[error(
        "field `{0}`: API keys are read from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY), never from config files"
    )]
    KeyField(String),
    /// A field has the wrong type or is unknown (`.`: the file itself).
    #[error("{}{error}", field_prefix(.field))]
    Field {
        /// Where, as a path (`sandbox.enabled`).
        field: String,
        /// What serde found.
        error: serde_json::Error,
    },
    /// `max_steps` is 0.
    #[error("field `max_steps`: must be at least 1")]
    MaxStepsZero,
    /// `compact_at` is not a percentage North compacts at.
    #[error("field `compact_at`: {0} is not a share of the context budget in percent (10 to 99)")]
    CompactAt(u8),
}

fn field_prefix(field: &str) -> String {
    if field == "." {
        String::new()
    } else {
        format!("field `{field}`: ")
    }
}

/// Command-line overrides (None: not given).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--provider`.
    pub provider: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--approve-edits` / `--yes`.
    pub approve_edits: Option<bool>,
    /// `--allow-shell` / `--yes`.
    pub allow_shell: Option<bool>,
    /// `--max-steps`.
    pub max_steps: Option<u32>,
    /// `--tool-protocol`.
    pub tool_protocol: Option<ToolProtocol>,
    /// `--openai-api`.
    pub openai_api: Option<OpenAiApi>,
    /// `--thinking`.
    pub thinking: Option<ReasoningEffort>,
}

impl Config {
    /// The command line's flags, over every file and the environment.
    fn apply_flags(&mut self, flags: &Overrides) {
        let c = self;
        if let Some(v) = &flags.provider {
            c.provider.set(v.clone(), Source::Flag("--provider"));
        }
        if let Some(v) = &flags.model {
            c.model.set(Some(v.clone()), Source::Flag("--model"));
        }
        if let Some(v) = flags.approve_edits {
            c.approve_edits.set(v, Source::Flag("--approve-edits"));
        }
        if let Some(v) = flags.allow_shell {
            c.allow_shell.set(v, Source::Flag("--allow-shell"));
        }
        if let Some(v) = flags.max_steps {
            c.max_steps.set(v, Source::Flag("--max-steps"));
        }
        if let Some(v) = flags.tool_protocol {
            c.tool_protocol.set(v, Source::Flag("--tool-protocol"));
        }
        if let Some(v) = flags.openai_api {
            c.openai_api.set(Some(v), Source::Flag("--openai-api"));
        }
        if let Some(v) = flags.thinking {
            c.thinking.set(Some(v), Source::Flag("--thinking"));
        }
    }

    /// Claude Code's permission rules of the project at `root`: its allow
    /// rules only when trusted; its denied hosts join the network's deny.
    fn apply_claude_rules(&mut self, root: &Path, project_trusted: bool) {
        let rules = claude::ClaudeRules::of_project(root);
        let mut rules = if project_trusted {
            rules
        } else {
            rules.narrowing_only()
        };
        // The user's own rules, when they said so: theirs, so all apply.
        if self.claude_user_permissions.value
            && let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
        {
            let path = home.join(".claude/settings.json");
            if let Ok(Some(text)) = read_settings(&path) {
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(v) => rules.add(&v, "~/.claude/settings.json"),
                    Err(e) => rules
                        .unmapped
                        .push(format!("~/.claude/settings.json: not JSON ({e})")),
                }
            }
        }
        self.claude = rules;
        // A file the read tools may not open is hidden from commands too,
        // where the rule names a path (the OS sandbox hides paths, not
        // patterns).
        for glob in self.claude.read_deny.clone() {
            let literal = glob.strip_suffix("/**").unwrap_or(&glob);
            if literal.contains(['*', '?', '[', '{']) {
                self.claude.unmapped.push(format!(
                    "`Read({glob})` (deny): North's read tools keep to it; commands are not kept from a pattern (name the paths to hide them from commands too)"
                ));
            } else {
                self.sandbox_deny_read.value.push(root.join(literal));
            }
        }
        for host in &self.claude.deny_hosts {
            match HostPattern::parse(host) {
                Ok(h) => self.sandbox_network_deny.value.push(h),
                Err(e) => self
                    .claude
                    .unmapped
                    .push(format!(".claude/settings.json: {e}")),
            }
        }
    }

    /// Loads the effective configuration for the project at `root`.
    /// `global` is the global config path (None: skip), `env` looks up
    /// variables, `project_trusted` says whether the project's widening
    /// settings apply (see `north_agent::trust`).
    pub fn load(
        root: &Path,
        global: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
        flags: &Overrides,
        project_trusted: bool,
    ) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        if let Some(g) = global {
            let f = read_file(g)?;
            c.apply_file(f, || Source::Global(g.to_path_buf()), None);
        }
        let project = root.join(".north").join("project.json");
        let f = read_file(&project)?;
        c.apply_file(
            f,
            || Source::Project(project.clone()),
            Some(project_trusted),
        );
        // Claude Code's project settings carry hooks too: read leniently
        // (its other keys and events are not North's), run only if trusted.
        let claude: Vec<_> = crate::hooks::project_blocks(root)
            .into_iter()
            .filter(|(rel, _)| rel.starts_with(".claude/"))
            .collect();
        if !claude.is_empty() {
            if project_trusted {
                for (rel, block) in claude {
                    match crate::hooks::HookSet::parse(
                        &block,
                        crate::hooks::HookOrigin::Project(PathBuf::from(rel)),
                        false,
                    ) {
                        Ok(set) => c.hooks.extend(set),
                        Err(e) => c.hooks.skipped.push(format!("{rel}: {e}")),
                    }
                }
            } else if !c.ignored.iter().any(|i| i.key == "hooks") {
                c.ignore("hooks", IgnoredBecause::Untrusted);
            }
        }
        if project_trusted {
            c.enabled_plugins.extend(claude_enabled_plugins(root));
        }
        c.apply_claude_rules(root, project_trusted);
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = env("NORTH_PROVIDER") {
            c.provider.set(v, Source::Env("NORTH_PROVIDER"));
        }
        if let Some(v) = env("NORTH_MODEL") {
            c.model.set(Some(v), Source::Env("NORTH_MODEL"));
        }
        if let Some(v) = env("ANTHROPIC_BASE_URL") {
            c.anthropic_base_url
                .set(Some(v), Source::Env("ANTHROPIC_BASE_URL"));
        }
        if let Some(v) = env("OPENAI_BASE_URL") {
            c.openai_base_url
                .set(Some(v), Source::Env("OPENAI_BASE_URL"));
        }
        if let Some(v) = env("NORTH_MAX_STEPS") {
            let n = v
                .parse()
                .ok()
                .filter(|n: &u32| *n > 0)
                .ok_or_else(|| ConfigError::Env {
                    var: "NORTH_MAX_STEPS",
                    value: v.clone(),
                })?;
            c.max_steps.set(n, Source::Env("NORTH_MAX_STEPS"));
        }
        c.apply_flags(flags);
        // Checked once every source is in: the user's own providers count.
        c.provider_kind().map_err(|e| ConfigError::Provider {
            source_of: c.provider.source.to_string(),
            error: e,
        })?;
        Ok(c)
    }

    /// What the configured provider is: North's own, a preset, or one of
    /// the user's `providers` (an entry under a preset's name overrides the
    /// preset's fields; it does not make another provider).
    pub fn provider_kind(&self) -> Result<Provider, UnknownProvider> {
        let name = self.provider.value.as_str();
        match Provider::parse(name) {
            Ok(p) => Ok(p),
            Err(_) if self.providers.contains_key(name) => Ok(Provider::Custom),
            Err(mut e) => {
                e.custom = self
                    .providers
                    .keys()
                    .filter(|k| Provider::parse(k).is_err())
                    .cloned()
                    .collect();
                Err(e)
            }
        }
    }

    /// Human-readable `key = value  (source)` lines, plus whether keys are set
    /// (never their values).
    pub fn describe(&self, env: impl Fn(&str) -> Option<String>) -> String {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "(provider default)".into());
        let mut lines = vec![
            format!(
                "provider = {}  ({})",
                self.provider.value, self.provider.source
            ),
            format!(
                "model = {}  ({})",
                opt(&self.model.value),
                self.model.source
            ),
            format!(
                "anthropic_base_url = {}  ({})",
                opt(&self.anthropic_base_url.value),
                self.anthropic_base_url.source
            ),
            format!(
                "openai_base_url = {}  ({})",
                opt(&self.openai_base_url.value),
                self.openai_base_url.source
            ),
            format!(
                "max_steps = {}  ({})",
                self.max_steps.value, self.max_steps.source
            ),
            format!(
                "approve_edits = {}  ({})",
                self.approve_edits.value, self.approve_edits.source
            ),
            format!(
                "allow_shell = {}  ({})",
                self.allow_shell.value, self.allow_shell.source
            ),
            format!(
                "tool_protocol = {:?}  ({})",
                self.tool_protocol.value, self.tool_protocol.source
            )
            .to_lowercase(),
            format!(
                "context_budget = {}  ({})",
                self.context_budget.value.map_or_else(
                    || "(from the model's context window)".to_string(),
                    |b| b.to_string()
                ),
                self.context_budget.source
            ),
            format!(
                "compact_at = {}%  ({})",
                self.compact_at.value, self.compact_at.source
            ),
            format!(
                "openai_api = {}  ({})",
                self.openai_api.value.map_or(
                    "(responses for api.openai.com, else chat)",
                    OpenAiApi::as_str
                ),
                self.openai_api.source
            ),
            format!(
                "context_window = {}  ({})",
                self.context_window.value.map_or_else(
                    || "(from the server or the model catalogue)".to_string(),
                    |w| w.to_string()
                ),
                self.context_window.source
            ),
            format!(
                "thinking = {}  ({})",
                self.thinking
                    .value
                    .map_or("(provider default)", ReasoningEffort::as_str),
                self.thinking.source
            ),
            format!("mode = {}  ({})", self.mode.value, self.mode.source),
        ];
        for var in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"] {
            let set = env(var).is_some_and(|v| !v.trim().is_empty());
            lines.push(format!(
                "{} = {}",
                var.to_lowercase(),
                if set {
                    format!("set (env {var})")
                } else {
                    "not set".into()
                }
            ));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests;
