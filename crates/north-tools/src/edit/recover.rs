//! Recovery: settling the applies a killed process left half done, and
//! saying exactly what became of each file.
//!
//! Every entry point runs [`recover`] before it reads or edits a file, and
//! every apply runs it first under the project's lock. A journal found while
//! holding the lock belongs to a process that died mid-apply; one that is
//! still running would hold the lock.

use std::fmt;
use std::path::{Path, PathBuf};

use super::journal::{
    ApplyError, Fate, Fates, RecoveryProblem, TXN_DIR, Tx, TxState, finish, roll_back,
};
use super::lock::ApplyLock;
use crate::repo::fsync_dir;
use crate::sandbox::Sandbox;

/// One apply a killed process left, now settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledApply {
    /// Its journal (relative to the root).
    pub journal: String,
    /// Whether the batch was completed (it had reached its commit point);
    /// otherwise it was undone.
    pub completed: bool,
    /// What became of each file.
    pub fates: Fates,
}

/// What [`recover`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Recovery {
    /// The applies it settled, oldest first.
    pub settled: Vec<SettledApply>,
    /// Journals North did not write (a repository shipped them): ignored,
    /// never replayed.
    pub foreign: Vec<String>,
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.foreign.is_empty() {
            write!(
                f,
                "ignored edit journals North did not write here (they came with the repository; delete them): {}",
                self.foreign.join(", ")
            )?;
            if !self.settled.is_empty() {
                f.write_str("; ")?;
            }
        }
        for (i, s) in self.settled.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            let what = if s.completed {
                "completed an edit batch interrupted after it was committed"
            } else {
                "undid an edit batch interrupted before it was committed"
            };
            write!(f, "{what}: {}", s.fates)?;
        }
        Ok(())
    }
}

/// Finishes or undoes the applies a killed process left half done, under
/// the project's apply lock.
pub fn recover(sandbox: &Sandbox) -> Result<Recovery, ApplyError> {
    let txn_dir = sandbox.root().join(TXN_DIR);
    if !txn_dir.is_dir() {
        return Ok(Recovery::default());
    }
    let _lock = ApplyLock::acquire(&txn_dir)?;
    recover_locked(sandbox)
}

/// [`recover`] for a caller that already holds the lock.
pub(super) fn recover_locked(sandbox: &Sandbox) -> Result<Recovery, ApplyError> {
    let mut recovery = Recovery::default();
    for path in journals(sandbox) {
        let shown = path.display().to_string();
        let journal = read_journal(&path, &shown)?;
        let provenance = crate::owner::check(
            crate::owner::StateKind::Journal,
            sandbox.root(),
            &journal.signed_bytes(),
            journal.owner.as_deref(),
        );
        if !provenance.usable() {
            tracing::warn!(journal = %shown, "ignored an edit journal North did not write");
            recovery
                .foreign
                .push(sandbox.relative(&path).unwrap_or_else(|| shown.clone()));
            continue;
        }
        let mut tx = Tx {
            sandbox,
            journal_path: path,
            journal,
        };
        check_paths(&tx, &shown)?;
        let journal_rel = sandbox
            .relative(&tx.journal_path)
            .unwrap_or_else(|| shown.clone());
        let (completed, fates) = match tx.journal.state {
            TxState::Prepared => (false, discard_prepared(&mut tx)),
            TxState::Committed => (true, finish_committed(&tx)?),
            TxState::RollingBack => {
                let n = tx.journal.entries.len();
                (false, roll_back(&mut tx, n))
            }
        };
        let settled = SettledApply {
            journal: journal_rel,
            completed,
            fates,
        };
        tracing::warn!(journal = %settled.journal, completed = settled.completed, files = %settled.fates, "settled an interrupted apply");
        recovery.settled.push(settled);
    }
    Ok(recovery)
}

/// The journals in the transaction directory, oldest first. A journal
/// whose own atomic write was killed left only its temp file: that apply
/// never prepared anything (journal first, then temps), so it goes.
fn journals(sandbox: &Sandbox) -> Vec<PathBuf> {
    let txn_dir = sandbox.root().join(TXN_DIR);
    let Ok(read) = std::fs::read_dir(&txn_dir) else {
        return Vec::new();
    };
    let entries: Vec<PathBuf> = read.filter_map(Result::ok).map(|e| e.path()).collect();
    for temp in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "tmp"))
    {
        let _ = std::fs::remove_file(temp);
    }
    let mut journals: Vec<PathBuf> = entries
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    journals.sort();
    journals
}

fn read_journal(path: &Path, shown: &str) -> Result<super::journal::Journal, ApplyError> {
    let bytes = std::fs::read(path).map_err(|e| ApplyError::Recovery {
        path: shown.to_owned(),
        problem: RecoveryProblem::Read(e),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ApplyError::Recovery {
        path: shown.to_owned(),
        problem: RecoveryProblem::Journal(e),
    })
}

/// A prepared apply never reached a target: its temps go, every file is
/// as it was.
fn discard_prepared(tx: &mut Tx<'_>) -> Fates {
    let fates = tx
        .journal
        .entries
        .iter()
        .map(|e| {
            let fate = if e.backup.is_some() {
                Fate::Unchanged
            } else {
                Fate::NotCreated
            };
            (e.target.clone(), fate)
        })
        .collect();
    tx.discard();
    Fates(fates)
}

/// A committed apply is finished: every temp still there is renamed over
/// its target.
fn finish_committed(tx: &Tx<'_>) -> Result<Fates, ApplyError> {
    let mut fates = Vec::new();
    for e in &tx.journal.entries {
        let temp = tx.abs(&e.temp);
        let target = tx.abs(&e.target);
        if temp.exists() {
            std::fs::rename(&temp, &target).map_err(|err| ApplyError::Recovery {
                path: e.target.clone(),
                problem: RecoveryProblem::Rename(err),
            })?;
            if let Some(parent) = target.parent() {
                let _ = fsync_dir(parent);
            }
        }
        let fate = if e.backup.is_some() {
            Fate::New
        } else {
            Fate::Created
        };
        fates.push((e.target.clone(), fate));
    }
    finish(tx);
    Ok(Fates(fates))
}

/// Journal paths were produced by the sandbox, but the journal is a file on
/// disk: every path is checked again, symlinks included.
fn check_paths(tx: &Tx<'_>, shown: &str) -> Result<(), ApplyError> {
    let journal = &tx.journal;
    let all_paths = journal
        .entries
        .iter()
        .flat_map(|e| [Some(&e.target), Some(&e.temp), e.backup.as_ref()])
        .flatten()
        .chain(journal.dirs.iter());
    for p in all_paths {
        let resolved = tx
            .sandbox
            .resolve_for_write(p)
            .map_err(|e| ApplyError::Recovery {
                path: shown.to_owned(),
                problem: RecoveryProblem::Path(e),
            })?;
        if resolved.rel != *p {
            return Err(ApplyError::Recovery {
                path: shown.to_owned(),
                problem: RecoveryProblem::Symlink(p.clone()),
            });
        }
    }
    Ok(())
}
