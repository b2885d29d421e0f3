//! Ctrl+R: reverse search through what was sent, as in a shell. The
//! composer shows the newest match while the query is typed; Ctrl+R again
//! goes to an older one; Enter keeps the match in the composer to edit or
//! send; Esc puts the draft back.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::{Action, App};
use crate::composer::HistorySearch;

impl App {
    /// Ctrl+R on the composer: starts a search.
    pub(crate) fn start_search(&mut self) {
        self.search = Some(HistorySearch {
            draft: self.composer.text(),
            ..HistorySearch::default()
        });
        self.popup = None;
        self.show_search();
    }

    /// A key while a search is open; `None` when it ended the search and
    /// the key is the composer's as usual.
    pub(crate) fn search_key(&mut self, key: &KeyEvent) -> Option<Vec<Action>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let search = self.search.as_mut()?;
        match key.code {
            KeyCode::Char('r') if ctrl => {
                // Older than the match shown; the query stays.
                let before = search.at;
                if let Some((i, text)) = self.composer.find(&search.query, before) {
                    let text = text.to_owned();
                    search.at = Some(i);
                    self.composer.set_text(&text);
                }
            }
            KeyCode::Esc | KeyCode::Char('g' | 'c') if key.code == KeyCode::Esc || ctrl => {
                let draft = std::mem::take(&mut search.draft);
                self.search = None;
                self.composer.set_text(&draft);
                self.hint = None;
                return Some(Vec::new());
            }
            KeyCode::Backspace => {
                search.query.pop();
                self.rematch();
            }
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                self.rematch();
            }
            KeyCode::Enter => {
                self.search = None;
                self.hint = None;
                return Some(Vec::new());
            }
            // Any other key keeps the match and acts on it.
            _ => {
                self.search = None;
                self.hint = None;
                return None;
            }
        }
        self.show_search();
        Some(Vec::new())
    }

    /// The newest match of the query, shown in the composer.
    fn rematch(&mut self) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        match self.composer.find(&search.query, None) {
            Some((i, text)) => {
                let text = text.to_owned();
                search.at = Some(i);
                self.composer.set_text(&text);
            }
            None => search.at = None,
        }
    }

    /// The search line under the composer.
    fn show_search(&mut self) {
        let Some(search) = &self.search else {
            return;
        };
        let found = if search.at.is_some() || search.query.is_empty() {
            ""
        } else {
            " (no match)"
        };
        self.hint = Some(format!(
            "history search: \"{}\"{found} · ctrl+r older · enter keep · esc cancel",
            search.query
        ));
        self.dirty = true;
    }
}
