//! Per-turn snapshots and the agent's side of undo and rewind (the
//! bookkeeping lives in [`crate::undo`]).

use north_protocol::{Event, NoticeKind, TraceKind};
use north_tools::snapshot::{RestoreReport, SnapshotStore};
use serde_json::json;

use super::{Agent, Emit};
use crate::store::now_ts;
use crate::undo::{
    CodePlan, RewindScope, TurnLog, TurnRecord, UndoError, apply_code_undo, history_hash,
    plan_code_undo, snapshot_dir,
};

/// Characters of the user's prompt kept in a turn record.
const PROMPT_CHARS: usize = 80;

/// Snapshots and the turn log, when the agent keeps them.
pub(super) struct Undo {
    pub(super) store: SnapshotStore,
    pub(super) log: TurnLog,
    /// The turn under way (snapshotted before, not after yet).
    open: Option<u32>,
}

/// What an undo or rewind did.
#[derive(Debug, Clone, Default)]
pub struct RewindReport {
    /// The turns whose file changes were undone.
    pub turns: Vec<u32>,
    /// What happened to files (None: code was not rewound).
    pub files: Option<RestoreReport>,
    /// Messages dropped from the conversation (None: it was not rewound).
    pub messages_dropped: Option<usize>,
}

impl Undo {
    pub(super) fn open(
        root: &std::path::Path,
        session: &crate::store::Session,
    ) -> Result<Undo, UndoError> {
        if north_tools::repo::state_dir_is_linked(root) {
            return Err(UndoError::Log {
                op: "use",
                path: root.join(north_tools::repo::STATE_DIR),
                message: "it is a symbolic link; North keeps snapshots only in a real directory"
                    .into(),
            });
        }
        Ok(Undo {
            store: SnapshotStore::open(&snapshot_dir(root))?,
            log: TurnLog::load(session)?,
            open: None,
        })
    }
}

impl Agent {
    /// Snapshots the tree off the async runtime: a big tree takes a while.
    pub(super) async fn take_snapshot(
        &self,
    ) -> Option<Result<north_tools::snapshot::SnapshotId, UndoError>> {
        let store = self.undo.as_ref()?.store.clone();
        let root = self.services.ctx.root.clone();
        let started = std::time::Instant::now();
        let done = tokio::task::spawn_blocking(move || store.snapshot(&root)).await;
        Some(match done {
            Ok(Ok((id, stats))) => {
                self.services.tracer.record(
                    TraceKind::Snapshot,
                    json!({"id": id.0, "entries": stats.entries, "hashed": stats.hashed, "bytes_written": stats.bytes_written, "full_walk": stats.full_walk, "by_watcher": stats.by_watcher, "ms": started.elapsed().as_millis() as u64}),
                );
                Ok(id)
            }
            Ok(Err(e)) => Err(e.into()),
            Err(e) => Err(UndoError::Log {
                op: "snapshot",
                path: self.services.ctx.root.clone(),
                message: e.to_string(),
            }),
        })
    }

    fn undo_unavailable(&self, e: &UndoError, emit: &Emit<'_>) {
        tracing::warn!(error = %e, "snapshot failed");
        emit(Event::Notice {
            kind: NoticeKind::UndoUnavailable,
            message: format!("this turn cannot be undone: {e}"),
        });
    }

    /// Before a user turn: where the conversation stands. The tree is
    /// snapshotted only once the turn calls a tool ([`Self::before_tools`]):
    /// a turn that only answers costs nothing, however big the tree.
    pub(super) fn begin_turn(&mut self, input: &str, emit: &Emit<'_>) {
        if self.undo.is_none() {
            return;
        }
        // When the log holds the conversation as it is (nothing changed
        // since the last sync), its length marks where this turn began.
        let log_offset =
            (self.conv.clean >= self.conv.messages.len()).then(|| self.conv.log.offset());
        let prompt: String = self
            .services
            .redactor
            .scrub(input.lines().next().unwrap_or(""))
            .chars()
            .take(PROMPT_CHARS)
            .collect();
        let record = TurnRecord {
            turn: 0,
            started_ts: now_ts(),
            prompt,
            before: None,
            after: None,
            messages_before: self.conv.messages.len(),
            history_hash: history_hash(&self.conv.messages),
            log_offset,
            state_before: self.conv.state.clone(),
            undone: false,
            input: Some(
                self.services
                    .redactor
                    .scrub(input)
                    .chars()
                    .take(crate::undo::INPUT_CHARS)
                    .collect(),
            ),
        };
        let Some(undo) = self.undo.as_mut() else {
            return;
        };
        let turn = undo.log.next_turn();
        match undo.log.push(TurnRecord { turn, ..record }) {
            Ok(()) => undo.open = Some(turn),
            Err(e) => self.undo_unavailable(&e, emit),
        }
    }

    /// The turn under way, and whether its tree before was snapshotted
    /// (it has called a tool).
    fn open_turn(&self) -> Option<(u32, bool)> {
        let undo = self.undo.as_ref()?;
        let turn = undo.open?;
        let started = undo.log.get(turn).is_some_and(|t| t.before.is_some());
        Some((turn, started))
    }

