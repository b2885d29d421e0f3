//! Undo and rewind: which turn changed what, and putting it back.
//!
//! Each user turn appends a [`TurnRecord`] to the session's [`TurnLog`]
//! (`.north/sessions/<id>/turns.json`). Before the turn's first tool call
//! and at its end the agent snapshots the working tree
//! ([`north_tools::snapshot`]); a turn that calls no tool changes no file
//! and takes none. Undoing turn
//! `N` restores, path by path, what the tree held before `N` — for every
//! path a turn from `N` on changed, *including* changes made by shell
//! commands — and marks those turns undone.
//!
//! A path is never overwritten silently when the user changed it by hand:
//! [`plan_code_undo`] lists it as a [`Conflict`] with a diff, and
//! [`apply_code_undo`] refuses unless told to overwrite.
//!
//! This module must not talk to the model or render anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use north_protocol::State;
use north_tools::snapshot::{
    Entry, Manifest, RestoreReport, SnapshotError, SnapshotId, SnapshotStore, changed_paths,
    restore,
};
use serde::{Deserialize, Serialize};

use crate::store::{Session, write_atomic};

const TURNS_FILE: &str = "turns.json";

/// Where a project's snapshots live: `.north/snapshots`.
pub(crate) fn snapshot_dir(root: &Path) -> PathBuf {
    root.join(north_tools::repo::STATE_DIR).join("snapshots")
}

/// The most of a turn's input a record keeps for `/rewind`.
pub(crate) const INPUT_CHARS: usize = 20_000;

/// One user turn, as undo needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// The turn's number in this session (1, 2, …; never reused).
    pub turn: u32,
    /// When it started (seconds since the epoch).
    pub started_ts: f64,
    /// The start of what the user asked (secrets scrubbed).
    pub prompt: String,
    /// The tree before the turn's first tool call (None: it called none,
    /// so it changed no file).
    #[serde(default)]
    pub before: Option<SnapshotId>,
    /// The tree after it (None: it called no tool, or the process stopped
    /// mid-turn).
    pub after: Option<SnapshotId>,
    /// Messages in the conversation before the turn.
    pub messages_before: usize,
    /// Hash of those messages, to tell whether they are still the history.
    pub history_hash: String,
    /// The session log's length when the turn began: the conversation as
    /// it was then reads back from there, even after a condensation.
    #[serde(default)]
    pub log_offset: Option<u64>,
    /// The session state (NOTES) before the turn.
    pub state_before: State,
    /// Whether its file changes were undone.
    #[serde(default)]
    pub undone: bool,
    /// The whole of what the user asked (secrets scrubbed, at most
    /// [`INPUT_CHARS`]): what `/rewind` puts back in the composer. None in
    /// records older than it (then `prompt` is used).
    #[serde(default)]
    pub input: Option<String>,
}

/// What can be rewound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindScope {
    /// Files only.
    Code,
    /// The conversation only.
    Conversation,
    /// Both.
    Both,
}

/// Why undo could not be done.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// Reading or writing snapshots failed.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The turn log could not be read or written.
    #[error("cannot {op} {path}: {message}")]
    Log {
        /// What was being done.
        op: &'static str,
        /// The turn log.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Nothing to undo.
    #[error("nothing to undo: no turn of this session changed files that is not undone already")]
    Nothing,
    /// No such turn.
    #[error("no turn {0} in this session (see `north undo --list`)")]
    NoTurn(u32),
    /// The turn did not finish, so what it changed is unknown.
    #[error("turn {0} did not finish (North stopped during it); its changes cannot be told apart")]
    Unfinished(u32),
    /// Files changed by hand since; nothing was changed.
    #[error(
        "{} file(s) changed since North changed them: {}; nothing was restored (look at the diff, then overwrite with --force or /undo force)",
        .0.len(),
        .0.iter().map(|c| c.path.as_str()).collect::<Vec<_>>().join(", ")
    )]
    Conflicts(Vec<Conflict>),
    /// The conversation changed since that turn (condensed or rewound).
    #[error(
        "the conversation before turn {0} is no longer the session's history (it was condensed or rewound since); rewind the code only"
    )]
    HistoryChanged(u32),
}

/// A path the user changed by hand after North's turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The path, relative to the project root.
    pub path: String,
    /// What changed since North's turn, as a unified diff.
    pub diff: String,
}

/// The turns of one session.
#[derive(Debug, Clone)]
pub(crate) struct TurnLog {
    path: PathBuf,
    turns: Vec<TurnRecord>,
}

