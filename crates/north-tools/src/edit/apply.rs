//! Applying a proposal: atomic across every file of the batch, also when the
//! process is killed.
//!
//! A transaction goes through a journal in `.north/txn/<id>.json`:
//! 1. *prepared*: every new content is written to a temp file beside its
//!    target and fsynced; existing targets get a hard-linked backup.
//! 2. *committed* (the commit point): the journal says so, durably.
//! 3. Temp files are renamed over their targets, directories fsynced.
//! 4. Backups and the journal are removed.
//!
//! The whole apply runs under the project's [`ApplyLock`], so applies of two
//! processes never interleave. [`recover`](super::recover) (run first by
//! every apply and at every entry point's start) finishes what a killed
//! process left: a prepared transaction is rolled back (temps deleted,
//! targets were never touched), a committed one is rolled forward
//! (remaining temps renamed), one rolling back is rolled back from backups.
//! Each rename is atomic, so a file is always entirely old or entirely new.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::journal::{ApplyError, Entry, Journal, TXN_DIR, Tx, TxState, finish, roll_back};
use super::lock::ApplyLock;
use super::{Proposal, content_hash};
use crate::repo::atomic::{mode_for, write_synced};
use crate::repo::{fsync_dir, temp_path_for};
use crate::sandbox::Sandbox;

/// One written file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedFile {
    /// Path relative to the root.
    pub path: String,
    /// Bytes written.
    pub bytes: usize,
    /// Whether the file was created.
    pub created: bool,
}

/// The result of a successful apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Every file written, in proposal order.
    pub files: Vec<AppliedFile>,
}

impl Applied {
    /// `{"applied": true, "files": [{path, bytes, created}]}`.
    pub fn to_json(&self) -> Value {
        json!({ "applied": true, "files": self.files })
    }

    /// Total bytes written.
    pub fn bytes(&self) -> usize {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

/// Where a test interrupts an apply, as a kill would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Stop {
    /// Return right after the prepared temps are written.
    AfterPrepare,
    /// Return after the commit and this many renames.
    AfterRenames(usize),
    /// Fail the rename of this entry (to exercise the in-process rollback).
    FailRename(usize),
}

/// Writes `proposal` under `sandbox`: every file or none. Refuses (writing
/// nothing) when any file changed since the proposal was made.
pub fn apply(proposal: &Proposal, sandbox: &Sandbox) -> Result<Applied, ApplyError> {
    apply_inner(proposal, sandbox, None)
}

fn apply_inner(
    proposal: &Proposal,
    sandbox: &Sandbox,
    stop: Option<Stop>,
) -> Result<Applied, ApplyError> {
    let _lock = ApplyLock::acquire(&sandbox.root().join(TXN_DIR))?;
    let recovered = super::recover::recover_locked(sandbox)?;
    if !recovered.settled.is_empty() {
        tracing::warn!(%recovered, "recovered an interrupted apply before applying");
    }
    let tag = tx_tag();
    let mut entries = Vec::new();
    let mut targets = Vec::new();
    for file in &proposal.files {
        let resolved = sandbox.resolve_for_write(&file.path)?;
        check_base(&resolved.abs, &resolved.rel, file.base.as_deref())?;
        let temp = temp_path_for(&resolved.abs, &tag);
        let backup = file
            .base
            .as_ref()
            .map(|_| temp_path_for(&resolved.abs, &format!("{tag}-old")));
        let rel = |p: &Path| sandbox.relative(p).unwrap_or_default();
        entries.push(Entry {
            target: resolved.rel.clone(),
            temp: rel(&temp),
            backup: backup.as_deref().map(rel),
        });
        targets.push((resolved, file));
    }

    crate::repo::ensure_state_dir(sandbox.root())
        .map_err(|e| prepare_err("create", crate::repo::STATE_DIR, e))?;
    let txn_dir = sandbox.root().join(TXN_DIR);
    std::fs::create_dir_all(&txn_dir).map_err(|e| prepare_err("create", TXN_DIR, e))?;
    let mut tx = Tx {
        sandbox,
        journal_path: txn_dir.join(format!("{tag}.json")),
        journal: Journal {
            state: TxState::Prepared,
            entries,
            dirs: Vec::new(),
            owner: None,
        },
    };
    tx.journal.dirs = missing_dirs(sandbox, targets.iter().map(|(r, _)| r.abs.as_path()));
    tx.save()
        .map_err(|e| prepare_err("write journal", TXN_DIR, e))?;

    if let Err(e) = prepare(&tx, &targets) {
        tx.discard();
        return Err(e);
    }
    if stop == Some(Stop::AfterPrepare) {
        return Err(interrupted());
    }
    tx.journal.state = TxState::Committed;
    if let Err(e) = tx.save() {
        tx.discard();
        return Err(prepare_err("commit journal", TXN_DIR, e));
    }

    let mut synced_dirs = BTreeSet::new();
    for (i, entry) in tx.journal.entries.iter().enumerate() {
        if stop == Some(Stop::AfterRenames(i)) {
            return Err(interrupted());
        }
        let target = tx.abs(&entry.target);
        let renamed = if stop == Some(Stop::FailRename(i)) {
            Err(std::io::Error::other("injected failure"))
        } else {
            std::fs::rename(tx.abs(&entry.temp), &target)
        };
        if let Err(source) = renamed {
            let path = entry.target.clone();
            let fates = roll_back(&mut tx, i);
            return Err(ApplyError::RolledBack {
                path,
                source,
                fates,
            });
        }
        if let Some(parent) = target.parent() {
            synced_dirs.insert(parent.to_path_buf());
        }
    }
    for dir in &synced_dirs {
        let _ = fsync_dir(dir);
    }
    finish(&tx);
    Ok(Applied {
        files: targets
            .iter()
            .map(|(r, f)| AppliedFile {
                path: r.rel.clone(),
                bytes: f.new_content.len(),
                created: f.creates(),
            })
            .collect(),
    })
}

fn interrupted() -> ApplyError {
    prepare_err(
        "finish (interrupted by a test)",
        "",
        std::io::Error::other("interrupted"),
    )
}

fn prepare_err(op: &'static str, path: &str, source: std::io::Error) -> ApplyError {
    ApplyError::Prepare {
        op,
        path: path.to_owned(),
        source,
    }
}

fn check_base(abs: &Path, rel: &str, base: Option<&str>) -> Result<(), ApplyError> {
    let stale = || ApplyError::Stale {
        path: rel.to_owned(),
    };
    match (std::fs::read(abs), base) {
        (Ok(bytes), Some(hash)) if content_hash(&bytes) == hash => Ok(()),
        (Err(e), None) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        (Err(e), Some(_)) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(prepare_err("read", rel, e))
        }
        _ => Err(stale()),
    }
}

