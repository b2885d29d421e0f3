//! `north mesh "goal"`: planner → executor → memory. Placeholder until the mesh lands.

use std::process::ExitCode;

use clap::Args;

use crate::cli::ModelArgs;

/// `north mesh` options.
#[derive(Debug, Args)]
pub struct MeshArgs {
    /// Model and project options.
    #[command(flatten)]
    pub model: ModelArgs,
    /// The goal.
    #[arg(value_name = "GOAL", num_args = 1..)]
    pub goal: Vec<String>,
}

/// Runs `north mesh`.
pub fn main(_args: MeshArgs) -> ExitCode {
    eprintln!("north: mesh is not built yet");
    ExitCode::from(2)
}