impl TurnLog {
    /// The turn log of `session` (empty when it has none yet).
    pub fn load(session: &Session) -> Result<TurnLog, UndoError> {
        let path = session.dir.join(TURNS_FILE);
        let turns = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| UndoError::Log {
                op: "read",
                path: path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(UndoError::Log {
                    op: "read",
                    path,
                    message: e.to_string(),
                });
            }
        };
        Ok(TurnLog { path, turns })
    }

    /// The turns, oldest first.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }

    /// The number the next turn gets.
    pub fn next_turn(&self) -> u32 {
        self.turns.last().map_or(1, |t| t.turn + 1)
    }

    /// Appends a turn and saves.
    pub fn push(&mut self, record: TurnRecord) -> Result<(), UndoError> {
        self.turns.push(record);
        self.save()
    }

    /// Records the tree before turn `turn`'s first tool call and saves.
    pub fn start(&mut self, turn: u32, before: SnapshotId) -> Result<(), UndoError> {
        if let Some(t) = self.turns.iter_mut().find(|t| t.turn == turn) {
            t.before = Some(before);
        }
        self.save()
    }

    /// Records the tree after turn `turn` and saves.
    pub fn finish(&mut self, turn: u32, after: SnapshotId) -> Result<(), UndoError> {
        if let Some(t) = self.turns.iter_mut().find(|t| t.turn == turn) {
            t.after = Some(after);
        }
        self.save()
    }

    /// The record of turn `turn`.
    pub fn get(&self, turn: u32) -> Option<&TurnRecord> {
        self.turns.iter().find(|t| t.turn == turn)
    }

    /// The last finished turn that is not undone yet.
    pub(crate) fn last_undoable(&self) -> Option<u32> {
        self.turns
            .iter()
            .rev()
            .find(|t| !t.undone && t.after.is_some())
            .map(|t| t.turn)
    }

    fn save(&self) -> Result<(), UndoError> {
        let err = |message: String| UndoError::Log {
            op: "write",
            path: self.path.clone(),
            message,
        };
        let bytes = serde_json::to_vec_pretty(&self.turns).map_err(|e| err(e.to_string()))?;
        write_atomic(&self.path, &bytes).map_err(|e| err(e.to_string()))
    }
}

/// What undoing a turn would do.
#[derive(Debug, Clone)]
pub struct CodePlan {
    /// The turn the tree goes back to the start of.
    pub turn: u32,
    /// The turns undone with it (it and every later one not undone yet).
    pub turns: Vec<u32>,
    /// Paths to put back.
    pub paths: BTreeSet<String>,
    /// Paths changed by hand since North changed them.
    pub conflicts: Vec<Conflict>,
    /// Paths undo will not touch: under `.git/` or `.north/`, or not a plain
    /// relative path (only a snapshot North did not take holds them).
    pub refused: Vec<String>,
    target: Manifest,
}

fn text_of(store: &SnapshotStore, entry: Option<&Entry>) -> Option<String> {
    match entry? {
        Entry::File { hash, .. } => store
            .blob(hash)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned()),
        Entry::Symlink { target } => Some(format!("symlink -> {target}\n")),
        Entry::Dir { .. } => Some("(directory)\n".into()),
        Entry::TooLarge { size, .. } => Some(format!("(large file, {size} bytes)\n")),
    }
}

/// How to undo turn `turn` and every later turn not undone yet: the tree
/// goes back to what it was before `turn`, for the paths those turns
/// changed. Paths that differ from what North left are conflicts.
pub(crate) fn plan_code_undo(
    store: &SnapshotStore,
    root: &Path,
    log: &TurnLog,
    turn: u32,
) -> Result<CodePlan, UndoError> {
    let first = log.get(turn).ok_or(UndoError::NoTurn(turn))?;
    if first.undone {
        return Err(UndoError::Nothing);
    }
    // A turn that called no tool changed nothing: the tree goes back to
    // where the first later turn that did began.
    let Some(target) = log
        .turns()
        .iter()
        .filter(|t| t.turn >= turn && !t.undone)
        .find_map(|t| t.before.as_ref())
    else {
        return Err(UndoError::Nothing);
    };
    let target = store.manifest(target)?;
    // What North left each path as: the state after the latest turn that changed it.
    let mut left: BTreeMap<String, Option<Entry>> = BTreeMap::new();
    let mut turns = Vec::new();
    for t in log.turns().iter().filter(|t| t.turn >= turn && !t.undone) {
        let Some(before) = &t.before else { continue };
        let after = t.after.as_ref().ok_or(UndoError::Unfinished(t.turn))?;
        let before = store.manifest(before)?;
        let after = store.manifest(after)?;
        for path in changed_paths(&before, &after) {
            let entry = after.entries.get(&path).cloned();
            left.insert(path, entry);
        }
        turns.push(t.turn);
    }
    let (now_id, _) = store.snapshot(root)?;
    let now = store.manifest(&now_id)?;
    let mut paths = BTreeSet::new();
    let mut conflicts = Vec::new();
    let mut refused = Vec::new();
    for (path, north_left) in &left {
        if !north_tools::snapshot::restorable(path) {
            refused.push(path.clone());
            continue;
        }
        let current = now.entries.get(path);
        if current == target.entries.get(path) {
            continue;
        }
        if current != north_left.as_ref() {
            let from = text_of(store, north_left.as_ref());
            let to = text_of(store, current);
            conflicts.push(Conflict {
                path: path.clone(),
                diff: north_tools::edit::text_diff(path, from.as_deref(), to.as_deref()),
            });
        }
        paths.insert(path.clone());
    }
    Ok(CodePlan {
        turn,
        turns,
        paths,
        conflicts,
        refused,
        target,
    })
}

/// Carries out `plan`; with conflicts, only when `overwrite` is set. Marks
/// the plan's turns undone.
pub(crate) fn apply_code_undo(
    store: &SnapshotStore,
    root: &Path,
    log: &mut TurnLog,
    plan: CodePlan,
    overwrite: bool,
) -> Result<RestoreReport, UndoError> {
    if !plan.conflicts.is_empty() && !overwrite {
        return Err(UndoError::Conflicts(plan.conflicts));
    }
    let report = restore(store, root, &plan.target, &plan.paths)?;
    for t in log
        .turns
        .iter_mut()
        .filter(|t| plan.turns.contains(&t.turn))
    {
        t.undone = true;
    }
    log.save()?;
    Ok(report)
}

/// The hash that pins a conversation prefix.
pub(crate) fn history_hash(messages: &[north_protocol::Message]) -> String {
    north_tools::edit::content_hash(&serde_json::to_vec(messages).unwrap_or_default())
}
