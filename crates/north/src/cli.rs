//! The command line: `north` and its subcommands. Each subcommand's own
//! arguments live with it; the options several share are in [`crate::args`].
//! This is the top of the binary's module map: it names every command,
//! none of them names it.

use clap::{Parser, Subcommand};

use crate::args::{CompletionsArgs, ConfigArgs, ExecArgs, SessionsArgs, SnapshotWatcherArgs};

/// North: a terminal coding assistant.
#[derive(Debug, Parser)]
#[command(name = "north", version, about, long_about = None, propagate_version = true)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do (nothing: the interactive assistant).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the interactive assistant.
    #[command(flatten)]
    pub interactive: crate::interactive::InteractiveArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the assistant headless on one prompt; stream the answer to stdout.
    Exec(ExecArgs),
    /// Run one tool under the project's policy and print its JSON result.
    Tool(crate::tool_cmd::ToolArgs),
    /// List or inspect saved sessions.
    Sessions(SessionsArgs),
    /// Print the effective configuration and where each value came from.
    Config(ConfigArgs),
    /// Plan a goal, execute the plan with tools, and remember the result.
    Mesh(crate::mesh_cmd::MeshArgs),
    /// Trust a project's own security settings (or --show, --revoke, --list).
    Trust(crate::trust_cmd::TrustArgs),
    /// Run a command under the OS sandbox (writes only in the project and temp, no network unless granted).
    Sandbox(crate::sandbox_cmd::SandboxArgs),
    /// Serve an editor over the Agent Client Protocol on stdin/stdout (Zed, JetBrains, Neovim).
    Acp(crate::acp_cmd::AcpArgs),
    /// Serve sessions to many clients (editors, scripts, `--attach`) on a unix socket or loopback WebSocket.
    Serve(crate::serve_cmd::ServeArgs),
    /// Manage MCP servers (list, get, add, remove), or serve North's tools over MCP (serve).
    Mcp(crate::mcp_cmd::McpArgs),
    /// Undo what a session's turns changed: files (shell commands' changes too), conversation, or both.
    Undo(crate::undo_cmd::UndoArgs),
    /// List, add or remove memories (the project's, or --global).
    Memory(crate::memory_cmd::MemoryArgs),
    /// North's git worktrees: list them, review one's changes into the main tree, remove one.
    Worktree(crate::worktree_cmd::WorktreeCmdArgs),
    /// Claude Code plugins and marketplaces: install (shown and asked first), update, list, remove, enable.
    Plugin(crate::plugin_cmd::PluginArgs),
    /// List the models a provider offers (its /models list, the catalogue, your config's).
    Models(crate::models_cmd::ModelsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Keep a big tree's watches for undo snapshots between North processes (North starts it).
    #[command(hide = true, name = "snapshot-watcher")]
    SnapshotWatcher(SnapshotWatcherArgs),
}
