//! `north sessions list|show`.

use std::process::ExitCode;

use anyhow::Context;
use north_agent::store::SessionStore;

use crate::cli::{SessionsArgs, SessionsCommand};

/// Runs `north sessions`.
pub fn main(args: SessionsArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let store = SessionStore::new(&root);
    match args.command {
        SessionsCommand::List => {
            let sessions = store.list()?;
            if sessions.is_empty() {
                println!("no sessions in {}", store.dir().display());
            }
            for (s, cp) in sessions {
                match cp {
                    Some(cp) => {
                        let first = cp
                            .recent_messages
                            .iter()
                            .find(|m| m.role == north_protocol::Role::User)
                            .map(|m| {
                                m.content
                                    .lines()
                                    .next()
                                    .unwrap_or_default()
                                    .chars()
                                    .take(60)
                                    .collect::<String>()
                            })
                            .unwrap_or_default();
                        println!(
                            "{}  rev {:>3}  {:>3} msgs  {}",
                            s.id,
                            cp.revision,
                            cp.recent_messages.len(),
                            first
                        );
                    }
                    None => println!("{}  (no checkpoint)", s.id),
                }
            }
        }
        SessionsCommand::Show { id } => {
            let session = store.open(&id)?;
            let cp = session
                .load_checkpoint()?
                .with_context(|| format!("session {id} has no checkpoint yet"))?;
            println!("{}", serde_json::to_string_pretty(&cp)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
