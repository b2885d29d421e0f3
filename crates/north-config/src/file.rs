//! One config file: its fields, and parsing with errors that name the file
//! and the field (never a key field: keys come from the environment only).

use std::path::Path;

use north_llm::OpenAiApi;
use north_protocol::ReasoningEffort;
use serde::Deserialize;

use super::{ConfigError, FileProblem, ToolProtocol};

/// One config file's contents; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct ConfigFile {
    /// `anthropic`, `openai` or `scripted`.
    pub provider: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Anthropic base URL.
    pub anthropic_base_url: Option<String>,
    /// OpenAI (or compatible) base URL.
    pub openai_base_url: Option<String>,
    /// Maximum model steps per turn.
    pub max_steps: Option<u32>,
    /// Approve edit proposals without asking (headless).
    pub approve_edits: Option<bool>,
    /// Run shell commands without asking (headless).
    pub allow_shell: Option<bool>,
    /// Native or text tool calls.
    pub tool_protocol: Option<ToolProtocol>,
    /// Context budget in tokens before condensation.
    pub context_budget: Option<u64>,
    /// The share of the budget, in percent (10–99), at which the
    /// conversation is condensed on its own.
    pub compact_at: Option<u8>,
    /// OpenAI API: `responses` or `chat`.
    pub openai_api: Option<OpenAiApi>,
    /// The model's context window in tokens, when the server cannot say.
    pub context_window: Option<u64>,
    /// Hosts the `net` capability may reach (`http.get`); unset: any.
    pub net_allowlist: Option<Vec<String>>,
    /// Reasoning (thinking): `off`, `low`, `medium` or `high`.
    pub thinking: Option<ReasoningEffort>,
    /// The TUI's palette: `auto`, `dark`, `light` or `ansi`.
    pub theme: Option<super::ThemeSetting>,
    /// The TUI's keys, rebound (`{"alt+e": "edit-draft"}`).
    pub keybindings: Option<super::keys::KeyBindings>,
    /// How North says it needs the user while the terminal is unfocused:
    /// `auto`, `osc9`, `osc777`, `bell` or `off`.
    pub notifications: Option<super::Notifications>,
    /// Your own Claude Code permission rules (`~/.claude/settings.json`)
    /// apply too: your own config only.
    pub claude_permissions: Option<bool>,
    /// Permission mode at start: `ask`, `accept-edits`, `plan` or `auto`.
    pub mode: Option<north_protocol::PermissionMode>,
    /// The OS sandbox: your own config only (a project's is ignored).
    pub sandbox: Option<SandboxFile>,
    /// Your own providers, and overrides of the presets' fields: your own
    /// config only (a project may name a provider, never say where it is).
    pub providers: Option<std::collections::BTreeMap<String, ProviderFile>>,
    /// Hooks in Claude Code's schema (a project's run only once trusted).
    pub hooks: Option<serde_json::Value>,
    /// Where `web_search` searches: your own config only.
    pub web_search: Option<WebSearchFile>,
    /// A status line the user programs, in Claude Code's schema
    /// (`"statusLine": {"type": "command", "command": …}`): your own
    /// config only.
    #[serde(alias = "statusLine")]
    pub status_line: Option<StatusLineFile>,
    /// Language servers by language (a project's only once trusted).
    pub lsp: Option<std::collections::BTreeMap<String, LspFile>>,
    /// Installed plugins switched on or off here, by name (Claude Code's
    /// `"enabledPlugins": {"NAME@MARKETPLACE": true}`; a project's only
    /// once trusted).
    #[serde(alias = "enabledPlugins")]
    pub enabled_plugins: Option<std::collections::BTreeMap<String, bool>>,
}

/// `"statusLine": {"type": "command", "command": "~/bin/status", "padding": 0}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StatusLineFile {
    /// What it is; a command is the one kind.
    #[serde(rename = "type")]
    pub kind: StatusLineKind,
    /// The command: gets the session as JSON on standard input; its first
    /// line is shown.
    pub command: String,
    /// Claude Code's left padding; accepted so its files load, not used.
    #[serde(default)]
    pub padding: Option<u16>,
}

/// The kinds of status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusLineKind {
    /// A command's output.
    Command,
}

/// `"lsp": {"python": {"command": ["pyright-langserver", "--stdio"], "extensions": ["py"]}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LspFile {
    /// Program and arguments (speaking LSP on stdin and stdout).
    pub command: Vec<String>,
    /// File extensions it serves, without the dot [default: the language's
    /// usual ones, for a language North knows].
    #[serde(default)]
    pub extensions: Option<Vec<String>>,
    /// Seconds it may take to start, and to give a proposal's diagnostics
    /// [default: 20 to start, 8 for diagnostics].
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// `"web_search": {"searxng_url": "https://search.example/search"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct WebSearchFile {
    /// A SearXNG-compatible endpoint (asked with `q` and `format=json`).
    pub searxng_url: Option<String>,
    /// Use the model provider's own server-side search where its API has
    /// one (Anthropic, the OpenAI Responses API).
    pub provider: Option<bool>,
}

/// `"providers": {"NAME": {"base_url": …, "api": "chat", "api_key_env": …}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct ProviderFile {
    /// Its base URL, the version path included (`https://host/v1`).
    pub base_url: Option<String>,
    /// The API it speaks.
    pub api: Option<ProviderApi>,
    /// The environment variable holding its key (never the key itself).
    pub api_key_env: Option<String>,
    /// Headers sent with every request.
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// Models it offers (the first is the default).
    pub models: Option<Vec<String>>,
}

/// The API a custom provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderApi {
    /// OpenAI Chat Completions.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
}

