//! The TUI's keys the user rebinds: `"keybindings": {"alt+e": "edit-draft",
//! "ctrl+s": "none"}` in a config file. A chord is modifiers (`ctrl`, `alt`,
//! `shift`) and a key joined by `+`; an action is one of [`KeyAction`]'s
//! names, `none` taking a key's default away. Checked when the file is
//! read, so a typo is an error naming the chord, never a silent no-op.

use std::fmt;

use serde::Serialize;

/// A key the TUI can bind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Key {
    /// A character key (lowercase for letters).
    Char(char),
    /// Enter.
    Enter,
    /// Tab.
    Tab,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// Delete.
    Delete,
    /// An arrow.
    Up,
    /// An arrow.
    Down,
    /// An arrow.
    Left,
    /// An arrow.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// A function key, 1–12.
    F(u8),
}

/// Modifiers and a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Chord {
    /// Ctrl held.
    pub ctrl: bool,
    /// Alt (Option, Meta) held.
    pub alt: bool,
    /// Shift held (for keys that are not characters).
    pub shift: bool,
    /// The key.
    pub key: Key,
}

/// What a bound key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyAction {
    /// Edit the draft in `$VISUAL`/`$EDITOR` (default Ctrl+G).
    EditDraft,
    /// Suspend North (default Ctrl+Z).
    Suspend,
    /// Search history (default Ctrl+R).
    HistorySearch,
    /// Stash the draft or bring it back (default Ctrl+S).
    Stash,
    /// The model list (default Alt+P).
    ModelPicker,
    /// The transcript view (default Ctrl+T).
    Transcript,
    /// Clear the screen (default Ctrl+L).
    ClearScreen,
    /// A newline in the draft (default Ctrl+J, Alt+Enter).
    Newline,
    /// Undo the last edit of the draft (default Ctrl+_).
    Undo,
    /// Nothing: the key's default is taken away.
    None,
}

impl KeyAction {
    const NAMES: &[(&str, KeyAction)] = &[
        ("edit-draft", KeyAction::EditDraft),
        ("suspend", KeyAction::Suspend),
        ("history-search", KeyAction::HistorySearch),
        ("stash", KeyAction::Stash),
        ("model-picker", KeyAction::ModelPicker),
        ("transcript", KeyAction::Transcript),
        ("clear-screen", KeyAction::ClearScreen),
        ("newline", KeyAction::Newline),
        ("undo", KeyAction::Undo),
        ("none", KeyAction::None),
    ];

    fn parse(name: &str) -> Option<KeyAction> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| *a)
    }

    /// Every action's name, for error messages and help.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Self::NAMES.iter().map(|(n, _)| *n)
    }
}

/// Why a binding cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingProblem {
    /// The chord names no key North knows.
    #[error("`{0}` is not a key (write modifiers and a key: `ctrl+g`, `alt+enter`, `f2`)")]
    Chord(String),
    /// The action is not one North has.
    #[error("`{action}` (for `{chord}`) is not an action; one of: {}", KeyAction::names().collect::<Vec<_>>().join(", "))]
    Action {
        /// The chord.
        chord: String,
        /// What was written.
        action: String,
    },
    /// The chord is one the TUI keeps (Ctrl+C, Ctrl+D, Enter, Esc).
    #[error("`{0}` cannot be rebound: it sends, stops or quits")]
    Reserved(String),
}

/// The user's bindings, in the order written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KeyBindings(Vec<(Chord, KeyAction)>);

impl KeyBindings {
    /// Checks every `(chord, action)` pair.
    pub fn parse<'a>(
        pairs: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<KeyBindings, BindingProblem> {
        let mut out = Vec::new();
        for (chord_text, action_text) in pairs {
            let chord = Chord::parse(chord_text)
                .ok_or_else(|| BindingProblem::Chord(chord_text.clone()))?;
            if chord.is_reserved() {
                return Err(BindingProblem::Reserved(chord_text.clone()));
            }
            let action = KeyAction::parse(action_text).ok_or_else(|| BindingProblem::Action {
                chord: chord_text.clone(),
                action: action_text.clone(),
            })?;
            out.push((chord, action));
        }
        Ok(KeyBindings(out))
    }

    /// A later file's bindings over these.
    pub fn extend(&mut self, later: KeyBindings) {
        for (chord, action) in later.0 {
            self.0.retain(|(c, _)| *c != chord);
            self.0.push((chord, action));
        }
    }

