//! The `north` binary: a thin CLI over the North crates.
//!
//! `--version` and `--help` are answered by clap before anything else runs:
//! no runtime, no thread pool, no config read, no model call.

mod cli;
mod exec;
mod provider;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Exec(args)) => exec::main(args),
        None => {
            eprintln!(
                "north: the interactive assistant is not built yet; use `north exec PROMPT` (see `north --help`)"
            );
            ExitCode::from(2)
        }
    }
}
