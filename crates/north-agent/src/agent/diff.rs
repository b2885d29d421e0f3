//! `/diff`: what this session changed in the working tree — the tree
//! before its first turn against the tree now, file by file, as unified
//! diffs (edits and shell commands' changes alike, from the undo
//! snapshots).

use north_tools::snapshot::{Entry, changed_paths};

use super::Agent;
use crate::undo::UndoError;

/// Bytes of one file's contents compared at most; bigger files are named.
const MAX_DIFFED: u64 = 1024 * 1024;

/// What the session changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionDiff {
    /// Unified diffs of changed text files, in path order.
    pub diff: String,
    /// Every changed path.
    pub paths: Vec<String>,
    /// Changed paths shown by name only (binary, too big, links).
    pub not_shown: Vec<String>,
}

/// Why there is no diff to show.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// Snapshots are off or failed, so North cannot tell.
    #[error(
        "North keeps no snapshots in this session (undo is off), so it cannot tell what changed; `git diff` shows the working tree"
    )]
    NoSnapshots,
    /// Reading the snapshots failed.
    #[error(transparent)]
    Undo(#[from] UndoError),
}

fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

impl Agent {
    /// The changes since this session's first turn began (empty before any
    /// turn).
    pub async fn session_diff(&self) -> Result<SessionDiff, DiffError> {
        let undo = self.undo.as_ref().ok_or(DiffError::NoSnapshots)?;
        // Turns that called no tool changed nothing: the tree as the first
        // turn that called one found it.
        let Some(first) = undo.log.turns().iter().find_map(|t| t.before.as_ref()) else {
            return Ok(SessionDiff::default());
        };
        let before = undo.store.manifest(first).map_err(UndoError::from)?;
        let now_id = match self.take_snapshot().await {
            Some(Ok(id)) => id,
            Some(Err(e)) => return Err(e.into()),
            None => return Err(DiffError::NoSnapshots),
        };
        let now = undo.store.manifest(&now_id).map_err(UndoError::from)?;
        let mut out = SessionDiff::default();
        for path in changed_paths(&before, &now) {
            let content = |entry: Option<&Entry>| -> Result<Option<Option<String>>, UndoError> {
                match entry {
                    None => Ok(Some(None)),
                    Some(Entry::File { hash, size, .. }) if *size <= MAX_DIFFED => {
                        Ok(text_of(undo.store.blob(hash)?).map(Some))
                    }
                    Some(Entry::Dir { .. }) => Ok(Some(None)),
                    Some(_) => Ok(None),
                }
            };
            let old = content(before.entries.get(&path))?;
            let new = content(now.entries.get(&path))?;
            let dirs = matches!(before.entries.get(&path), Some(Entry::Dir { .. }) | None)
                && matches!(now.entries.get(&path), Some(Entry::Dir { .. }) | None);
            if dirs {
                continue;
            }
            out.paths.push(path.clone());
            match (old, new) {
                (Some(old), Some(new)) => out.diff.push_str(&north_tools::edit::text_diff(
                    &path,
                    old.as_deref(),
                    new.as_deref(),
                )),
                _ => out.not_shown.push(path),
            }
        }
        Ok(out)
    }
}