    /// What `chord` is bound to, if the user bound it.
    pub fn action(&self, chord: &Chord) -> Option<KeyAction> {
        self.0.iter().find(|(c, _)| c == chord).map(|(_, a)| *a)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> serde::Deserialize<'de> for KeyBindings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A map, its order kept: a later line for the same chord wins.
        let pairs: Vec<(String, String)> = serde_json::Map::deserialize(d)?
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => Ok((k, s)),
                other => Err(serde::de::Error::custom(format!(
                    "`{k}`: the action is a name in quotes, not {other}"
                ))),
            })
            .collect::<Result<_, _>>()?;
        KeyBindings::parse(pairs.iter().map(|(a, b)| (a, b))).map_err(serde::de::Error::custom)
    }
}

impl Chord {
    /// Parses `ctrl+alt+x`, `shift+tab`, `f5`, `alt+enter` (case-insensitive).
    pub fn parse(text: &str) -> Option<Chord> {
        let lower = text.trim().to_lowercase();
        let mut parts: Vec<&str> = lower.split('+').collect();
        // `ctrl++` binds the plus key.
        if lower.ends_with("++") {
            parts.pop();
            if let Some(last) = parts.last_mut() {
                *last = "+";
            }
        }
        let key = parts.pop()?;
        let mut chord = Chord {
            ctrl: false,
            alt: false,
            shift: false,
            key: Key::parse(key)?,
        };
        for m in parts {
            match m {
                "ctrl" | "control" | "c" => chord.ctrl = true,
                "alt" | "meta" | "option" | "opt" | "m" => chord.alt = true,
                "shift" | "s" => chord.shift = true,
                _ => return None,
            }
        }
        Some(chord)
    }

    /// Keys the TUI keeps: sending, stopping and quitting always work.
    fn is_reserved(&self) -> bool {
        let plain = !self.ctrl && !self.alt && !self.shift;
        matches!(
            (self.ctrl, self.key),
            (true, Key::Char('c')) | (true, Key::Char('d'))
        ) || (plain && matches!(self.key, Key::Enter | Key::Esc))
            // Typing: a character with no modifier but Shift.
            || (!self.ctrl && !self.alt && matches!(self.key, Key::Char(_)))
    }
}

impl Key {
    fn parse(text: &str) -> Option<Key> {
        Some(match text {
            "enter" | "return" => Key::Enter,
            "tab" => Key::Tab,
            "esc" | "escape" => Key::Esc,
            "backspace" => Key::Backspace,
            "delete" | "del" => Key::Delete,
            "up" => Key::Up,
            "down" => Key::Down,
            "left" => Key::Left,
            "right" => Key::Right,
            "home" => Key::Home,
            "end" => Key::End,
            "pageup" => Key::PageUp,
            "pagedown" => Key::PageDown,
            "space" => Key::Char(' '),
            f if f.starts_with('f') && f.len() > 1 => {
                let n: u8 = f[1..].parse().ok()?;
                if !(1..=12).contains(&n) {
                    return None;
                }
                Key::F(n)
            }
            c => {
                let mut chars = c.chars();
                let ch = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                Key::Char(ch)
            }
        })
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (on, name) in [
            (self.ctrl, "ctrl+"),
            (self.alt, "alt+"),
            (self.shift, "shift+"),
        ] {
            if on {
                f.write_str(name)?;
            }
        }
        match self.key {
            Key::Char(' ') => f.write_str("space"),
            Key::Char(c) => write!(f, "{c}"),
            Key::F(n) => write!(f, "f{n}"),
            other => write!(f, "{}", format!("{other:?}").to_lowercase()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
            .collect()
    }

    #[test]
    fn chords_and_actions_parse_and_mistakes_are_named() {
        let p = pairs(&[
            ("Alt+E", "edit-draft"),
            ("ctrl+s", "none"),
            ("f2", "model-picker"),
        ]);
        let b = KeyBindings::parse(p.iter().map(|(a, b)| (a, b))).unwrap();
        let alt_e = Chord::parse("alt+e").unwrap();
        assert_eq!(b.action(&alt_e), Some(KeyAction::EditDraft));
        assert_eq!(alt_e.to_string(), "alt+e");
        assert_eq!(
            b.action(&Chord::parse("ctrl+s").unwrap()),
            Some(KeyAction::None)
        );
        for (chord, action, says) in [
            ("ctrl+hyper+x", "stash", "is not a key"),
            ("ctrl+x", "explode", "is not an action"),
            ("ctrl+c", "stash", "cannot be rebound"),
            ("enter", "newline", "cannot be rebound"),
            ("q", "stash", "cannot be rebound"),
            ("f13", "stash", "is not a key"),
        ] {
            let p = pairs(&[(chord, action)]);
            let err = KeyBindings::parse(p.iter().map(|(a, b)| (a, b)))
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{chord} {action}: {err}");
        }
    }
}
