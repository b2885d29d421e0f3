//! North's session runtime: what every front end (the TUI, `north exec`,
//! `north acp`, `north mesh`, `north mcp serve`, `north tool`, `north undo`,
//! and the server mode) opens and closes sessions through.
//!
//! - [`Project::open`] resolves once what a project is: root, trust,
//!   effective configuration, model backend, sandbox policy, grants, agents
//!   and skills ([`ProjectOptions`] is everything a front end knows first).
//! - [`Sessions::start`] starts the project's MCP servers;
//!   [`Sessions::open`] gives a [`LiveSession`] (new, resumed or forked)
//!   whose agent has the tools, hooks, grants, model factory and permission
//!   modes, all from one [`SessionSpec`] — no setter order to get wrong.
//!   [`LiveSession::close`] runs the `SessionEnd` hooks and stops background
//!   jobs; [`Sessions::shutdown`] stops the MCP servers.
//! - [`AgentParts`] is the one constructor of an agent outside the agent
//!   crate (the mesh's executor and `north undo` use it too).
//! - `sandboxing`, `hooking`, `provider`: the spawner per kind of child, the
//!   hooks bound to a project, the model backend and its limits.
//!
//! Module map, lowest first (each uses only those above it): `error`,
//! `windows`, `worktree_record` (North's record of its worktrees), `endpoint`, `provider` (uses `endpoint`, `windows`),
//! `hosts` (hosts allowed "always for this project", in the user's
//! state), `egress` (the network proxy per set of rules; uses `hosts`),
//! `registries` (the
//! hosts the user's package managers fetch from), `sandboxing` (uses
//! `egress`, `hosts`, `registries`, `worktree_record`), `hooking` (uses `sandboxing`),
//! `permissions` (Claude Code's permission rules for the command policy),
//! `language_servers` (the project's language servers; uses `sandboxing`),
//! `project` (uses `permissions`, `provider`, `sandboxing`, `hooking`), `status_line` (the command a user programs the
//! status line with; uses `project`, `sandboxing`), `worktrees` (the
//! worktrees of `-w` and isolated sub-agents; uses `project`), `mcp` (uses
//! `project`, `sandboxing`), `session` (uses `mcp`, `project`,
//! `status_line`, `worktrees`), `commands` (the custom slash commands; uses
//! `project`).
//!
//! `logging` (the log file and stderr warnings every front end starts
//! with `logging::init`) and `process` (the state key and the snapshot
//! watcher, set up once per process with `process::prepare`) use nothing of
//! the above.
//!
//! It must not render anything, read the terminal or print (beyond the
//! log a front end starts): what the user should hear comes back as
//! notices for the front end to show.

mod commands;
pub mod egress;
mod endpoint;
mod error;
pub mod hooking;
mod hosts;
mod language_servers;
pub mod logging;
mod mcp;
pub mod permissions;
pub mod process;
mod project;
pub mod provider;
mod registries;
pub mod sandboxing;
mod session;
pub mod status_line;
mod windows;
mod worktree_record;
pub mod worktrees;

pub use commands::custom_commands;
pub use endpoint::Endpoint;
pub use error::RuntimeError;
pub use mcp::{McpSetup, project_hub, trust_state, trusted, user_mcp_file};
pub use project::{
    Project, ProjectOptions, SessionChoice, TrustPrompt, decide_trust, model_switch, plan_tools,
    settle_interrupted_edits,
};
pub use provider::ModelChoice;
pub use sandboxing::SandboxChoice;
pub use session::{AgentParts, LiveSession, SessionSpec, Sessions};
pub use status_line::StatusLine;
