//! `north memory`: list, add and remove the memories North shows the model —
//! the project's (`.north/memory.json`, shared with `north mesh`) or, with
//! `--global`, the ones every project shares.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use north_agent::memory::{MemoryEntry, MemoryFile};

/// `north memory` options.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: MemoryAction,
}

/// `north memory` subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// List the memories, oldest first.
    List {
        /// Which memory.
        #[command(flatten)]
        scope: Scope,
        /// Print the entries as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remember something: the model sees it when it is relevant to a request.
    Add {
        /// Which memory.
        #[command(flatten)]
        scope: Scope,
        /// A tag that helps retrieval (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// What to remember.
        #[arg(value_name = "TEXT", num_args = 1.., required = true)]
        text: Vec<String>,
    },
    /// Forget the memory with this id (or a prefix of it, at least 4 characters).
    Remove {
        /// Which memory.
        #[command(flatten)]
        scope: Scope,
        /// The id, as `north memory list` shows it.
        #[arg(value_name = "ID")]
        id: String,
    },
}

/// The project's memory, or the global one.
#[derive(Debug, Args)]
pub struct Scope {
    /// The memory every project shares ($XDG_DATA_HOME/north/memory.json).
    #[arg(long, conflicts_with = "path")]
    pub global: bool,
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

impl Scope {
    fn file(&self) -> anyhow::Result<MemoryFile> {
        if self.global {
            return MemoryFile::global()
                .context("no data directory for global memory (set HOME or XDG_DATA_HOME)");
        }
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let root = north_tools::repo::resolve_root(self.path.as_deref(), &cwd)?;
        Ok(MemoryFile::project(&root))
    }
}

/// Runs `north memory`.
pub fn main(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        MemoryAction::List { scope, json } => {
            let file = scope.file()?;
            let entries = file.load()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&entries)?);
            } else if entries.is_empty() {
                println!("no memories in {}", file.path().display());
            } else {
                for e in &entries {
                    let tags = if e.tags.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", e.tags.join(", "))
                    };
                    println!("{}  {}{tags}", e.id, e.summary.replace('\n', " "));
                }
            }
        }
        MemoryAction::Add { scope, tags, text } => {
            let text = text.join(" ");
            if text.trim().is_empty() {
                bail!("nothing to remember: the text is empty");
            }
            let file = scope.file()?;
            let mut entry = MemoryEntry::new("remembered by the user", text.trim());
            entry.tags = tags;
            let id = entry.id.clone();
            file.append(entry)?;
            println!("remembered {id} in {}", file.path().display());
        }
        MemoryAction::Remove { scope, id } => {
            let file = scope.file()?;
            if id.len() < 4 {
                bail!("give at least 4 characters of the id (see `north memory list`)");
            }
            match file.remove(&id)? {
                0 => bail!("no memory with id {id} in {}", file.path().display()),
                n => println!("forgot {n} memory(ies) from {}", file.path().display()),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
