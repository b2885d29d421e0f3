//! Configuration: built-in defaults < global `config.json` (XDG config dir)
//! < project `.north/project.json` < environment < flags. Every effective
//! value remembers where it came from, for `north config`.
//!
//! Config files never hold API keys: keys come from the environment only,
//! and a file naming a key field is rejected.

use std::fmt;
use std::path::{Path, PathBuf};

use north_llm::OpenAiApi;
use north_protocol::ReasoningEffort;
use serde::{Deserialize, Serialize};
use thiserror::Error;

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
    /// OpenAI API: `responses` or `chat`.
    pub openai_api: Option<OpenAiApi>,
    /// The model's context window in tokens, when the server cannot say.
    pub context_window: Option<u64>,
    /// Reasoning (thinking): `off`, `low`, `medium` or `high`.
    pub thinking: Option<ReasoningEffort>,
}

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
    /// OpenAI API (None: Responses for OpenAI's endpoint, Chat elsewhere).
    pub openai_api: Sourced<Option<OpenAiApi>>,
    /// Context window (None: discovered from the server, else the catalogue).
    pub context_window: Sourced<Option<u64>>,
    /// Reasoning effort (None: the provider's default).
    pub thinking: Sourced<Option<ReasoningEffort>>,
    /// Project settings that were not applied, and why.
    pub ignored: Vec<IgnoredSetting>,
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
            openai_api: Sourced::default(None),
            context_window: Sourced::default(None),
            thinking: Sourced::default(None),
            ignored: Vec::new(),
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
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the field.
        message: String,
    },
    /// An environment variable has a bad value.
    #[error("environment variable {var}: {message}")]
    Env {
        /// The variable.
        var: &'static str,
        /// What is wrong.
        message: String,
    },
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

const PROVIDERS: &[&str] = &["anthropic", "openai", "scripted"];

/// The global config path: `$XDG_CONFIG_HOME/north/config.json` (default `~/.config`).
pub fn global_config_path() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .map(|x| x.config_dir().join("north").join("config.json"))
}

/// The global state dir: `$XDG_STATE_HOME/north` (default `~/.local/state`), for the log.
pub fn state_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .and_then(|x| x.state_dir())
        .map(|d| d.join("north"))
}

/// The global data dir: `$XDG_DATA_HOME/north` (default `~/.local/share`), for global memory.
pub fn data_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .map(|x| x.data_dir().join("north"))
}

/// Reads a config file; a missing file is empty.
pub fn read_file(path: &Path) -> Result<ConfigFile, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
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

/// Parses the text of a config file; `path` names it in errors. Empty text
/// is an empty file; a key field, an unknown field or a bad value is an
/// error naming the field.
pub fn parse_file(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
    if text.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    let raw: serde_json::Value = serde_json::from_str(text).map_err(|e| ConfigError::Invalid {
        path: path.into(),
        message: format!("not valid JSON: {e}"),
    })?;
    if let Some(obj) = raw.as_object()
        && let Some(k) = obj
            .keys()
            .find(|k| k.to_ascii_lowercase().contains("key") || k.contains("token"))
    {
        return Err(ConfigError::Invalid {
            path: path.into(),
            message: format!(
                "field `{k}`: API keys are read from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY), never from config files"
            ),
        });
    }
    let file: ConfigFile = serde_path_to_error::deserialize(raw).map_err(|e| {
        let field = e.path().to_string();
        let message = if field == "." {
            e.inner().to_string()
        } else {
            format!("field `{field}`: {}", e.inner())
        };
        ConfigError::Invalid {
            path: path.into(),
            message,
        }
    })?;
    if let Some(p) = &file.provider
        && !PROVIDERS.contains(&p.as_str())
    {
        return Err(ConfigError::Invalid {
            path: path.into(),
            message: format!(
                "field `provider`: `{p}` is not one of {}",
                PROVIDERS.join(", ")
            ),
        });
    }
    if file.max_steps == Some(0) {
        return Err(ConfigError::Invalid {
            path: path.into(),
            message: "field `max_steps`: must be at least 1".into(),
        });
    }
    Ok(file)
}

impl Config {
    /// Applies a config file. A project file (`project = Some(trusted)`)
    /// never sets an endpoint, and sets a widening security key only when
    /// the project is trusted; what it may not set is recorded in `ignored`.
    fn apply_file(&mut self, mut f: ConfigFile, src: impl Fn() -> Source, project: Option<bool>) {
        if let Some(trusted) = project {
            if f.anthropic_base_url.take().is_some() {
                self.ignore("anthropic_base_url", IgnoredBecause::EndpointFromProject);
            }
            if f.openai_base_url.take().is_some() {
                self.ignore("openai_base_url", IgnoredBecause::EndpointFromProject);
            }
            // `false` narrows and always applies; `true` widens.
            if !trusted && f.approve_edits == Some(true) {
                f.approve_edits = None;
                self.ignore("approve_edits", IgnoredBecause::Untrusted);
            }
            if !trusted && f.allow_shell == Some(true) {
                f.allow_shell = None;
                self.ignore("allow_shell", IgnoredBecause::Untrusted);
            }
        }
        if let Some(v) = f.provider {
            self.provider.set(v, src());
        }
        if let Some(v) = f.model {
            self.model.set(Some(v), src());
        }
        if let Some(v) = f.anthropic_base_url {
            self.anthropic_base_url.set(Some(v), src());
        }
        if let Some(v) = f.openai_base_url {
            self.openai_base_url.set(Some(v), src());
        }
        if let Some(v) = f.max_steps {
            self.max_steps.set(v, src());
        }
        if let Some(v) = f.approve_edits {
            self.approve_edits.set(v, src());
        }
        if let Some(v) = f.allow_shell {
            self.allow_shell.set(v, src());
        }
        if let Some(v) = f.tool_protocol {
            self.tool_protocol.set(v, src());
        }
        if let Some(v) = f.context_budget {
            self.context_budget.set(Some(v), src());
        }
        if let Some(v) = f.openai_api {
            self.openai_api.set(Some(v), src());
        }
        if let Some(v) = f.context_window {
            self.context_window.set(Some(v), src());
        }
        if let Some(v) = f.thinking {
            self.thinking.set(Some(v), src());
        }
    }

