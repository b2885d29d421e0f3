//! `north` with no subcommand: the interactive assistant (TUI).
//! Placeholder until the TUI lands.

use std::process::ExitCode;

use clap::Args;

use crate::cli::ModelArgs;

/// Options of the interactive assistant.
#[derive(Debug, Clone, Args)]
pub struct InteractiveArgs {
    /// Model and project options.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Resume the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Resume the most recent session.
    #[arg(long = "continue", short = 'c')]
    pub continue_latest: bool,
}

/// Runs the interactive assistant.
pub fn main(_args: InteractiveArgs) -> ExitCode {
    eprintln!(
        "north: the interactive assistant is not built yet; use `north exec PROMPT` (see `north --help`)"
    );
    ExitCode::from(2)
}
