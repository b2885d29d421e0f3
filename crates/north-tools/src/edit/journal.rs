//! The transaction journal shared by [`apply`](super::apply) and
//! [`recover`](super::recover): its on-disk form, rolling a transaction back
//! or finishing it, what became of each file, and the error both report.
//! Neither of them depends on the other for these.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::lock::LockError;
use crate::repo::{atomic_write, fsync_dir};
use crate::sandbox::{Sandbox, SandboxError};

/// Where transaction journals live, relative to the root.
pub(super) const TXN_DIR: &str = ".north/txn";

/// Why an apply wrote nothing (or put everything back).
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// A file changed between proposal and apply.
    #[error(
        "{path} changed since the proposal was made; nothing was written. Read it again and redo the edit"
    )]
    Stale {
        /// The file that changed.
        path: String,
    },
    /// A path no longer passes the sandbox.
    #[error("{0}; nothing was written")]
    Sandbox(#[from] SandboxError),
    /// Preparing failed before any target was touched.
    #[error("cannot {op} {path}: {source}; nothing was written")]
    Prepare {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Renaming into place failed; what was already replaced was put back.
    #[error("cannot replace {path}: {source}; nothing of the batch was kept: {fates}")]
    RolledBack {
        /// The file whose rename failed.
        path: String,
        /// The OS error.
        source: std::io::Error,
        /// What became of each file.
        fates: Fates,
    },
    /// Another apply in this project did not finish in time.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Finishing an earlier interrupted apply failed.
    #[error("cannot recover an interrupted apply ({path}): {problem}")]
    Recovery {
        /// The journal (or, for a failed rename, the file).
        path: String,
        /// What failed.
        problem: RecoveryProblem,
    },
}

/// Why an interrupted apply could not be finished.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryProblem {
    /// The journal could not be read.
    #[error("{0}")]
    Read(std::io::Error),
    /// The journal is not one North wrote.
    #[error("unreadable journal: {0}")]
    Journal(serde_json::Error),
    /// A finished file could not be put in place.
    #[error("{0}")]
    Rename(std::io::Error),
    /// A path in the journal is not one the sandbox lets North write.
    #[error("{0}; delete the journal to discard it")]
    Path(SandboxError),
    /// A path in the journal goes through a symlink.
    #[error("{0:?} goes through a symlink; delete the journal to discard it")]
    Symlink(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum TxState {
    Prepared,
    Committed,
    RollingBack,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) target: String,
    pub(super) temp: String,
    pub(super) backup: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    pub(super) state: TxState,
    pub(super) entries: Vec<Entry>,
    /// Directories created for new files, outermost first.
    pub(super) dirs: Vec<String>,
    /// This user's mark over the rest ([`crate::owner`]): only a journal
    /// North wrote here is ever replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) owner: Option<String>,
}

impl Journal {
    /// What the mark covers: the journal without its mark.
    pub(super) fn signed_bytes(&self) -> Vec<u8> {
        let unmarked = Journal {
            owner: None,
            ..self.clone()
        };
        serde_json::to_vec(&unmarked).unwrap_or_default()
    }
}

pub(super) struct Tx<'a> {
    pub(super) sandbox: &'a Sandbox,
    pub(super) journal_path: PathBuf,
    pub(super) journal: Journal,
}

impl Tx<'_> {
    pub(super) fn abs(&self, rel: &str) -> PathBuf {
        self.sandbox.root().join(rel)
    }

    pub(super) fn save(&mut self) -> std::io::Result<()> {
        self.journal.owner = crate::owner::mark(
            crate::owner::StateKind::Journal,
            self.sandbox.root(),
            &self.journal.signed_bytes(),
        );
        let bytes = serde_json::to_vec_pretty(&self.journal).map_err(std::io::Error::other)?;
        atomic_write(&self.journal_path, &bytes).map_err(std::io::Error::other)
    }

    /// Undoes a prepared transaction: targets were never touched.
    pub(super) fn discard(&self) {
        for e in &self.journal.entries {
            let _ = std::fs::remove_file(self.abs(&e.temp));
            if let Some(b) = &e.backup {
                let _ = std::fs::remove_file(self.abs(b));
            }
        }
        for dir in self.journal.dirs.iter().rev() {
            let _ = std::fs::remove_dir(self.abs(dir));
        }
        let _ = std::fs::remove_file(&self.journal_path);
    }
}

/// What became of one file of a settled apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// It holds the batch's new content.
    New,
    /// It was created with the batch's content.
    Created,
    /// Its old content was put back.
    Restored,
    /// It was never touched: it holds its old content.
    Unchanged,
    /// It was created and removed again.
    Removed,
    /// It was never created.
    NotCreated,
    /// Settling it failed; it may need a look.
    Failed(String),
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::New => f.write_str("new content"),
            Fate::Created => f.write_str("created"),
            Fate::Restored => f.write_str("old content restored"),
            Fate::Unchanged => f.write_str("old content, untouched"),
            Fate::Removed => f.write_str("removed again"),
            Fate::NotCreated => f.write_str("not created"),
            Fate::Failed(why) => write!(f, "NOT settled: {why}"),
        }
    }
}

/// The fate of every file of one apply, in batch order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fates(pub Vec<(String, Fate)>);

impl fmt::Display for Fates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (path, fate)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{path} ({fate})")?;
        }
        Ok(())
    }
}

/// Puts back the old content of the first `done` entries (already renamed)
/// and discards the rest; says what became of each file.
pub(super) fn roll_back(tx: &mut Tx<'_>, done: usize) -> Fates {
    tx.journal.state = TxState::RollingBack;
    let _ = tx.save();
    let mut fates = Vec::new();
    for (i, e) in tx.journal.entries.iter().enumerate() {
        let target = tx.abs(&e.target);
        let temp = tx.abs(&e.temp);
        let fate = match &e.backup {
            Some(b) => {
                let backup = tx.abs(b);
                if backup.exists() && (i < done || !temp.exists()) {
                    match std::fs::rename(&backup, &target) {
                        Ok(()) => Fate::Restored,
                        Err(err) => Fate::Failed(err.to_string()),
                    }
                } else {
                    Fate::Unchanged
                }
            }
            None => {
                // A created file that was already renamed in goes away again.
                if i < done || !temp.exists() {
                    match std::fs::remove_file(&target) {
                        Ok(()) => Fate::Removed,
                        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Fate::NotCreated,
                        Err(err) => Fate::Failed(err.to_string()),
                    }
                } else {
                    Fate::NotCreated
                }
            }
        };
        fates.push((e.target.clone(), fate));
        if let Some(parent) = target.parent() {
            let _ = fsync_dir(parent);
        }
    }
    tx.discard();
    Fates(fates)
}

pub(super) fn finish(tx: &Tx<'_>) {
    for e in &tx.journal.entries {
        if let Some(b) = &e.backup {
            let _ = std::fs::remove_file(tx.abs(b));
        }
    }
    let _ = std::fs::remove_file(&tx.journal_path);
    if let Some(dir) = tx.journal_path.parent() {
        let _ = fsync_dir(dir);
    }
}
