//! Per-hunk review of an edit proposal: `]` and `[` move between hunks
//! (every file's, in order), `x` refuses the hunk under the cursor or takes
//! it back. Accept then applies only the hunks kept, and the model is told
//! which were refused; refused hunks are marked and dimmed in the review.

use crossterm::event::{KeyCode, KeyEvent};

use crate::app::{Action, App};
use crate::approver::PromptKind;
use crate::prompt::hunks;

impl App {
    /// The proposed contents of the edit under review: (path, content).
    pub(crate) fn proposed_files(&self) -> Vec<(String, String)> {
        match &self.pending {
            Some(p) if matches!(p.kind, PromptKind::Edit { .. }) => {
                p.review.proposed.as_ref().clone()
            }
            _ => Vec::new(),
        }
    }

    /// Accepts the edit under review as the user saved it in their editor.
    pub(crate) fn accept_edited(&mut self, saved: Vec<(String, String)>) {
        if let Some(p) = &self.pending
            && let Ok(mut slot) = p.review.edited.lock()
        {
            *slot = saved;
        }
        let _ = self.decide(north_protocol::ApprovalDecision::Accept);
    }

    /// A review key on an edit prompt; `None` when `key` is not one.
    pub(crate) fn review_key(&mut self, key: &KeyEvent) -> Option<Vec<Action>> {
        let p = self.pending.as_mut()?;
        let PromptKind::Edit { files } = &p.kind else {
            return None;
        };
        let total = hunks(files).len();
        if total == 0 {
            return None;
        }
        let last = total - 1;
        match key.code {
            KeyCode::Char(']') => p.hunk = Some(p.hunk.map_or(0, |h| (h + 1).min(last))),
            KeyCode::Char('[') => p.hunk = Some(p.hunk.map_or(0, |h| h.saturating_sub(1))),
            KeyCode::Char('e') => return Some(vec![Action::EditProposal]),
            KeyCode::Char('x') => {
                let h = p.hunk.unwrap_or(0);
                p.hunk = Some(h);
                if !p.refused.remove(&h) {
                    p.refused.insert(h);
                }
            }
            _ => return None,
        }
        // The view scrolls to the hunk under the cursor.
        p.follow_hunk = true;
        self.dirty = true;
        Some(Vec::new())
    }
}
