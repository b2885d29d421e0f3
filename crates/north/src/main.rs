//! The `north` binary: a thin CLI over the North crates.
//!
//! `--version` and `--help` are answered by clap before anything else runs:
//! no runtime, no thread pool, no config read, no model call.
//!
//! Sessions are opened and closed through `north-runtime` (project, trust,
//! configuration, provider, sandbox, hooks, MCP servers); the modules here
//! turn flags into its options and render what it returns.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `worktree_enter`: `-w`, a session in a worktree of its own, and `--resume` back into one
//! - `args`: options several commands share (model and provider selection, approval flags,…
//! - `guard`: keeps North's secrets inside North's process
//! - `typeahead`: keys typed while North starts wait for the composer, unechoed
//! - `logging`: logging (uses `args`, `guard`)
//! - `acp_cmd`: `north acp` (uses `args`, `logging`)
//! - `models_cmd`: `north models` (uses `args`)
//! - `interactive`: `north` with no subcommand (uses `args`, `logging`, `models_cmd`, `typeahead`, `worktree_enter`)
//! - `mcp_use`: `north mcp login`, `logout` and `call`
//! - `mcp_import`: `north mcp import` from Claude Code, Claude Desktop and Codex
//! - `mcp_cmd`: `north mcp` (uses `mcp_import`, `mcp_use`)
//! - `memory_cmd`: `north memory`
//! - `output`: headless output shared by `north exec` and `north mesh`
//! - `stop`: Ctrl+C, SIGTERM and SIGHUP end a headless run cleanly
//! - `serve_cmd`: `north serve` (uses `acp_cmd`, `logging`, `stop`)
//! - `attach`: `north exec --attach`, a client of `north serve` (uses `args`, `output`, `serve_cmd`, `stop`)
//! - `attach_tui`: `north --attach`, the TUI on a served session (uses `acp_cmd`, `attach`, `interactive`, `logging`)
//! - `mesh_cmd`: `north mesh "goal"` (uses `args`, `logging`, `output`, `stop`)
//! - `sandbox_cmd`: `north sandbox -- CMD`
//! - `tool_cmd`: `north tool NAME --args JSON [--path DIR] [--apply]` (uses `args`)
//! - `trust_cmd`: `north trust [PATH]`
//! - `undo_cmd`: `north undo`
//! - `worktree_cmd`: `north worktree list|merge|remove`
//! - `plugin_cmd`: `north plugin install|update|remove|list|show|enable|disable|marketplace` (uses `mcp_cmd`, `mcp_import`)
//! - `cli`: the command line (uses `acp_cmd`, `args`, `interactive`, `mcp_cmd`, `memory_cmd`, `mesh_cmd`, `plugin_cmd`, `sandbox_cmd`, `serve_cmd`, `tool_cmd`, `trust_cmd`, `undo_cmd`, `worktree_cmd`)
//! - `config_cmd`: `north config` (uses `args`)
//! - `exec`: `north exec` (uses `args`, `attach`, `interactive`, `logging`, `output`, `stop`, `worktree_enter`)
//! - `sessions_import`: conversations of Claude Code, Codex and Gemini CLI as North sessions
//! - `sessions`: `north sessions list|show|export|rename|import` (uses `args`, `sessions_import`)

mod acp_cmd;
mod args;
mod attach;
mod attach_tui;
mod cli;
mod config_cmd;
mod exec;
mod guard;
mod interactive;
mod logging;
mod mcp_cmd;
mod mcp_import;
mod mcp_use;
mod memory_cmd;
mod mesh_cmd;
mod models_cmd;
mod output;
mod plugin_cmd;
mod sandbox_cmd;
mod serve_cmd;
mod sessions;
mod sessions_import;
mod stop;
mod tool_cmd;
mod trust_cmd;
mod typeahead;
mod undo_cmd;
mod worktree_cmd;
mod worktree_enter;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    let code = run();
    // The network proxies' sockets go with North.
    north_runtime::egress::stop_all();
    code
}

/// `north snapshot-watcher`: no terminal and no standard streams, so it
/// reports to North's log.
fn snapshot_watcher(args: &args::SnapshotWatcherArgs) -> ExitCode {
    let redactor = north_agent::redact::Redactor::from_env();
    let _ = logging::init(args::LogLevel::Info, &redactor);
    tracing::info!(root = %args.root.display(), "snapshot watcher starting");
    match north_tools::snapshot::watcher::serve(&args.store, &args.root, &args.runtime) {
        Ok(()) => {
            tracing::info!(root = %args.root.display(), "snapshot watcher leaving");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::warn!(root = %args.root.display(), error = %e, "snapshot watcher failed");
            ExitCode::FAILURE
        }
    }
}

fn run() -> ExitCode {
    // Scripts and editors ask this often: answered before anything else is
    // set up (the argument parser alone builds every subcommand).
    if let [_, flag] = &std::env::args_os().collect::<Vec<_>>()[..]
        && (flag == "--version" || flag == "-V")
    {
        println!("north {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    // First, while single-threaded: keys leave the environment block child
    // processes could read through /proc.
    guard::protect_process();
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        Some(Command::Sandbox(_) | Command::Completions(_) | Command::SnapshotWatcher(_))
    ) {
        // The state key; a big tree's whole walk starts a watcher that the
        // next process asks instead of walking again.
        if let Some(warning) = north_runtime::process::prepare(std::env::current_exe().ok()) {
            eprintln!("north: warning: {warning}");
        }
    }
    let result = match cli.command {
        Some(Command::Exec(args)) => return exec::main(args),
        Some(Command::Tool(args)) => return tool_cmd::main(args),
        Some(Command::Sessions(args)) => sessions::main(args),
        Some(Command::Config(args)) => config_cmd::main(args),
        Some(Command::Mesh(args)) => return mesh_cmd::main(args),
        Some(Command::Trust(args)) => trust_cmd::main(args),
        Some(Command::Memory(args)) => memory_cmd::main(args),
        Some(Command::Models(args)) => models_cmd::main(args),
        Some(Command::Sandbox(args)) => sandbox_cmd::main(args),
        Some(Command::Undo(args)) => undo_cmd::main(args),
        Some(Command::Worktree(args)) => worktree_cmd::main(args),
        Some(Command::Plugin(args)) => plugin_cmd::main(args),
        Some(Command::Mcp(args)) => mcp_cmd::main(args),
        Some(Command::Acp(args)) => return acp_cmd::main(args),
        Some(Command::Serve(args)) => return serve_cmd::main(args),
        Some(Command::SnapshotWatcher(args)) => return snapshot_watcher(&args),
        Some(Command::Completions(args)) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(args.shell, &mut cmd, "north", &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        None => {
            return match cli.interactive.attach.clone() {
                Some(address) => attach_tui::main(&cli.interactive, &address),
                None => interactive::main(cli.interactive),
            };
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("north: error: {}", output::error_line(&e));
            ExitCode::from(2)
        }
    }
}
