//! `north config`: the effective configuration and where each value came from.

use std::process::ExitCode;

use anyhow::Context;
use north_agent::trust::{TrustReport, TrustState, TrustStore};
use north_config::{Config, IgnoredBecause, Overrides, global_config_path};

use crate::args::ConfigArgs;

/// Runs `north config`.
pub fn main(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let global = global_config_path();
    let trust = match TrustStore::user() {
        Some(store) => Some(store.evaluate(&root)?),
        None => None,
    };
    let config = Config::load(
        &root,
        global.as_deref(),
        north_secrets::var,
        &Overrides::default(),
        trust.as_ref().is_some_and(TrustReport::applies),
    )?;
    println!("project root = {}", root.display());
    if let Some(g) = &global {
        println!("global config file = {}", g.display());
    }
    println!("{}", config.describe(north_secrets::var));
    let state = trust
        .as_ref()
        .map_or("unknown (no config directory)", |t| match t.state {
            TrustState::NothingToTrust => "nothing to trust (no project security settings)",
            TrustState::Trusted => "trusted",
            TrustState::Untrusted => "not trusted (run `north trust` to apply its settings)",
            TrustState::Changed => "changed since trusted (run `north trust` again to apply)",
        });
    println!("project trust = {state}");
    if let Some(t) = &trust {
        for want in &t.wants {
            let applied = if t.applies() { "applied" } else { "ignored" };
            println!("  {applied}: {want}");
        }
    }
    for ignored in &config.ignored {
        let why = match ignored.because {
            IgnoredBecause::Untrusted => "the project is not trusted",
            IgnoredBecause::EndpointFromProject => {
                "endpoints that receive your key come only from you"
            }
            IgnoredBecause::SandboxFromProject => {
                "only your own config or --sandbox shapes the OS sandbox; a project may add hosts to `sandbox.network.deny`"
            }
            IgnoredBecause::UserOnly => "only your own config may set it",
        };
        println!("ignored project setting {} ({why})", ignored.key);
    }
    print_claude_rules(&config.claude);
    // What the settings above amount to for the model: its id, window and
    // per-request output (a local server is asked for its window).
    let model = north_runtime::provider::model_name(&config);
    let limits = north_runtime::provider::model_limits(
        &config,
        &model,
        north_runtime::provider::Probe::Fresh,
    );
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

/// Claude Code's permission rules as North took them, and what it did not.
fn print_claude_rules(claude: &north_config::claude::ClaudeRules) {
    let rules = |r: &north_config::claude::CommandRules| {
        let mut all: Vec<String> = r.exact.iter().map(|e| format!("`{e}`")).collect();
        all.extend(r.prefixes.iter().map(|p| format!("`{p} …`")));
        if r.all {
            all.push("every command".into());
        }
        all.join(", ")
    };
    for (what, list) in [
        ("run unasked", &claude.allow),
        ("never run", &claude.deny),
        ("always ask", &claude.ask),
    ] {
        if !list.is_empty() {
            println!("claude permissions: commands that {what}: {}", rules(list));
        }
    }
    if !claude.deny_hosts.is_empty() {
        println!(
            "claude permissions: hosts commands never reach: {}",
            claude.deny_hosts.join(", ")
        );
    }
    for u in &claude.unmapped {
        println!("claude permissions not taken: {u}");
    }
}
