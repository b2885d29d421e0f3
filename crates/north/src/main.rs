//! The `north` binary: a thin CLI over the North crates.
//!
//! `--version` and `--help` are answered by clap before anything else runs:
//! no runtime, no thread pool, no config read, no model call.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `args`: options several commands share (model and provider selection, approval flags,…
//! - `guard`: keeps North's secrets inside North's process
//! - `logging`: logging (uses `args`, `guard`)
//! - `provider`: choosing and building a model backend from the effective configuration, and the… (uses `args`)
//! - `sandboxing`: where North's children run: the user's sandbox choice, the project's sandbox settings and a spawner per kind of child (uses `args`)
//! - `hooking`: the user's hooks bound to a project, for every front end (uses `sandboxing`)
//! - `setup`: setup shared by every command that runs the agent (exec, the TUI, mesh) (uses `args`, `hooking`, `provider`, `sandboxing`)
//! - `mcp_setup`: the MCP servers of a run and their prompts and resources in inputs (uses `sandboxing`, `setup`)
//! - `acp_cmd`: `north acp` (uses `args`, `logging`, `setup`)
//! - `interactive`: `north` with no subcommand (uses `args`, `logging`, `setup`)
//! - `mcp_use`: `north mcp login`, `logout` and `call` (uses `mcp_setup`)
//! - `mcp_cmd`: `north mcp` (uses `hooking`, `mcp_setup`, `mcp_use`, `setup`)
//! - `memory_cmd`: `north memory`
//! - `output`: headless output shared by `north exec` and `north mesh`
//! - `stop`: Ctrl+C, SIGTERM and SIGHUP end a headless run cleanly
//! - `mesh_cmd`: `north mesh "goal"` (uses `args`, `logging`, `output`, `setup`, `stop`)
//! - `sandbox_cmd`: `north sandbox -- CMD` (uses `sandboxing`)
//! - `tool_cmd`: `north tool NAME --args JSON [--path DIR] [--apply]` (uses `hooking`, `setup`)
//! - `trust_cmd`: `north trust [PATH]`
//! - `undo_cmd`: `north undo`
//! - `cli`: the command line (uses `acp_cmd`, `args`, `interactive`, `mcp_cmd`, `memory_cmd`, `mesh_cmd`, `sandbox_cmd`, `tool_cmd`, `trust_cmd`, `undo_cmd`)
//! - `config_cmd`: `north config` (uses `args`, `provider`)
//! - `exec`: `north exec` (uses `args`, `logging`, `output`, `setup`, `stop`)
//! - `sessions`: `north sessions list|show` (uses `args`)

mod acp_cmd;
mod args;
mod builder;
mod cli;
mod config_cmd;
mod endpoint;
mod exec;
mod guard;
mod hooking;
mod interactive;
mod logging;
mod mcp_cmd;
mod mcp_setup;
mod mcp_use;
mod memory_cmd;
mod mesh_cmd;
mod models_cmd;
mod output;
mod provider;
mod sandbox_cmd;
mod sandboxing;
mod sessions;
mod setup;
mod stop;
mod tool_cmd;
mod trust_cmd;
mod undo_cmd;
mod windows;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
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
        Some(Command::Sandbox(_) | Command::Completions(_))
    ) {
        guard::install_state_key();
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
        Some(Command::Mcp(args)) => mcp_cmd::main(args),
        Some(Command::Acp(args)) => return acp_cmd::main(args),
        Some(Command::Completions(args)) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(args.shell, &mut cmd, "north", &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        None => return interactive::main(cli.interactive),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("north: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
