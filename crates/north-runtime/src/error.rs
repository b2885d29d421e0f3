//! What can go wrong opening a project or a session, each case saying what
//! failed and what to do.

use std::path::PathBuf;

/// Why a project or a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The working directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// The project root cannot be resolved.
    #[error(transparent)]
    Root(#[from] north_tools::repo::RepoError),
    /// The project root is not a directory North can work in.
    #[error(transparent)]
    Sandbox(#[from] north_tools::sandbox::SandboxError),
    /// An edit batch a killed process left behind could not be settled.
    #[error("an edit batch in {root} was interrupted and could not be settled: {source}")]
    Interrupted {
        /// The project root.
        root: PathBuf,
        /// What settling ran into.
        #[source]
        source: north_tools::edit::ApplyError,
    },
    /// The trust store cannot be read or written.
    #[error(transparent)]
    Trust(#[from] north_agent::trust::TrustError),
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] north_config::ConfigError),
    /// The provider named is unknown.
    #[error(transparent)]
    UnknownProvider(#[from] north_config::UnknownProvider),
    /// The backend cannot be built (a script unreadable, a client refused).
    #[error(transparent)]
    Backend(#[from] north_llm::LlmError),
    /// A provider needs a key that is not set.
    #[error(
        "provider `{provider}` needs a key: set {var} (or name another variable with `api_key_env` in your config's `providers`)"
    )]
    MissingKey {
        /// The provider.
        provider: String,
        /// The variable to set.
        var: String,
    },
    /// One of the user's providers has no address.
    #[error("provider `{0}` in your config has no `base_url`")]
    NoBaseUrl(String),
    /// No model was named and the provider has no default.
    #[error(
        "provider `{0}` has no default model: name one with --model (`north models --provider {0}` lists them)"
    )]
    NoDefaultModel(String),
    /// The scripted provider was chosen without a script.
    #[error("the scripted provider needs --script FILE")]
    NoScript,
    /// A model switch named no model.
    #[error("name a model: /model NAME or /model PROVIDER:NAME")]
    NoModelNamed,
    /// A model switch named the scripted provider.
    #[error(
        "the scripted provider plays its script; name a real model with its provider, e.g. /model openai:{0}"
    )]
    ScriptedSwitch(String),
    /// The session store failed.
    #[error(transparent)]
    Store(#[from] north_agent::store::StoreError),
    /// `--continue` in a project without sessions.
    #[error("no session to continue in this project")]
    NoSession,
    /// `--fork` without a session to fork.
    #[error(
        "--fork continues a session as a new one: name it with --resume ID, or use --continue for the latest"
    )]
    ForkWithoutSession,
    /// The agent cannot be built.
    #[error(transparent)]
    Agent(#[from] north_agent::AgentError),
    /// The starting permission mode is not available.
    #[error("mode {mode}: {source}")]
    Mode {
        /// The mode asked for.
        mode: north_protocol::PermissionMode,
        /// Why it is unavailable.
        #[source]
        source: north_agent::ModeError,
    },
    /// This platform has no OS sandbox.
    #[error("the OS sandbox is available on Linux only")]
    NoOsSandbox,
    /// A worktree could not be made, found or removed.
    #[error(transparent)]
    Worktree(#[from] north_worktree::WorktreeError),
    /// A `WorktreeCreate` (or `WorktreeRemove`) hook said no.
    #[error("a worktree hook said no: {0} (a new worktree was taken back)")]
    WorktreeRefused(String),
    /// No data directory to keep North's record of worktrees in.
    #[error("no data directory to record worktrees in (set HOME or XDG_DATA_HOME)")]
    NoDataDir,
    /// The running binary cannot be found to start the sandbox launcher.
    #[error("cannot find the north binary to sandbox commands: {0}")]
    NoLauncher(#[source] std::io::Error),
}