    fn ignore(&mut self, key: &'static str, because: IgnoredBecause) {
        self.ignored.push(IgnoredSetting { key, because });
    }

    /// Loads the effective configuration for the project at `root`.
    /// `global` is the global config path (None: skip), `env` looks up
    /// variables, `project_trusted` says whether the project's widening
    /// settings apply (see [`crate::trust`]).
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
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = env("NORTH_PROVIDER") {
            if !PROVIDERS.contains(&v.as_str()) {
                return Err(ConfigError::Env {
                    var: "NORTH_PROVIDER",
                    message: format!("`{v}` is not one of {}", PROVIDERS.join(", ")),
                });
            }
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
                    message: format!("`{v}` is not a whole number of at least 1"),
                })?;
            c.max_steps.set(n, Source::Env("NORTH_MAX_STEPS"));
        }
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
        Ok(c)
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
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn precedence_is_flags_env_project_global_default() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("global.json");
        write(
            &global,
            r#"{"provider":"openai","model":"g-model","max_steps":5,"allow_shell":true}"#,
        );
        write(
            &dir.path().join(".north/project.json"),
            r#"{"model":"p-model","max_steps":7}"#,
        );
        let env = |k: &str| (k == "NORTH_MAX_STEPS").then(|| "9".to_string());
        let flags = Overrides {
            model: Some("f-model".into()),
            ..Default::default()
        };
        let c = Config::load(dir.path(), Some(&global), env, &flags, true).unwrap();
        assert_eq!(c.provider.value, "openai");
        assert_eq!(c.provider.source, Source::Global(global.clone()));
        assert_eq!(c.model.value.as_deref(), Some("f-model"));
        assert_eq!(c.max_steps.value, 9);
        assert_eq!(c.max_steps.source, Source::Env("NORTH_MAX_STEPS"));
        assert!(c.allow_shell.value);
        assert_eq!(c.approve_edits.source, Source::Default);
    }

    #[test]
    fn malformed_files_name_the_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".north/project.json");
        for (text, needle) in [
            (r#"{"max_steps":"many"}"#, "max_steps"),
            (r#"{"modle":"x"}"#, "unknown field `modle`"),
            (r#"{"provider":"gemini"}"#, "field `provider`"),
            (r#"{"openai_api":"completions"}"#, "field `openai_api`"),
            (r#"{"thinking":"max"}"#, "field `thinking`"),
            (
                r#"{"anthropic_api_key":"sk-x"}"#,
                "field `anthropic_api_key`",
            ),
            ("{not json", "not valid JSON"),
        ] {
            write(&p, text);
            let err = Config::load(dir.path(), None, |_| None, &Overrides::default(), true)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("project.json") && err.contains(needle),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn model_settings_load_from_files_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join(".north/project.json"),
            r#"{"openai_api":"chat","context_window":8192,"thinking":"low"}"#,
        );
        let flags = Overrides {
            thinking: Some(ReasoningEffort::High),
            ..Default::default()
        };
        let c = Config::load(dir.path(), None, |_| None, &flags, true).unwrap();
        assert_eq!(c.openai_api.value, Some(OpenAiApi::Chat));
        assert_eq!(c.context_window.value, Some(8192));
        assert_eq!(c.thinking.value, Some(ReasoningEffort::High));
        assert_eq!(c.thinking.source, Source::Flag("--thinking"));
        let text = c.describe(|_| None);
        assert!(
            text.contains("openai_api = chat") && text.contains("context_window = 8192"),
            "{text}"
        );
    }

    #[test]
    fn describe_never_shows_key_values() {
        let c = Config::default();
        let text = c.describe(|k| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant-SECRET".to_string()));
        assert!(text.contains("anthropic_api_key = set (env ANTHROPIC_API_KEY)"));
        assert!(text.contains("openai_api_key = not set"));
        assert!(!text.contains("SECRET"));
    }

    #[test]
    fn an_untrusted_project_cannot_widen_or_choose_endpoints() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("global.json");
        write(&global, r#"{"allow_shell": true}"#);
        write(
            &dir.path().join(".north/project.json"),
            r#"{"approve_edits": true, "allow_shell": false, "anthropic_base_url": "http://127.0.0.1:1"}"#,
        );
        for trusted in [false, true] {
            let c = Config::load(
                dir.path(),
                Some(&global),
                |_| None,
                &Overrides::default(),
                trusted,
            )
            .unwrap();
            assert_eq!(c.approve_edits.value, trusted, "widening needs trust");
            assert!(!c.allow_shell.value, "narrowing always applies");
            assert_eq!(c.anthropic_base_url.value, None, "never from a project");
            assert!(c.ignored.contains(&IgnoredSetting {
                key: "anthropic_base_url",
                because: IgnoredBecause::EndpointFromProject
            }));
            assert_eq!(c.ignored.iter().any(|i| i.key == "approve_edits"), !trusted);
        }
    }
}
