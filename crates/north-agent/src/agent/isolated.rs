//! Sub-agents in worktrees of their own: a sub-agent whose definition (or
//! call) says `isolation: worktree` works in a git worktree the front end
//! made for it, with its own shell, so parallel sub-agents run commands at
//! once and never edit each other's files. When it finishes, the parent
//! session proposes what it changed to the main tree as one diff review:
//! nothing reaches the main tree before the user accepts, and conflicts
//! keep git's markers for the user to resolve.

use std::sync::Arc;

use north_protocol::{Event, NoticeKind, ToolCall, ToolOutcome};
use north_worktree::{Change, Registry, Worktree};
use serde_json::{Value, json};

use super::{Agent, Emit, ModeKit};

/// A sub-agent's own place to work, made by the session's front end.
pub struct Isolated {
    /// The worktree.
    pub worktree: Worktree,
    /// Where North records it.
    pub registry: Registry,
    /// The tools' context rooted there, with a shell of its own.
    pub ctx: north_tools::ToolContext,
    /// The modes' shells rooted there.
    pub kit: ModeKit,
}

/// Makes a worktree for the sub-agent named by its argument.
pub type Isolator = Arc<dyn Fn(&str) -> Result<Isolated, String> + Send + Sync>;

/// The name of the review a worktree's changes come back through.
pub const MERGE_REVIEW: &str = "worktree_merge";

impl Agent {
    /// Proposes what `wt` changed to this session's tree as one review
    /// (the call `call_id` names it) and writes what the user accepts;
    /// what happened, as the model and the front end are told it. A
    /// worktree with nothing to bring back is removed.
    pub async fn merge_worktree(
        &mut self,
        wt: &Worktree,
        registry: &Registry,
        call_id: &str,
        emit: &Emit<'_>,
    ) -> Value {
        let changes = match north_worktree::changes(wt) {
            Ok(c) => c,
            Err(e) => return json!({"worktree": wt.name, "error": e.to_string()}),
        };
        if changes.is_empty() {
            let removed = north_worktree::remove(wt, registry, false).is_ok();
            return json!({"worktree": wt.name, "changes": 0, "removed": removed});
        }
        // Conflict markers reach the main tree only through a person's
        // review: headless, conflicts wait for `north worktree merge`.
        let plan = Plan::new(changes, self.services.approver.is_interactive());
        let mut report = json!({
            "worktree": wt.name,
            "path": wt.path.display().to_string(),
            "branch": wt.branch,
            "conflicts": plan.conflicts,
        });
        plan.announce(wt, emit);
        let (proposal, _) = north_worktree::as_proposal(&plan.reviewable);
        if proposal.files.is_empty() {
            report["note"] = json!(format!(
                "nothing was written: `north worktree merge {}` reviews what a text review cannot show{}",
                wt.name,
                plan.waiting(wt)
            ));
            return report;
        }
        let call = ToolCall {
            id: format!("{call_id}-merge"),
            name: MERGE_REVIEW.into(),
            arguments: json!({"worktree": wt.name}),
        };
        let outcome: ToolOutcome = self
            .call_env(emit)
            .review_and_apply(&call, proposal, plan.person && !plan.conflicts.is_empty())
            .await;
        report["accepted"] = json!(outcome.ok);
        report["review"] = outcome.error.map_or(outcome.output, Value::from);
        if outcome.ok {
            plan.finish(wt, registry, &mut report);
        }
        report["note"] = json!(format!(
            "the worktree stays at {} (branch {}) until `north worktree remove {}`{}",
            wt.path.display(),
            wt.branch,
            wt.name,
            plan.waiting(wt)
        ));
        report
    }
}

/// What of a worktree's changes goes into the review, and what not.
struct Plan {
    /// Whether a person answers the review.
    person: bool,
    /// The paths in conflict.
    conflicts: Vec<String>,
    /// The changes offered (conflicts only to a person).
    reviewable: Vec<Change>,
}

impl Plan {
    fn new(changes: Vec<Change>, person: bool) -> Plan {
        let conflicts = changes
            .iter()
            .filter(|c| c.kind.is_conflict())
            .map(|c| c.path.clone())
            .collect();
        let reviewable = changes
            .into_iter()
            .filter(|c| person || !c.kind.is_conflict())
            .collect();
        Plan {
            person,
            conflicts,
            reviewable,
        }
    }

    /// The offered changes a text review cannot carry: written with an
    /// accepted review (deletions, binary files), or never.
    fn beside_review(&self) -> (Vec<&Change>, Vec<&Change>) {
        self.reviewable
            .iter()
            .filter(|c| c.new.is_none() || !c.is_text())
            .partition(|c| c.kind.writable())
    }

    /// Says what comes back and how, before the review.
    fn announce(&self, wt: &Worktree, emit: &Emit<'_>) {
        let (others, never) = self.beside_review();
        if !others.is_empty() || !never.is_empty() {
            emit(Event::Notice {
                kind: NoticeKind::Worktree,
                message: format!(
                    "worktree {}: {} not in the review below; `north worktree merge` shows them",
                    wt.name,
                    describe(&others, &never),
                ),
            });
        }
        emit(Event::Notice {
            kind: NoticeKind::Worktree,
            message: format!(
                "Worktree {} (branch {}): what it changed, for this tree — nothing is written before you accept",
                wt.name, wt.branch
            ),
        });
    }

    /// What is said of conflicts left for `north worktree merge`.
    fn waiting(&self, wt: &Worktree) -> String {
        if self.person || self.conflicts.is_empty() {
            return String::new();
        }
        format!(
            "; the conflicts ({}) were not written: `north worktree merge {}` reviews them",
            self.conflicts.join(", "),
            wt.name
        )
    }

    /// After an accepted review: what reached the main tree noted for the
    /// next merge. Deletions and binary files were not in the review, so
    /// they are not written: `north worktree merge` asks for each.
    fn finish(&self, wt: &Worktree, registry: &Registry, report: &mut Value) {
        if let Err(e) = north_worktree::note_merged(wt, &self.reviewable, registry) {
            report["error"] = json!(e.to_string());
        }
        let (others, _) = self.beside_review();
        if !others.is_empty() {
            report["not_merged"] = json!(paths(others.iter().copied()));
        }
    }
}

fn paths<'a>(changes: impl Iterator<Item = &'a Change>) -> Vec<&'a str> {
    changes.map(|c| c.path.as_str()).collect()
}

/// The changes a text review cannot carry, in a few words.
fn describe(others: &[&Change], never: &[&Change]) -> String {
    let mut parts = Vec::new();
    if !others.is_empty() {
        parts.push(format!(
            "{} (deleted or binary: not written from here)",
            paths(others.iter().copied()).join(", ")
        ));
    }
    if !never.is_empty() {
        parts.push(format!(
            "{} (changed on both sides, never written for you)",
            paths(never.iter().copied()).join(", ")
        ));
    }
    parts.join("; ")
}
