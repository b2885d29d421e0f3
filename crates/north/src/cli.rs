//! Command-line definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// North: a terminal coding assistant.
#[derive(Debug, Parser)]
#[command(name = "north", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt headless and stream the answer to stdout.
    Exec(ExecArgs),
}

/// Model providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderName {
    /// Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL).
    Anthropic,
    /// OpenAI Chat Completions or any compatible server (OPENAI_API_KEY, OPENAI_BASE_URL).
    Openai,
    /// Replay a JSON script of model turns (--script); no network, no key.
    Scripted,
}

impl ProviderName {
    /// The name as written on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Anthropic => "anthropic",
            ProviderName::Openai => "openai",
            ProviderName::Scripted => "scripted",
        }
    }
}

/// `north exec` options.
#[derive(Debug, Args)]
#[command(
    after_help = "EXIT STATUS:\n  0  the model answered\n  1  the model or provider failed (after retries)\n  2  invalid use or configuration (missing key, bad script, bad flags)\n  130 interrupted (Ctrl+C)"
)]
pub struct ExecArgs {
    /// Model provider [default: scripted with --script, else anthropic].
    #[arg(long, value_enum)]
    pub provider: Option<ProviderName>,
    /// Model name [default: claude-sonnet-4-5 for anthropic, gpt-5.2 for openai].
    #[arg(long)]
    pub model: Option<String>,
    /// Script of model turns for the scripted provider (JSON; see README).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Append every request the scripted provider receives to FILE (JSONL).
    #[arg(long, value_name = "FILE", requires = "script")]
    pub record_requests: Option<PathBuf>,
    /// Print protocol events as JSON, one object per line, instead of text.
    #[arg(long)]
    pub json: bool,
    /// Maximum output tokens.
    #[arg(long, default_value_t = 8192)]
    pub max_tokens: u32,
    /// The prompt; `-` or nothing reads it from standard input.
    #[arg(value_name = "PROMPT", num_args = 0..)]
    pub prompt: Vec<String>,
}