/// Directories (relative, outermost first) that must be created for the targets.
fn missing_dirs<'a>(sandbox: &Sandbox, targets: impl Iterator<Item = &'a Path>) -> Vec<String> {
    let mut dirs = BTreeSet::new();
    for target in targets {
        let mut dir = target.parent();
        while let Some(d) = dir {
            if d.exists() || !d.starts_with(sandbox.root()) {
                break;
            }
            if let Some(rel) = sandbox.relative(d) {
                dirs.insert(rel);
            }
            dir = d.parent();
        }
    }
    // Sorted paths put a parent before its children.
    dirs.into_iter().collect()
}

fn prepare(
    tx: &Tx<'_>,
    targets: &[(crate::sandbox::Resolved, &super::FileChange)],
) -> Result<(), ApplyError> {
    for dir in &tx.journal.dirs {
        std::fs::create_dir(tx.abs(dir))
            .or_else(|e| if tx.abs(dir).is_dir() { Ok(()) } else { Err(e) })
            .map_err(|e| prepare_err("create directory", dir, e))?;
    }
    for (entry, (resolved, file)) in tx.journal.entries.iter().zip(targets) {
        let mode = mode_for(&resolved.abs);
        write_synced(&tx.abs(&entry.temp), file.new_content.as_bytes(), mode)
            .map_err(|e| prepare_err("write a temp file for", &entry.target, e))?;
        if let Some(backup) = &entry.backup {
            std::fs::hard_link(&resolved.abs, tx.abs(backup))
                .map_err(|e| prepare_err("back up", &entry.target, e))?;
        }
    }
    let mut parents = BTreeSet::new();
    for (resolved, _) in targets {
        if let Some(p) = resolved.abs.parent() {
            parents.insert(p.to_path_buf());
        }
    }
    for dir in &parents {
        fsync_dir(dir).map_err(|e| prepare_err("fsync", &dir.display().to_string(), e))?;
    }
    Ok(())
}

fn tx_tag() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{}-{nanos}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "apply_tests.rs"]
mod tests;
