//! Per-hunk review of an edit proposal: `]` and `[` move between hunks
//! (every file's, in order), `x` refuses the hunk under the cursor or takes
//! it back. Accept then applies only the hunks kept, and the model is told
//! which were refused; refused hunks are marked and dimmed in the review.

use crossterm::event::{KeyCode, KeyEvent};

use crate::app::App;
use crate::approver::PromptKind;
use crate::prompt::hunks;

impl App {
    /// A review key on an edit prompt; `false` when `key` is not one.
    pub(crate) fn review_key(&mut self, key: &KeyEvent) -> bool {
        let Some(p) = self.pending.as_mut() else {
            return false;
        };
        let PromptKind::Edit { files } = &p.kind else {
            return false;
        };
        let total = hunks(files).len();
        if total == 0 {
            return false;
        }
        let last = total - 1;
        match key.code {
            KeyCode::Char(']') => p.hunk = Some(p.hunk.map_or(0, |h| (h + 1).min(last))),
            KeyCode::Char('[') => p.hunk = Some(p.hunk.map_or(0, |h| h.saturating_sub(1))),
            KeyCode::Char('x') => {
                let h = p.hunk.unwrap_or(0);
                p.hunk = Some(h);
                if !p.refused.remove(&h) {
                    p.refused.insert(h);
                }
            }
            _ => return false,
        }
        // The view scrolls to the hunk under the cursor.
        p.follow_hunk = true;
        self.dirty = true;
        true
    }
}
