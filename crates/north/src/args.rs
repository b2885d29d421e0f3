//! Options several commands share (model and provider selection, approval
//! flags, permission modes, log level) and the arguments of the commands
//! that have no module of their own. A leaf of the binary's module map.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `north completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `north snapshot-watcher` (started by North, not by hand).
#[derive(Debug, clap::Args)]
pub struct SnapshotWatcherArgs {
    /// The tree to watch.
    #[arg(long)]
    pub root: std::path::PathBuf,
    /// Its snapshot store.
    #[arg(long)]
    pub store: std::path::PathBuf,
    /// North's runtime directory, where the socket goes.
    #[arg(long)]
    pub runtime: std::path::PathBuf,
}

/// Permission modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Edits and commands need approval (flags and the allowlist apply).
    Ask,
    /// Edits are applied without review; commands still need approval.
    AcceptEdits,
    /// Read-only: the model gets no edit or command tools.
    Plan,
    /// Edits applied; every command runs inside the OS sandbox without asking.
    Auto,
}

impl From<Mode> for north_protocol::PermissionMode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Ask => north_protocol::PermissionMode::Ask,
            Mode::AcceptEdits => north_protocol::PermissionMode::AcceptEdits,
            Mode::Plan => north_protocol::PermissionMode::Plan,
            Mode::Auto => north_protocol::PermissionMode::Auto,
        }
    }
}

/// How tool calls travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolName {
    /// The provider's native tool calling.
    Native,
    /// `<<<TOOL_CALLS_JSON>>>` blocks in text, for models without native tools.
    Text,
}

/// Which OpenAI API to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OpenAiApiName {
    /// The Responses API (/v1/responses); the default for api.openai.com.
    Responses,
    /// Chat Completions (/v1/chat/completions); the default for other servers.
    Chat,
}

impl From<OpenAiApiName> for north_llm::OpenAiApi {
    fn from(name: OpenAiApiName) -> Self {
        match name {
            OpenAiApiName::Responses => north_llm::OpenAiApi::Responses,
            OpenAiApiName::Chat => north_llm::OpenAiApi::Chat,
        }
    }
}

/// How much the model may reason before answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThinkingLevel {
    /// No extended thinking (Anthropic); the model's default (OpenAI).
    Off,
    /// A little.
    Low,
    /// A moderate amount.
    Medium,
    /// As much as useful.
    High,
}

impl From<ThinkingLevel> for north_protocol::ReasoningEffort {
    fn from(level: ThinkingLevel) -> Self {
        use north_protocol::ReasoningEffort as R;
        match level {
            ThinkingLevel::Off => R::Off,
            ThinkingLevel::Low => R::Low,
            ThinkingLevel::Medium => R::Medium,
            ThinkingLevel::High => R::High,
        }
    }
}

/// Log verbosity for the log file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Requests, tool calls, approvals, errors.
    Info,
    /// Also tool metadata and retries (never file contents or keys).
    Debug,
}

/// Options shared by commands that talk to a model.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Model provider: anthropic, openai, scripted; a preset (openrouter, gemini, groq, deepseek,
    /// mistral, xai, azure, ollama, lmstudio); or one of your config's `providers` [default: from
    /// config, else anthropic; scripted with --script].
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// Model name or alias (sonnet, opus, haiku, sonnet-4.5, gpt, ...) [default: claude-sonnet-4-5 for anthropic, gpt-5.2 for openai].
    #[arg(long)]
    pub model: Option<String>,
    /// OpenAI API [default: responses for api.openai.com, chat for any other server].
    #[arg(long, value_enum, value_name = "API")]
    pub openai_api: Option<OpenAiApiName>,
    /// Reasoning before answering: Anthropic extended thinking, OpenAI reasoning effort [default: the provider's].
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub thinking: Option<ThinkingLevel>,
    /// Script of model turns for the scripted provider (JSON; see README).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Append every request the scripted provider receives to FILE (JSONL).
    #[arg(long, value_name = "FILE", requires = "script")]
    pub record_requests: Option<PathBuf>,
    /// Log file verbosity (the log is $XDG_STATE_HOME/north/north.log).
    #[arg(long, value_enum, default_value = "info")]
    pub log_level: LogLevel,
    /// Trust this project: apply its own security settings (.north/project.json
    /// approvals, .north/allowlist.json, policy.json, .mcp.json) and remember
    /// the decision, as `north trust` does.
    #[arg(long)]
    pub trust: bool,
    /// Run every command inside the OS sandbox (on, the default) or not (off).
    /// Only this flag or your own config (`"sandbox": {"enabled": false}`) turns it off: no project file can.
    #[arg(long, value_enum, value_name = "on|off")]
    pub sandbox: Option<SandboxSwitch>,
}

