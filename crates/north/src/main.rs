//! The `north` binary: a thin CLI over the North crates.
//!
//! `--version` and `--help` are answered by clap before anything else runs:
//! no runtime, no thread pool, no config read, no model call.

mod acp_cmd;
mod args;
mod cli;
mod config_cmd;
mod exec;
mod guard;
mod interactive;
mod logging;
mod mcp_cmd;
mod memory_cmd;
mod mesh_cmd;
mod output;
mod provider;
mod sandbox_cmd;
mod sessions;
mod setup;
mod tool_cmd;
mod trust_cmd;
mod undo_cmd;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    // First, while single-threaded: keys leave the environment block child
    // processes could read through /proc.
    guard::protect_process();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Exec(args)) => return exec::main(args),
        Some(Command::Tool(args)) => return tool_cmd::main(args),
        Some(Command::Sessions(args)) => sessions::main(args),
        Some(Command::Config(args)) => config_cmd::main(args),
        Some(Command::Mesh(args)) => return mesh_cmd::main(args),
        Some(Command::Trust(args)) => trust_cmd::main(args),
        Some(Command::Memory(args)) => memory_cmd::main(args),
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
