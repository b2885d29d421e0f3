//! The keys the user rebound (`keybindings` in their config): a key event
//! as a [`Chord`], and what its action does. A bound key wins over North's
//! default for it; `none` takes the default away.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use north_config::keys::{Chord, Key, KeyAction};

use crate::app::{Action, App};

/// `key` as the chord a binding names (None: a key no binding can name).
pub(crate) fn chord_of(key: &KeyEvent) -> Option<Chord> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let key = match key.code {
        // Shift is in the character itself.
        KeyCode::Char(c) => {
            return Some(Chord {
                ctrl,
                alt,
                shift: false,
                key: Key::Char(c.to_ascii_lowercase()),
            });
        }
        KeyCode::Enter => Key::Enter,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => {
            return Some(Chord {
                ctrl,
                alt,
                shift: true,
                key: Key::Tab,
            });
        }
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Delete => Key::Delete,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::F(n) => Key::F(n),
        _ => return None,
    };
    Some(Chord {
        ctrl,
        alt,
        shift,
        key,
    })
}

impl App {
    /// The user's action for `key`, run; `None` when they bound nothing to
    /// it (North's default applies).
    pub(crate) fn bound_key(&mut self, key: &KeyEvent) -> Option<Vec<Action>> {
        if self.keybindings.is_empty() || self.pending.is_some() || self.picker.is_some() {
            return None;
        }
        let action = self.keybindings.action(&chord_of(key)?)?;
        Some(match action {
            KeyAction::EditDraft => vec![Action::EditDraft],
            KeyAction::Suspend => vec![Action::Suspend],
            KeyAction::Transcript => vec![Action::Transcript],
            KeyAction::ClearScreen => vec![Action::ClearScreen],
            KeyAction::HistorySearch => {
                self.start_search();
                Vec::new()
            }
            KeyAction::Stash => {
                self.toggle_stash();
                Vec::new()
            }
            KeyAction::ModelPicker => self.model_picker(),
            KeyAction::Newline => {
                self.composer.newline();
                Vec::new()
            }
            KeyAction::Undo => {
                self.composer.undo();
                Vec::new()
            }
            KeyAction::None => Vec::new(),
        })
    }

    /// The user's bindings (from their configuration).
    pub fn set_keybindings(&mut self, bindings: north_config::keys::KeyBindings) {
        self.keybindings = bindings;
    }
}
