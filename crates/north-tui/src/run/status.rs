//! The user's status line command (`statusLine` in their config): run
//! when the session it describes changes, one run at a time, at most one
//! every [`STATUS_EVERY`]; its answer arrives as a message.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::approver::UiMsg;

use super::Loop;

/// The user's status line command and when it last ran.
pub(super) struct StatusProgram {
    line: Arc<north_runtime::StatusLine>,
    /// The session as it was last given to the command.
    last_input: Option<serde_json::Value>,
    /// A run is in flight (or in its pause after): one at a time, at most
    /// one every [`STATUS_EVERY`].
    running: Arc<AtomicBool>,
}

/// The least time between two runs of the status line command.
const STATUS_EVERY: Duration = Duration::from_millis(300);

impl StatusProgram {
    pub(super) fn new(line: Arc<north_runtime::StatusLine>) -> Self {
        StatusProgram {
            line,
            last_input: None,
            running: Arc::default(),
        }
    }
}

impl Loop {
    /// Runs the user's status line command when the session it describes
    /// changed since the last run, one run at a time; its answer arrives
    /// as a message, and the next frame looks again.
    pub(super) fn refresh_status(&mut self) {
        let Some(status) = &mut self.status else {
            return;
        };
        if status.running.load(Ordering::SeqCst) {
            return;
        }
        let input = self.app.status_json();
        if status.last_input.as_ref() == Some(&input) {
            return;
        }
        status.last_input = Some(input.clone());
        status.running.store(true, Ordering::SeqCst);
        let (line, running, tx) = (
            status.line.clone(),
            status.running.clone(),
            self.inbox.clone(),
        );
        tokio::spawn(async move {
            let started = Instant::now();
            let shown = line.render(&input).await.map_err(|e| e.to_string());
            tokio::time::sleep(STATUS_EVERY.saturating_sub(started.elapsed())).await;
            running.store(false, Ordering::SeqCst);
            let _ = tx.send(UiMsg::StatusLine(shown));
        });
    }
}
