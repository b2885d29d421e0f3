//! `north config`: the effective configuration and where each value came from.

use std::process::ExitCode;

use anyhow::Context;
use north_agent::config::{Config, Overrides, global_config_path};

use crate::cli::ConfigArgs;

/// Runs `north config`.
pub fn main(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let global = global_config_path();
    let config = Config::load(
        &root,
        global.as_deref(),
        |k| std::env::var(k).ok(),
        &Overrides::default(),
    )?;
    println!("project root = {}", root.display());
    if let Some(g) = &global {
        println!("global config file = {}", g.display());
    }
    println!("{}", config.describe(|k| std::env::var(k).ok()));
    // What the settings above amount to for the model: its id, window and
    // per-request output (a local server is asked for its window).
    let model = crate::provider::model_name(&config);
    let limits = crate::provider::model_limits(&config, &model);
    println!("effective model = {model}");
    println!(
        "effective context window = {} tokens  ({})",
        limits.context_window, limits.source
    );
    println!(
        "effective max_tokens = {} per request (--max-tokens)",
        limits.max_tokens(None)
    );
    Ok(ExitCode::SUCCESS)
}