    /// Before a turn's first tool call: the tree as the turn found it.
    pub(super) async fn before_tools(&mut self, emit: &Emit<'_>) {
        let Some((turn, false)) = self.open_turn() else {
            return;
        };
        let Some(result) = self.take_snapshot().await else {
            return;
        };
        let Some(undo) = self.undo.as_mut() else {
            return;
        };
        let saved = result.and_then(|before| undo.log.start(turn, before));
        if let Err(e) = saved {
            // No tree before: the turn cannot be undone, and is not
            // snapshotted after either.
            undo.open = None;
            self.undo_unavailable(&e, emit);
        }
    }

    /// After a user turn: the tree it left, when it called a tool.
    pub(super) async fn end_turn_snapshot(&mut self, emit: &Emit<'_>) {
        let Some((_, started)) = self.open_turn() else {
            return;
        };
        if !started {
            if let Some(undo) = self.undo.as_mut() {
                undo.open = None;
            }
            return;
        }
        let Some(result) = self.take_snapshot().await else {
            return;
        };
        let Some(undo) = self.undo.as_mut() else {
            return;
        };
        let Some(turn) = undo.open.take() else {
            return;
        };
        let saved = result.and_then(|after| undo.log.finish(turn, after));
        if let Err(e) = saved {
            self.undo_unavailable(&e, emit);
        }
    }

    /// The session's turns, oldest first (empty when snapshots are off).
    pub fn turns(&self) -> &[TurnRecord] {
        self.undo.as_ref().map_or(&[], |u| u.log.turns())
    }

    /// What undoing `turn` (default: the last turn not undone) would
    /// restore, and which files were changed by hand since.
    pub fn plan_undo(&self, turn: Option<u32>) -> Result<CodePlan, UndoError> {
        let undo = self.undo.as_ref().ok_or(UndoError::Nothing)?;
        let turn = turn
            .or_else(|| undo.log.last_undoable())
            .ok_or(UndoError::Nothing)?;
        plan_code_undo(&undo.store, &self.services.ctx.root, &undo.log, turn)
    }

    /// Rewinds to the start of `turn` (default: the last turn not undone):
    /// its files and every later turn's (`Code`), the conversation
    /// (`Conversation`), or both. Files changed by hand since are refused
    /// unless `overwrite`; nothing changes when anything is refused.
    pub fn rewind(
        &mut self,
        turn: Option<u32>,
        scope: RewindScope,
        overwrite: bool,
    ) -> Result<RewindReport, UndoError> {
        let undo = self.undo.as_ref().ok_or(UndoError::Nothing)?;
        let turn = match turn {
            Some(t) => t,
            None => undo.log.last_undoable().ok_or(UndoError::Nothing)?,
        };
        let record = undo.log.get(turn).ok_or(UndoError::NoTurn(turn))?.clone();
        let wants_history = scope != RewindScope::Code;
        let n = record.messages_before;
        let same = |messages: &[north_protocol::Message]| {
            n <= messages.len() && history_hash(&messages[..n]) == record.history_hash
        };
        // The conversation the turn began with: the current one cut short,
        // or — condensed since — read back from the log where it began.
        let past = match wants_history && !same(&self.conv.messages) {
            false => None,
            true => Some(
                record
                    .log_offset
                    .and_then(|at| crate::store::log::replay_prefix(self.conv.log.path(), at).ok())
                    .filter(|past| same(&past.messages))
                    .ok_or(UndoError::HistoryChanged(turn))?,
            ),
        };
        let mut report = RewindReport::default();
        if scope != RewindScope::Conversation {
            match self.plan_undo(Some(turn)) {
                Ok(plan) => {
                    report.turns = plan.turns.clone();
                    let undo = self.undo.as_mut().ok_or(UndoError::Nothing)?;
                    report.files = Some(apply_code_undo(
                        &undo.store,
                        &self.services.ctx.root,
                        &mut undo.log,
                        plan,
                        overwrite,
                    )?);
                }
                // The code is back already (`/undo` came first): the
                // conversation still rewinds.
                Err(UndoError::Nothing) if wants_history => {}
                Err(e) => return Err(e),
            }
        }
        if wants_history {
            report.messages_dropped = Some(self.restore_history(n, past, &record.state_before)?);
        }
        self.services.tracer.record(
            TraceKind::Undo,
            json!({
                "turn": turn,
                "scope": format!("{scope:?}").to_lowercase(),
                "turns_undone": report.turns,
                "files_written": report.files.as_ref().map(|f| f.written.len()),
                "files_removed": report.files.as_ref().map(|f| f.removed.len()),
                "messages_dropped": report.messages_dropped,
            }),
        );
        Ok(report)
    }

    /// The conversation back to its first `n` messages (from `past` when it
    /// was condensed since) and the session state to `state`; saved.
    /// Returns how many messages were dropped.
    fn restore_history(
        &mut self,
        n: usize,
        past: Option<crate::store::Replayed>,
        state: &north_protocol::State,
    ) -> Result<usize, UndoError> {
        let dropped = self.conv.messages.len().saturating_sub(n);
        match past {
            Some(mut past) => {
                past.messages.truncate(n);
                self.conv.messages = past.messages.clone();
                self.conv.revision += 1;
                match self.conv.log.restored(self.conv.revision, &past) {
                    Ok(()) => self.conv.clean = self.conv.messages.len(),
                    Err(_) => self.touched(0),
                }
            }
            None => {
                self.conv.messages.truncate(n);
                self.touched(n);
            }
        }
        self.conv.state = state.clone();
        self.checkpoint().map_err(|e| UndoError::Log {
            op: "save the session after rewinding",
            path: self.conv.session.dir.clone(),
            message: e.to_string(),
        })?;
        Ok(dropped)
    }
}