/// `--sandbox on|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum SandboxSwitch {
    /// Commands run inside the OS sandbox; a stopped one may be let out once.
    #[default]
    On,
    /// Commands run unconfined (the static command check still applies).
    Off,
}

/// Approval flags of the headless commands. Without them edits are
/// rejected and commands outside `.north/allowlist.json` denied.
#[derive(Debug, Clone, Args)]
pub struct ApprovalArgs {
    /// Apply edit proposals without asking (they are still shown).
    #[arg(long)]
    pub approve_edits: bool,
    /// Run shell commands that are not in .north/allowlist.json.
    #[arg(long)]
    pub allow_shell: bool,
    /// Both --approve-edits and --allow-shell; an MCP server's form is
    /// answered with its defaults when they cover every required field.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

impl ApprovalArgs {
    /// The run flags these approvals imply.
    pub fn run_flags(&self) -> RunFlags {
        RunFlags {
            approve_edits: self.approve_edits || self.yes,
            allow_shell: self.allow_shell || self.yes,
            ..Default::default()
        }
    }
}

/// `north exec` options.
#[derive(Debug, Args)]
#[command(
    after_help = "EXIT STATUS:\n  0    the turn completed\n  1    the model or provider failed (after retries); the session is kept\n  2    invalid use or configuration (missing key, bad flags, bad config)\n  3    the turn completed, but an edit, command or capability was denied\n  4    the step limit was reached\n  130  interrupted (Ctrl+C); the session is kept"
)]
pub struct ExecArgs {
    /// Model and project options.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print protocol events as JSON, one object per line, instead of text.
    #[arg(long)]
    pub json: bool,
    /// Approval flags.
    #[command(flatten)]
    pub approvals: ApprovalArgs,
    /// Worktree flags.
    #[command(flatten)]
    pub worktree: crate::worktree_enter::WorktreeArgs,
    /// Grant a capability (`net`, `net:<domain>`); repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<north_protocol::Capability>,
    /// Attach an image (PNG, JPEG, GIF, WebP) or a PDF to the prompt;
    /// repeatable.
    /// One over the providers' limits is scaled down.
    #[arg(long = "image", value_name = "FILE")]
    pub images: Vec<std::path::PathBuf>,
    /// Permission mode [default: ask]: ask (today's approvals), accept-edits (edits applied,
    /// commands still need approval), plan (read-only: no edit or command tools), auto (edits
    /// applied, every command run inside the OS sandbox without asking).
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Resume the session with this id, or the one you named this (`/rename`).
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Run the turn in a session of a running `north serve` (its project
    /// and MCP servers already warm): `unix:PATH`, `ws://127.0.0.1:PORT`,
    /// or nothing for the default socket (`--attach=ADDR` names one). With
    /// --resume, that open session.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "default",
          conflicts_with_all = ["continue_latest", "fork", "images"])]
    pub attach: Option<String>,
    /// The server's token file [default: the one North keeps for that socket in its runtime dir].
    #[arg(long, value_name = "FILE", requires = "attach")]
    pub token_file: Option<std::path::PathBuf>,
    /// Resume the most recent session.
    #[arg(long = "continue", short = 'c')]
    pub continue_latest: bool,
    /// With --resume or --continue: continue the session as a new one,
    /// leaving the original untouched.
    #[arg(long)]
    pub fork: bool,
    /// Model steps per turn before stopping [default: 25].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Tool-call protocol [default: native].
    #[arg(long, value_enum)]
    pub tool_protocol: Option<ProtocolName>,
    /// Maximum output tokens per model request [default: 8192, at most a quarter of the model's context window].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// The prompt; `-` or nothing reads it from standard input. With --resume or --continue and no prompt, the session's unfinished turn goes on.
    #[arg(value_name = "PROMPT", num_args = 0..)]
    pub prompt: Vec<String>,
}

