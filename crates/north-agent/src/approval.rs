//! Approvals: the exchange between the runtime and whoever decides (a
//! person in the TUI, flags in headless mode).

use futures::future::BoxFuture;
use north_protocol::{ApprovalDecision, Capability};
use north_tools::edit::Proposal;

/// What needs a decision.
#[derive(Debug, Clone, Copy)]
pub enum ApprovalRequest<'a> {
    /// A shell command not in the allowlist: RunOnce, Always or Deny.
    Shell {
        /// The exact command.
        command: &'a str,
    },
    /// An edit proposal: Accept or Reject.
    Edit {
        /// The proposal with its diffs.
        proposal: &'a Proposal,
    },
    /// A capability the model asked for: Grant or Deny.
    Capability {
        /// E.g. `net` or `net:example.com`.
        capability: &'a Capability,
        /// Why (tool call or NOTES request).
        reason: &'a str,
    },
}

/// Decides approval requests. Front ends implement it.
pub trait Approver: Send + Sync {
    /// The decision for `request` made for tool call `call_id`.
    fn decide<'a>(
        &'a self,
        call_id: &'a str,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, ApprovalDecision>;
}

/// Headless decisions from flags. Without flags everything is refused:
/// edits rejected, commands outside the allowlist denied, capabilities not
/// granted — each with a line on stderr saying which flag would allow it.
#[derive(Debug, Clone, Default)]
pub struct FlagApprover {
    /// `--approve-edits` / `--yes`.
    pub approve_edits: bool,
    /// `--allow-shell` / `--yes`.
    pub allow_shell: bool,
    /// `--grant CAP` values.
    pub grants: Vec<Capability>,
    /// Print refusals on stderr.
    pub explain: bool,
}

impl Approver for FlagApprover {
    fn decide<'a>(
        &'a self,
        _call_id: &'a str,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, ApprovalDecision> {
        let (decision, note) = match request {
            ApprovalRequest::Shell { command } if self.allow_shell => (
                ApprovalDecision::RunOnce,
                format!("running `{command}` (--allow-shell)"),
            ),
            ApprovalRequest::Shell { command } => (
                ApprovalDecision::Deny,
                format!(
                    "denied command `{command}`: not in .north/allowlist.json (pass --allow-shell or --yes to allow)"
                ),
            ),
            ApprovalRequest::Edit { .. } if self.approve_edits => {
                (ApprovalDecision::Accept, String::new())
            }
            ApprovalRequest::Edit { proposal } => (
                ApprovalDecision::Reject,
                format!(
                    "rejected edits to {}: headless edits need --approve-edits or --yes",
                    proposal
                        .files
                        .iter()
                        .map(|f| f.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            ApprovalRequest::Capability { capability, .. } if self.grants.contains(capability) => {
                (ApprovalDecision::Grant, String::new())
            }
            ApprovalRequest::Capability { capability, .. } => (
                ApprovalDecision::Deny,
                format!(
                    "capability `{capability}` not granted (pass --grant {capability} to allow)"
                ),
            ),
        };
        if self.explain && !note.is_empty() {
            eprintln!("north: {note}");
        }
        Box::pin(async move { decision })
    }
}
