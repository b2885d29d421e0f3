//! Approvals: the exchange between the runtime and whoever decides (a
//! person in the TUI, flags in headless mode).

use futures::future::BoxFuture;
pub use north_policy::AskReason;
use north_protocol::{ApprovalDecision, Capability, FileDiff};
use north_tools::edit::Proposal;

/// What needs a decision.
#[derive(Debug, Clone, Copy)]
pub enum ApprovalRequest<'a> {
    /// A shell command the command policy leaves to the user: RunOnce,
    /// Always or Deny.
    Shell {
        /// The exact command.
        command: &'a str,
        /// Why it was not allowed without asking.
        reason: &'a AskReason,
        /// The family an "Always allow" choice would cover (`cargo test`),
        /// when the policy would offer one; the agent, not the front end,
        /// decides it.
        prefix: Option<&'a str>,
    },
    /// An edit proposal: Accept or Reject.
    Edit {
        /// The proposal with its diffs.
        proposal: &'a Proposal,
        /// Its files as a reviewer sees them (what front ends render).
        files: &'a [FileDiff],
    },
    /// A capability the model asked for: Grant or Deny.
    Capability {
        /// E.g. `net` or `net:example.com`.
        capability: &'a Capability,
        /// Why (tool call or NOTES request).
        reason: &'a str,
    },
    /// A sandboxed command connects, through North's proxy, to a host no
    /// grant covers: RunOnce (this connection), Grant (the session) or
    /// Deny (the command is refused it; the turn goes on).
    Host {
        /// The host asked for.
        host: &'a str,
        /// Its port.
        port: u16,
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

    /// Whether commands the policy can verify run without asking
    /// (`--allow-shell`, `--yes`). The policy still asks for the rest.
    fn auto_approves_shell(&self) -> bool {
        false
    }

    /// Whether a person answers (false: flags decide). A refusal is then
    /// reported as the user's, not as a missing approval.
    fn is_interactive(&self) -> bool {
        true
    }

    /// Whether a person at North's own terminal answers, who may let a
    /// command the sandbox stopped run once outside it. Never an editor
    /// (it may accept such a request on its own) and never flags.
    fn may_leave_sandbox(&self) -> bool {
        false
    }

    /// What the user said when refusing call `call_id` ("reject with
    /// feedback"), taken once: it goes to the model with the refusal.
    fn feedback(&self, _call_id: &str) -> Option<String> {
        None
    }

    /// Files of call `call_id`'s edits as the user saved them in their
    /// editor before accepting ("edit before accepting"): (path, content),
    /// taken once; empty: the proposal as it was.
    fn edited(&self, _call_id: &str) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The hunks of call `call_id`'s edits the user refused while
    /// accepting the rest (per-hunk review), taken once; empty: all kept.
    fn refused_hunks(&self, _call_id: &str) -> Vec<north_protocol::HunkRef> {
        Vec::new()
    }
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
            // Commands `--allow-shell` covers never reach here: the policy
            // allowed them. What is left needs a person.
            ApprovalRequest::Shell {
                command, reason, ..
            } => (
                ApprovalDecision::Deny,
                shell_refusal(command, reason, self.allow_shell),
            ),
            ApprovalRequest::Edit { .. } if self.approve_edits => {
                (ApprovalDecision::Accept, String::new())
            }
            ApprovalRequest::Edit { proposal, .. } => (
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
            ApprovalRequest::Host { host, .. } => (
                ApprovalDecision::Deny,
                format!("a command was refused {host} (pass --grant net:{host} to allow)"),
            ),
        };
        if self.explain && !note.is_empty() {
            eprintln!("north: {note}");
        }
        Box::pin(async move { decision })
    }

    fn auto_approves_shell(&self) -> bool {
        self.allow_shell
    }

    fn is_interactive(&self) -> bool {
        false
    }
}

/// Why a headless run did not run `command`, and what would let it.
pub fn shell_refusal(command: &str, reason: &AskReason, allow_shell: bool) -> String {
    match reason {
        AskReason::SandboxDenied(evidence) => format!(
            "not run outside the sandbox: `{command}` failed inside it ({evidence}); a headless run never leaves the sandbox — run it yourself, or in the interactive assistant where you can allow it once"
        ),
        AskReason::NotApproved if !allow_shell => format!(
            "not run: `{command}` has no allow rule (pass --allow-shell or --yes, or add it to .north/allowlist.json in a trusted project)"
        ),
        other => format!(
            "not run: `{command}`: {other}; --allow-shell runs only commands North can verify stay in the project (approve it in the interactive assistant, or add the exact command to .north/allowlist.json in a trusted project)"
        ),
    }
}