/// `north sessions` options.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Project root [default: the git root above the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub path: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: SessionsCommand,
}

/// `north sessions` subcommands.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first: id, last update, size, name and first prompt.
    List {
        /// One JSON object per session instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show a session as a readable transcript (or its stored form with --json).
    Show {
        /// Session id or name.
        id: String,
        /// The session as stored (state and full history) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a session's whole transcript as Markdown: every message, tool
    /// call and result, including what was condensed for the model.
    Export {
        /// Session id or name.
        id: String,
        /// Write to FILE instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Bring conversations from Claude Code (session JSONL), Codex
    /// (rollout JSONL) or Gemini CLI (saved chats) in as North sessions you
    /// resume with `--resume`: files, or directories searched for them.
    Import {
        /// Transcript files or directories (`~/.claude/projects/PROJECT`,
        /// `~/.codex/sessions`, `~/.gemini/tmp/HASH`).
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
    },
    /// Name a session, so `north --resume NAME` (and `/resume NAME`) finds
    /// it; an empty name removes the name.
    Rename {
        /// Session id (or its current name).
        id: String,
        /// The new name: letters, digits, spaces, `-`, `_`, `.` (at most 64).
        name: String,
    },
}

/// `north config` options.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Project root [default: the git root above the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// Flags that override configuration.
#[derive(Debug, Clone, Default)]
pub struct RunFlags {
    /// Apply edits without asking.
    pub approve_edits: bool,
    /// Run commands without asking.
    pub allow_shell: bool,
    /// Step limit.
    pub max_steps: Option<u32>,
    /// Tool protocol.
    pub tool_protocol: Option<ProtocolName>,
}

impl ModelArgs {
    /// The model these flags ask for.
    pub fn choice(&self) -> north_runtime::ModelChoice {
        north_runtime::ModelChoice {
            provider: self.provider.clone(),
            model: self.model.clone(),
            openai_api: self.openai_api.map(Into::into),
            thinking: self.thinking.map(Into::into),
            script: self.script.clone(),
            record_requests: self.record_requests.clone(),
        }
    }

    /// How to open the project these flags, `flags` and `grants` describe.
    pub fn project_options(
        &self,
        flags: &RunFlags,
        grants: &[north_protocol::Capability],
    ) -> north_runtime::ProjectOptions {
        north_runtime::ProjectOptions {
            path: self.path.clone(),
            model: self.choice(),
            trust: self.trust,
            sandbox: self.sandbox.map(SandboxSwitch::enabled),
            overrides: north_config::Overrides {
                approve_edits: flags.approve_edits.then_some(true),
                allow_shell: flags.allow_shell.then_some(true),
                max_steps: flags.max_steps,
                tool_protocol: flags.tool_protocol.map(|p| match p {
                    ProtocolName::Native => north_config::ToolProtocol::Native,
                    ProtocolName::Text => north_config::ToolProtocol::Text,
                }),
                ..Default::default()
            },
            grants: grants.to_vec(),
        }
    }
}

impl SandboxSwitch {
    /// Whether commands run inside the sandbox.
    pub fn enabled(self) -> bool {
        self == SandboxSwitch::On
    }
}

/// Prints what opening a project or its sessions had to say.
pub fn print_notices(notices: &[String]) {
    for notice in notices {
        eprintln!("north: {notice}");
    }
}
