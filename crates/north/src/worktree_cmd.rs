//! `north worktree list|merge|remove`: North's worktrees of this
//! repository, their changes reviewed back into the main tree file by
//! file (answers from the terminal or, scripted, from standard input), and
//! removed — only North's own, never following a link out.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use north_agent::store::SessionStore;
use north_protocol::HookEvent;
use north_worktree::{Change, ChangeKind, Registry, Worktree};

/// `north worktree` options.
#[derive(Debug, Args)]
pub struct WorktreeCmdArgs {
    /// Repository [default: the git root above the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub path: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: WorktreeCommand,
}

/// `north worktree` subcommands.
#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// North's worktrees of this repository: session, state, size, path.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Review a worktree's changes into the main tree, file by file:
    /// nothing is written before you accept it; conflicts are shown with
    /// git's markers, never resolved for you. Answers come from the
    /// terminal, or one per line from standard input (y, n, a: all the
    /// rest, q: none of the rest).
    Merge {
        /// The worktree.
        name: String,
        /// Accept every change that is not a conflict, without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Show the changes, write nothing.
        #[arg(long, conflicts_with = "yes")]
        dry_run: bool,
    },
    /// Remove one of North's worktrees (its directory, git's record of it
    /// and its branch). One North did not make is refused.
    Remove {
        /// The worktree.
        name: String,
        /// Remove it even though its changes were not merged.
        #[arg(long)]
        force: bool,
    },
}

/// Runs `north worktree`.
pub fn main(args: WorktreeCmdArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let (registry, top) = north_runtime::worktrees::of_repository(&root)?;
    match args.command {
        WorktreeCommand::List { json } => list(&registry, &top, json),
        WorktreeCommand::Merge { name, yes, dry_run } => {
            merge(&registry.named(&top, &name)?, &registry, yes, dry_run)
        }
        WorktreeCommand::Remove { name, force } => {
            remove(&registry.named(&top, &name)?, &registry, force)
        }
    }
}

/// One worktree as `list` shows it.
fn summary(wt: &Worktree) -> serde_json::Value {
    let state = north_worktree::state(wt);
    let session = SessionStore::new(&wt.path)
        .latest()
        .ok()
        .flatten()
        .map(|s| s.id);
    let owner = match &wt.owner {
        north_worktree::Owner::Session => "session".to_string(),
        north_worktree::Owner::Agent { agent } => format!("agent {agent}"),
    };
    serde_json::json!({
        "name": wt.name,
        "owner": owner,
        "session": session,
        "state": state,
        "bytes": size(&wt.path),
        "branch": wt.branch,
        "base": wt.base,
        "path": wt.path.display().to_string(),
    })
}

