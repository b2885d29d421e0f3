//! Transactional tool execution: snapshot the session and the resources,
//! run the tool, and roll both back if it fails, errors or panics.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use north_protocol::ToolOutcome;

use super::{ResourceError, ScopedResourceContext};

/// Session state that can be saved and rolled back around a tool call.
pub trait SessionSnapshot {
    /// The saved form.
    type Snapshot;

    /// Saves the current state.
    fn snapshot(&self) -> Self::Snapshot;

    /// Rolls back to a saved state.
    fn restore(&mut self, snapshot: Self::Snapshot);
}

/// Why a transactional tool call did not succeed. In every case the session
/// and the resources were rolled back first.
#[derive(Debug, thiserror::Error)]
pub enum ToolTransactionError<E> {
    /// The tool ran and reported failure (`ok: false`).
    #[error("tool failed: {}", .0.error.as_deref().unwrap_or("no message"))]
    Failed(ToolOutcome),
    /// The tool returned an error.
    #[error("tool error: {0}")]
    Tool(E),
    /// Rolling the resources back failed (the session was restored); the
    /// tool's own failure is superseded by this one.
    #[error("tool failed and its resources could not be restored: {0}")]
    Restore(ResourceError),
}

/// Runs `tool` atomically with respect to `session` and `resources`: both
/// are snapshotted first and restored when the tool returns an error, a
/// failed outcome, or panics (the panic then continues).
pub fn execute_tool_transaction<S, E>(
    session: &mut S,
    resources: &ScopedResourceContext,
    tool: impl FnOnce(&mut S) -> Result<ToolOutcome, E>,
) -> Result<ToolOutcome, ToolTransactionError<E>>
where
    S: SessionSnapshot,
{
    let session_snapshot = session.snapshot();
    let resource_snapshot = resources
        .snapshot()
        .map_err(ToolTransactionError::Restore)?;
    let result = catch_unwind(AssertUnwindSafe(|| tool(&mut *session)));
    let failure = match result {
        Ok(Ok(outcome)) if outcome.ok => return Ok(outcome),
        Ok(Ok(outcome)) => Ok(ToolTransactionError::Failed(outcome)),
        Ok(Err(err)) => Ok(ToolTransactionError::Tool(err)),
        Err(panic) => Err(panic),
    };
    session.restore(session_snapshot);
    let restored = resources.restore(&resource_snapshot);
    match failure {
        Err(panic) => resume_unwind(panic),
        Ok(err) => Err(match restored {
            Ok(()) => err,
            Err(restore_err) => ToolTransactionError::Restore(restore_err),
        }),
    }
}
