//! A prompt on screen (a command, an edit review, a capability, the end
//! of a plan) and its options: what each key decides, and refusing with
//! words for the model.

use north_protocol::{ApprovalDecision, FileDiff, HunkRef};

use crate::approver::PromptKind;

/// A prompt on screen.
#[derive(Debug)]
pub(crate) struct Pending {
    pub call_id: String,
    pub kind: PromptKind,
    pub reply: Option<tokio::sync::oneshot::Sender<ApprovalDecision>>,
    pub selected: usize,
    pub scroll: usize,
    /// Where the words of a refusal go.
    pub feedback: crate::approver::FeedbackSlot,
    /// The user chose to refuse with feedback and is typing it in the
    /// composer: this decision is sent with the words on Enter.
    pub awaiting_feedback: Option<ApprovalDecision>,
    /// Turn time when the prompt appeared: the decision timer counts from
    /// here, not from the start of the turn.
    pub asked_at: std::time::Duration,
    /// An edit review's proposed contents, and where refused hunks and
    /// the user's own edits go.
    pub review: crate::approver::ReviewSlots,
    /// The hunk under the review's cursor (all files' hunks counted in
    /// order), once the user moved to one.
    pub hunk: Option<usize>,
    /// The hunks refused so far (same numbering).
    pub refused: std::collections::BTreeSet<usize>,
    /// The view scrolls to the hunk under the cursor (until the user
    /// scrolls themselves).
    pub follow_hunk: bool,
    /// Where the view scrolled to last, for a scroll that starts there.
    pub shown_scroll: std::cell::Cell<usize>,
}

/// What an option of a prompt does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Send this decision.
    Decide(ApprovalDecision),
    /// Ask for the user's reason, then send this refusal with it.
    Feedback(ApprovalDecision),
    /// Send this refusal and end the turn: North waits for the user.
    Stop(ApprovalDecision),
    /// Open the edit under review in the user's editor first.
    EditFirst,
}

impl Pending {
    /// An edit review's options: Accept (of how many hunks), Reject,
    /// Reject with words, and Edit then accept where the contents are known.
    fn edit_options(&self, files: &[FileDiff]) -> Vec<(String, &'static str, Choice)> {
        use Choice::{Decide, Feedback, Stop};
        let mut all: Vec<(String, &'static str, Choice)> = vec![
            ("Accept".into(), "y", Decide(ApprovalDecision::Accept)),
            ("Reject".into(), "n", Stop(ApprovalDecision::Reject)),
            (
                "Reject, telling North why".into(),
                "f",
                Feedback(ApprovalDecision::Reject),
            ),
        ];
        if !self.review.proposed.is_empty() {
            all.push(("Edit, then accept".into(), "e", Choice::EditFirst));
        }
        if !self.refused.is_empty() {
            let total = hunks(files).len();
            all[0].0 = format!(
                "Accept {} of {total} hunks",
                total.saturating_sub(self.refused.len())
            );
        }
        all
    }

    /// A prompt for `kind`, nothing chosen or scrolled yet.
    pub fn new(
        call_id: String,
        kind: PromptKind,
        reply: Option<tokio::sync::oneshot::Sender<ApprovalDecision>>,
        feedback: crate::approver::FeedbackSlot,
        review: crate::approver::ReviewSlots,
        asked_at: std::time::Duration,
    ) -> Self {
        Pending {
            call_id,
            kind,
            reply,
            selected: 0,
            scroll: 0,
            feedback,
            awaiting_feedback: None,
            asked_at,
            review,
            hunk: None,
            refused: Default::default(),
            follow_hunk: false,
            shown_scroll: Default::default(),
        }
    }

    /// (label, shortcut key, what it does) of each option.
    pub fn options(&self) -> Vec<(String, &'static str, Choice)> {
        use Choice::{Decide, Feedback, Stop};
        let fixed = |all: &[(&str, &'static str, Choice)]| -> Vec<(String, &'static str, Choice)> {
            all.iter()
                .map(|(l, k, c)| (l.to_string(), *k, *c))
                .collect()
        };
        match &self.kind {
            PromptKind::Shell { prefix, .. } => {
                let mut all = fixed(&[
                    ("Run this time", "1", Decide(ApprovalDecision::RunOnce)),
                    ("Always execute", "2", Decide(ApprovalDecision::Always)),
                    ("Deny", "3", Stop(ApprovalDecision::Deny)),
                ]);
                if let Some(prefix) = prefix {
                    all.push((
                        format!("Always allow `{prefix} …`"),
                        "4",
                        Decide(ApprovalDecision::AlwaysPrefix),
                    ));
                }
                all.push((
                    "Deny, telling North why".into(),
                    "f",
                    Feedback(ApprovalDecision::Deny),
                ));
                all
            }
            PromptKind::Unsandboxed { .. } => fixed(&[
                (
                    "Run once outside the sandbox",
                    "1",
                    Decide(ApprovalDecision::RunOnce),
                ),
                ("Keep it sandboxed", "2", Decide(ApprovalDecision::Deny)),
            ]),
            PromptKind::PlanReady => fixed(&[
                (
                    "Yes, asking as usual",
                    "1",
                    Decide(ApprovalDecision::RunOnce),
                ),
                (
                    "Yes, accepting edits",
                    "2",
                    Decide(ApprovalDecision::Accept),
                ),
                ("No, keep planning", "3", Decide(ApprovalDecision::Deny)),
            ]),
            PromptKind::Edit { files } => self.edit_options(files),
            PromptKind::Capability { capability, .. } if capability.starts_with("tool:") => {
                fixed(&[
                    ("Allow this session", "y", Decide(ApprovalDecision::Grant)),
                    (
                        "Always allow this tool",
                        "a",
                        Decide(ApprovalDecision::Always),
                    ),
                    ("Deny", "n", Stop(ApprovalDecision::Deny)),
                ])
            }
            // Deny refuses the command that host; the turn goes on (the
            // command reports it).
            PromptKind::Host { .. } => fixed(&[
                ("Allow this session", "y", Decide(ApprovalDecision::Grant)),
                ("Allow once", "o", Decide(ApprovalDecision::RunOnce)),
                (
                    "Always for this project",
                    "a",
                    Decide(ApprovalDecision::Always),
                ),
                ("Deny", "n", Decide(ApprovalDecision::Deny)),
            ]),
            // Deny refuses and ends the turn, as at every other prompt.
            PromptKind::Capability { .. } => fixed(&[
                ("Grant", "y", Decide(ApprovalDecision::Grant)),
                ("Deny", "n", Stop(ApprovalDecision::Deny)),
            ]),
        }
    }
}

/// Every hunk of `files` in the order the review shows them.
pub(crate) fn hunks(files: &[FileDiff]) -> Vec<HunkRef> {
    files
        .iter()
        .flat_map(|f| {
            let n = f.diff.lines().filter(|l| l.starts_with("@@")).count();
            (0..n).map(|hunk| HunkRef {
                path: f.path.clone(),
                hunk,
            })
        })
        .collect()
}

/// Puts the refused hunks of an accepted review where the approver reads
/// them.
pub(crate) fn hand_over(p: &Pending) {
    let PromptKind::Edit { files } = &p.kind else {
        return;
    };
    if p.refused.is_empty() {
        return;
    }
    let all = hunks(files);
    let refused: Vec<HunkRef> = p
        .refused
        .iter()
        .filter_map(|i| all.get(*i).cloned())
        .collect();
    if let Ok(mut slot) = p.review.hunks.lock() {
        *slot = refused;
    }
}