fn list(registry: &Registry, top: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let all = registry.of_repo(top);
    if all.is_empty() && !json {
        println!(
            "no worktrees of North's in {} (`north -w NAME` makes one)",
            top.display()
        );
    }
    for wt in &all {
        let s = summary(wt);
        if json {
            println!("{s}");
            continue;
        }
        let text = |k: &str| s[k].as_str().unwrap_or("-").to_string();
        println!(
            "{:<20} {:<16} {:<24} {:>9}  {}\n{:<20} {}",
            wt.name,
            text("owner"),
            text("state"),
            human_size(s["bytes"].as_u64().unwrap_or(0)),
            text("path"),
            "",
            format_args!("session {}, branch {}", text("session"), wt.branch),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Bytes of the regular files under `dir`, links not followed.
fn size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// What the reviewer said of the rest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    Ask,
    All,
    None,
}

fn merge(wt: &Worktree, registry: &Registry, yes: bool, dry_run: bool) -> anyhow::Result<ExitCode> {
    let changes = north_worktree::changes(wt)?;
    if changes.is_empty() {
        println!(
            "worktree {}: nothing to merge (the main tree has all of its changes)",
            wt.name
        );
        return Ok(ExitCode::SUCCESS);
    }
    let color = std::io::stdout().is_terminal();
    let mut answers = std::io::stdin().lock();
    let mut rest = if yes { Rest::All } else { Rest::Ask };
    let mut accepted: Vec<Change> = Vec::new();
    println!(
        "worktree {} (branch {}): {} file(s) changed since {}",
        wt.name,
        wt.branch,
        changes.len(),
        &wt.base[..wt.base.len().min(10)]
    );
    for change in &changes {
        println!("\n── {} ({})", visible(&change.path), change.kind.label());
        print_diff(&change.diff(), color);
        if dry_run {
            continue;
        }
        if !change.kind.writable() {
            println!("   not written: resolve it in the main tree by hand");
            continue;
        }
        let take = match rest {
            Rest::None => false,
            // Conflict markers are written only on the reviewer's own word.
            Rest::All if !change.kind.is_conflict() => true,
            // `--yes` leaves conflicts for a review.
            Rest::All if yes => {
                println!(
                    "   not written: a conflict (`north worktree merge {}` without --yes reviews it)",
                    wt.name
                );
                false
            }
            Rest::All | Rest::Ask => ask(change, &mut answers, &mut rest)?,
        };
        if take {
            accepted.push(change.clone());
        }
    }
    if dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    if accepted.is_empty() {
        println!("\nnothing accepted; the main tree is unchanged");
        return Ok(ExitCode::SUCCESS);
    }
    let applied = north_worktree::apply(wt, &accepted, registry)?;
    println!();
    if !applied.written.is_empty() {
        println!("written: {}", applied.written.join(", "));
    }
    if !applied.deleted.is_empty() {
        println!("deleted: {}", applied.deleted.join(", "));
    }
    for (path, why) in &applied.skipped {
        println!("not written: {path} ({why})");
    }
    let markers = accepted
        .iter()
        .filter(|c| c.kind == ChangeKind::Conflict)
        .count();
    if markers > 0 {
        println!(
            "{markers} file(s) now hold conflict markers (<<<<<<<): resolve them before you commit"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks about `change`; reads one answer line.
fn ask(change: &Change, answers: &mut impl BufRead, rest: &mut Rest) -> anyhow::Result<bool> {
    let what = if change.kind.is_conflict() {
        "Write it with its conflict markers"
    } else {
        "Apply it to the main tree"
    };
    loop {
        eprint!("{what}? [y]es, [n]o, [a]ll the rest, [q]uit: ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        if answers.read_line(&mut line)? == 0 {
            eprintln!("(no answer: not applied)");
            *rest = Rest::None;
            return Ok(false);
        }
        // Scripted answers are not echoed by a terminal: the transcript
        // shows them.
        if !std::io::stdin().is_terminal() {
            eprintln!("{}", line.trim());
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            "a" | "all" => {
                *rest = Rest::All;
                return Ok(true);
            }
            "q" | "quit" => {
                *rest = Rest::None;
                return Ok(false);
            }
            other => eprintln!("`{other}`: answer y, n, a or q"),
        }
    }
}

/// `text` with control characters shown, not sent to the terminal: a
/// worktree's file (or name) cannot move the cursor or hide a line of the
/// review.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' => "    ".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

fn print_diff(diff: &str, color: bool) {
    for line in diff.lines() {
        let line = visible(line);
        let line = line.as_str();
        let paint = match line.as_bytes().first() {
            _ if !color => "",
            Some(b'+') if !line.starts_with("+++") => "\x1b[32m",
            Some(b'-') if !line.starts_with("---") => "\x1b[31m",
            Some(b'@') => "\x1b[36m",
            _ => "",
        };
        if paint.is_empty() {
            println!("   {line}");
        } else {
            println!("   {paint}{line}\x1b[0m");
        }
    }
}

fn remove(wt: &Worktree, registry: &Registry, force: bool) -> anyhow::Result<ExitCode> {
    // Refused before any hook runs: a hook prepares only a removal that
    // happens.
    north_worktree::removable(wt, registry, force)?;
    if let Some(hooks) = north_runtime::worktrees::project_hooks(&wt.repo)? {
        crate::worktree_enter::run_hooks(|emit| {
            Box::pin(north_runtime::worktrees::fire(
                &hooks,
                HookEvent::WorktreeRemove,
                wt,
                "",
                emit,
            ))
        })?;
    }
    let removed = north_worktree::remove(wt, registry, force)?;
    println!(
        "removed worktree {} ({}) and its branch {}",
        wt.name,
        removed.path.display(),
        removed.branch
    );
    Ok(ExitCode::SUCCESS)
}
