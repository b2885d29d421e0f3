//! `north trust [PATH]`: trust a project's own security settings, list the
//! trusted projects, or take trust back.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use north_agent::trust::{TrustState, TrustStore};

/// `north trust` options.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The project [default: the git root above the current directory, else the current directory].
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// Show what the project asks for and whether it is trusted; change nothing.
    #[arg(long, conflicts_with_all = ["revoke", "list"])]
    pub show: bool,
    /// Take trust back: the project's settings are ignored again.
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
    /// List the trusted projects.
    #[arg(long)]
    pub list: bool,
}

/// Runs `north trust`.
pub fn main(args: TrustArgs) -> anyhow::Result<ExitCode> {
    let store = TrustStore::user()
        .context("no config directory to keep trust decisions in (set HOME or XDG_CONFIG_HOME)")?;
    if args.list {
        let projects = store.list()?;
        if projects.is_empty() {
            println!("no trusted projects ({})", store.path().display());
        }
        for (path, _) in projects {
            println!("{path}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    if args.revoke {
        if store.revoke(&root)? {
            println!("{}: no longer trusted", root.display());
        } else {
            println!("{}: was not trusted", root.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = if args.show {
        store.evaluate(&root)?
    } else {
        store.trust(&root)?
    };
    let state = match report.state {
        TrustState::NothingToTrust => "asks for nothing that needs trust",
        TrustState::Trusted if args.show => "trusted",
        TrustState::Trusted => "trusted; its settings apply until they change",
        TrustState::Untrusted => "not trusted",
        TrustState::Changed => "changed since you trusted it",
    };
    println!("{}: {state}", report.root.display());
    for want in &report.wants {
        println!("  • {want}");
    }
    for key in &report.never {
        println!(
            "  • {key} in .north/project.json is never applied (endpoints come only from you)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