/// `"sandbox": {"enabled": false, "deny_read": ["~/work/secrets"]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct SandboxFile {
    /// `false` runs commands unconfined (as `--sandbox off`).
    pub enabled: Option<bool>,
    /// More paths every sandboxed command may not read (`~/` is your home).
    pub deny_read: Option<Vec<String>>,
    /// Paths under your home that sandboxed commands may read besides the
    /// built-in allow-list of toolchains and caches (`~/` is your home).
    pub allow_read: Option<Vec<String>>,
    /// Let sandboxed commands create Unix sockets (off by default: a socket
    /// outside — tmux, docker, an agent — would run anything for them).
    pub unix_sockets: Option<bool>,
    /// What sandboxed commands reach through North's network proxy.
    pub network: Option<NetworkFile>,
}

/// `"network": {"allow": ["registry.npmjs.org", "*.pythonhosted.org"],
/// "deny": ["uploads.example.org"], "registries": true}`: the hosts
/// sandboxed commands may reach through North's proxy (as `--grant
/// net:<host>` does), the hosts they never reach whatever grants them, and
/// the package registries the user's tools are configured with. A project
/// may only add to `deny`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// Hosts commands may reach (`*.<domain>` for the names under a domain).
    pub allow: Option<Vec<HostPattern>>,
    /// Hosts commands may never reach: wins over every grant.
    pub deny: Option<Vec<HostPattern>>,
    /// Allow the registries npm, pip, cargo and go are configured with
    /// (read from their own configuration when a session starts).
    pub registries: Option<bool>,
}

/// A host name, an address, or `*.<domain>`: lower-cased, checked when the
/// file is read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct HostPattern(String);

impl HostPattern {
    /// The pattern as written in a grant (`net:<pattern>`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Checks a pattern: a name or address, or `*.` and a domain.
    pub fn parse(text: &str) -> Result<HostPattern, NotAHost> {
        let host = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let name = host.strip_prefix("*.").unwrap_or(&host);
        let ok = !name.is_empty()
            && !name.contains('*')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
        if ok {
            Ok(HostPattern(host))
        } else {
            Err(NotAHost(text.to_string()))
        }
    }
}

/// A `sandbox.network` entry that names no host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a host: write a name (`registry.npmjs.org`), an address, or `*.` and a domain (`*.pythonhosted.org`)"
)]
pub struct NotAHost(pub String);

impl<'de> Deserialize<'de> for HostPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        HostPattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The providers North speaks; every other name is an error that lists
/// them, never a silent fall-back to one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses or Chat Completions (and compatible servers).
    OpenAi,
    /// A script of model turns (`--script`), for tests and demos.
    Scripted,
    /// A provider North knows by name (OpenRouter, Gemini, Ollama, …).
    Preset(&'static north_llm::Preset),
    /// One of the user's own `providers`.
    Custom,
}

/// North's own providers, before the presets.
pub(super) const PROVIDERS: &[&str] = &["anthropic", "openai", "scripted"];

impl Provider {
    /// Reads a built-in or preset name (the user's own are known to
    /// [`super::Config::provider_kind`]).
    pub fn parse(name: &str) -> Result<Provider, UnknownProvider> {
        match name {
            "anthropic" => Ok(Provider::Anthropic),
            "openai" => Ok(Provider::OpenAi),
            "scripted" => Ok(Provider::Scripted),
            _ => north_llm::preset(name)
                .map(Provider::Preset)
                .ok_or_else(|| UnknownProvider {
                    name: name.to_string(),
                    custom: Vec::new(),
                }),
        }
    }
}

/// A provider name North does not know.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown provider `{name}`; known providers: {}; presets: {}{}",
    PROVIDERS.join(", "),
    north_llm::PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
    if custom.is_empty() { String::new() } else { format!("; yours: {}", custom.join(", ")) }
)]
pub struct UnknownProvider {
    /// The name asked for.
    pub name: String,
    /// The user's own providers.
    pub custom: Vec<String>,
}

/// Reads a config file; a missing file is empty.
pub fn read_file(path: &Path) -> Result<ConfigFile, ConfigError> {
    let text = match crate::read_settings(path) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(ConfigFile::default()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.into(),
                source,
            });
        }
    };
    parse_file(&text, path)
}

/// Fields whose names look like a key's but hold none.
const NOT_SECRETS: &[&str] = &["keybindings"];

/// Parses the text of a config file; `path` names it in errors. Empty text
/// is an empty file; a key field, an unknown field or a bad value is an
/// error naming the field.
pub fn parse_file(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
    if text.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    let invalid = |problem: FileProblem| ConfigError::Invalid {
        path: path.into(),
        problem,
    };
    let raw: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(FileProblem::Json(e)))?;
    if let Some(obj) = raw.as_object()
        && let Some(k) = obj
            .keys()
            .filter(|k| !NOT_SECRETS.contains(&k.as_str()))
            .find(|k| k.to_ascii_lowercase().contains("key") || k.contains("token"))
    {
        return Err(invalid(FileProblem::KeyField(k.clone())));
    }
    let file: ConfigFile = serde_path_to_error::deserialize(raw).map_err(|e| {
        invalid(FileProblem::Field {
            field: e.path().to_string(),
            error: e.into_inner(),
        })
    })?;
    if let Some(hooks) = &file.hooks
        && let Err(source) =
            crate::hooks::HookSet::parse(hooks, crate::hooks::HookOrigin::User(path.into()), true)
    {
        return Err(ConfigError::Hooks {
            path: path.into(),
            source,
        });
    }
    if file.max_steps == Some(0) {
        return Err(invalid(FileProblem::MaxStepsZero));
    }
    if let Some(v) = file.compact_at.filter(|v| !(10..=99).contains(v)) {
        return Err(invalid(FileProblem::CompactAt(v)));
    }
    Ok(file)
}
