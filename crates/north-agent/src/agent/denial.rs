//! What the model is told about a command the sandbox stopped: its output
//! (kept whole) with the denial the shell tool found
//! ([`north_tools::shell::ShellResult::sandbox_denied`]) and what follows.

use north_protocol::ToolOutcome;
use serde_json::json;

/// `outcome` (a command's output, kept whole) with the sandbox's denial and
/// what follows from it, for the model.
pub(super) fn with_denial(mut outcome: ToolOutcome, evidence: &str, next: &str) -> ToolOutcome {
    match outcome.output.as_object_mut() {
        Some(out) => {
            out.insert("sandboxDenied".into(), json!(evidence));
            out.insert(
                "note".into(),
                json!(format!("the OS sandbox stopped this command; {next}")),
            );
        }
        None => {
            outcome.error = Some(format!(
                "the OS sandbox stopped this command ({evidence}); {next}"
            ));
        }
    }
    outcome
}
