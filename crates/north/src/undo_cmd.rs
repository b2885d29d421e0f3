//! `north undo`: put back what a session's turns changed — files (also
//! those shell commands changed), the conversation, or both — without
//! starting the assistant.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use north_agent::store::SessionStore;
use north_agent::undo::{RewindScope, UndoError};

/// `north undo` options.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Go back to the start of this turn (it and every later turn are
    /// undone) [default: the last turn not undone yet].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub turn: Option<u32>,
    /// What to put back.
    #[arg(long, value_enum, default_value_t = What::Code)]
    pub what: What,
    /// The session [default: the most recent one].
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Overwrite files changed by hand since North changed them (their diff
    /// is printed first).
    #[arg(long)]
    pub force: bool,
    /// Show what would be restored, change nothing.
    #[arg(long, conflicts_with = "list")]
    pub dry_run: bool,
    /// List the session's turns and exit.
    #[arg(long)]
    pub list: bool,
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// What `north undo` puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum What {
    /// Files only.
    Code,
    /// The conversation only (the next message continues from before the turn).
    Conversation,
    /// Files and the conversation.
    Both,
}

impl From<What> for RewindScope {
    fn from(w: What) -> Self {
        match w {
            What::Code => RewindScope::Code,
            What::Conversation => RewindScope::Conversation,
            What::Both => RewindScope::Both,
        }
    }
}

/// `--list`: the session's turns with snapshots, and which are undone.
fn list(agent: &north_runtime::LiveSession, id: &str) {
    if agent.turns().is_empty() {
        println!("session {id} has no turns with snapshots");
    }
    for t in agent.turns() {
        let status = match (&t.before, &t.after, t.undone) {
            (_, _, true) => "undone",
            (None, _, _) => "no tools",
            (Some(_), None, _) => "unfinished",
            (Some(_), Some(_), false) => "",
        };
        println!(
            "{:>3}  {}  {:<10}  {}",
            t.turn,
            north_agent::store::utc_stamp(t.started_ts as u64),
            status,
            t.prompt
        );
    }
}

/// What an undo did to the files.
fn print_restored(files: &north_tools::snapshot::RestoreReport, turns: &[u32], id: &str) {
    for p in &files.written {
        println!("restored {p}");
    }
    for p in &files.removed {
        println!("removed  {p}");
    }
    for (p, why) in &files.skipped {
        println!("kept     {p} ({why})");
    }
    println!(
        "undid turn(s) {:?} of session {id}: {} restored, {} removed",
        turns,
        files.written.len(),
        files.removed.len()
    );
}

/// Runs `north undo`.
pub fn main(args: UndoArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let store = SessionStore::new(&root);
    let session = match &args.session {
        Some(id) => store.open(id)?,
        None => store
            .latest()?
            .with_context(|| format!("no sessions in {}", store.dir().display()))?,
    };
    let id = session.id.clone();
    // The agent holds the session's lock and does the rewinding; it never
    // talks to a model here.
    let mut agent = north_runtime::LiveSession::for_rewind(&root, session)?;
    if args.list {
        list(&agent, &id);
        return Ok(ExitCode::SUCCESS);
    }
    if args.what != What::Conversation {
        let plan = agent.plan_undo(args.turn)?;
        for c in &plan.conflicts {
            println!(
                "changed by hand since turn {}: {}\n{}",
                plan.turn, c.path, c.diff
            );
        }
        if args.dry_run {
            println!(
                "undoing turn(s) {:?} would restore {} path(s):",
                plan.turns,
                plan.paths.len()
            );
            for p in &plan.paths {
                println!("  {p}");
            }
            for p in &plan.refused {
                println!("  REFUSED {p}: North never restores under .git/ or .north/");
            }
            return Ok(ExitCode::SUCCESS);
        }
    } else if args.dry_run {
        bail!("--dry-run shows file changes; it has nothing to show for --what conversation");
    }
    let report = match agent.rewind(args.turn, args.what.into(), args.force) {
        Ok(r) => r,
        Err(e @ UndoError::Conflicts(_)) => {
            eprintln!("north: {e}");
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(files) = &report.files {
        print_restored(files, &report.turns, &id);
    }
    if let Some(n) = report.messages_dropped {
        println!("conversation of session {id} rewound: {n} message(s) dropped");
    }
    Ok(ExitCode::SUCCESS)
}
