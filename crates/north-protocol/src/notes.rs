//! The NOTES patch protocol (runtime-contracts §2): parsing a patch, applying
//! it to [`State`], and the actions it may carry.
//!
//! A model can *request* a capability but never grant one: the runtime turns
//! a model-emitted `grant_permission` into a request the user decides.

use crate::{Capability, State};
use serde_json::{Map, Value};
use thiserror::Error;

/// A parsed NOTES payload. `None` / empty means "no change".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotesPatch {
    /// Replaces the goals.
    pub set_goals: Option<Vec<String>>,
    /// Appended to open loops.
    pub add_open_loops: Vec<String>,
    /// Removed from open loops.
    pub close_open_loops: Vec<String>,
    /// Appended to decisions.
    pub add_decisions: Vec<String>,
    /// Appended to constraints.
    pub add_constraints: Vec<String>,
    /// Replaces the episode summary.
    pub set_episode_summary: Option<String>,
    /// Appended to memory tags.
    pub add_memory_tags: Vec<String>,
    /// Actions to run after the patch is applied.
    pub actions: Vec<Action>,
    /// Keys the protocol does not define (ignored, reported for tracing).
    pub unknown_keys: Vec<String>,
}

/// An action named in a NOTES block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Condense the context now.
    CondenseNow,
    /// Condense if worthwhile.
    CondenseSmart,
    /// Ask the user for a capability.
    RequestPermission(Capability),
    /// The model asks to grant a capability; only the user can.
    GrantPermission(Capability),
    /// A permission action naming no capability (`request_permission:`):
    /// ignored and traced with its own reason.
    EmptyCapability(String),
    /// Anything else: ignored and traced.
    Unknown(String),
}

impl Action {
    /// Parses one action string, exactly as written: a known name with
    /// space around it is not that name (the reference's rule).
    pub fn parse(s: &str) -> Action {
        let empty = ["request_permission:", "grant_permission:"]
            .iter()
            .any(|prefix| s.strip_prefix(prefix) == Some(""));
        if empty {
            return Action::EmptyCapability(s.to_string());
        }
        match s {
            "condense_now" => Action::CondenseNow,
            "condense_smart" => Action::CondenseSmart,
            _ => {
                if let Some(cap) = s
                    .strip_prefix("request_permission:")
                    .filter(|c| valid_capability(c))
                {
                    Action::RequestPermission(Capability::lenient(cap))
                } else if let Some(cap) = s
                    .strip_prefix("grant_permission:")
                    .filter(|c| valid_capability(c))
                {
                    Action::GrantPermission(Capability::lenient(cap))
                } else {
                    Action::Unknown(s.to_string())
                }
            }
        }
    }

    /// The action as written in the protocol.
    pub fn as_protocol(&self) -> String {
        match self {
            Action::CondenseNow => "condense_now".into(),
            Action::CondenseSmart => "condense_smart".into(),
            Action::RequestPermission(c) => format!("request_permission:{c}"),
            Action::GrantPermission(c) => format!("grant_permission:{c}"),
            Action::EmptyCapability(s) | Action::Unknown(s) => s.clone(),
        }
    }
}

/// Whether `cap` is a well-formed capability: `net`, or `net:<domain>`, or
/// another lowercase token of letters, digits, `.`, `-`, `_`, `:`.
pub fn valid_capability(cap: &str) -> bool {
    !cap.is_empty()
        && cap.len() <= 200
        && cap.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_' | ':')
        })
        && !cap.starts_with(':')
        && !cap.ends_with(':')
}

/// Why a NOTES block was rejected. A rejected block changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotesError {
    /// Not JSON.
    #[error("NOTES block is not valid JSON: {0}")]
    Json(String),
    /// Not an object.
    #[error("NOTES block must be a JSON object")]
    NotObject,
    /// A key has the wrong type.
    #[error("NOTES key `{key}` must be {expected}")]
    WrongType {
        /// The key.
        key: String,
        /// What it must be.
        expected: &'static str,
    },
    /// The end marker never came.
    #[error("NOTES block has no end marker")]
    Unterminated,
}

fn strings(map: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, NotesError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or(NotesError::WrongType {
                key: key.into(),
                expected: "a list of strings",
            }),
        Some(_) => Err(NotesError::WrongType {
            key: key.into(),
            expected: "a list of strings",
        }),
    }
}

const KEYS: &[&str] = &[
    "set_goals",
    "add_open_loops",
    "close_open_loops",
    "add_decisions",
    "add_constraints",
    "set_episode_summary",
    "add_memory_tags",
    "actions",
];

impl NotesPatch {
    /// Parses a block body. Every key is checked before anything applies.
    pub fn parse(body: &str) -> Result<NotesPatch, NotesError> {
        let value: Value =
            serde_json::from_str(body.trim()).map_err(|e| NotesError::Json(e.to_string()))?;
        let map = value.as_object().ok_or(NotesError::NotObject)?;
        let set_episode_summary = match map.get("set_episode_summary") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(NotesError::WrongType {
                    key: "set_episode_summary".into(),
                    expected: "a string",
                });
            }
        };
        Ok(NotesPatch {
            set_goals: strings(map, "set_goals")?,
            add_open_loops: strings(map, "add_open_loops")?.unwrap_or_default(),
            close_open_loops: strings(map, "close_open_loops")?.unwrap_or_default(),
            add_decisions: strings(map, "add_decisions")?.unwrap_or_default(),
            add_constraints: strings(map, "add_constraints")?.unwrap_or_default(),
            set_episode_summary,
            add_memory_tags: strings(map, "add_memory_tags")?.unwrap_or_default(),
            actions: strings(map, "actions")?
                .unwrap_or_default()
                .iter()
                .map(|a| Action::parse(a))
                .collect(),
            unknown_keys: map
                .keys()
                .filter(|k| !KEYS.contains(&k.as_str()))
                .cloned()
                .collect(),
        })
    }

    /// Applies the patch to `state` (absent keys change nothing; additions are de-duplicated).
    pub fn apply(&self, state: &mut State) {
        if let Some(goals) = &self.set_goals {
            state.goals = dedup(goals.clone());
        }
        extend_unique(&mut state.open_loops, &self.add_open_loops);
        state
            .open_loops
            .retain(|l| !self.close_open_loops.contains(l));
        extend_unique(&mut state.decisions, &self.add_decisions);
        extend_unique(&mut state.constraints, &self.add_constraints);
        if let Some(summary) = &self.set_episode_summary {
            state.episode_summary = summary.clone();
        }
        extend_unique(&mut state.memory_tags, &self.add_memory_tags);
    }
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn extend_unique(list: &mut Vec<String>, items: &[String]) {
    for i in items {
        if !list.contains(i) {
            list.push(i.clone());
        }
    }
}

/// Records a capability request; a granted capability is never pending.
/// Returns whether the request is new.
pub fn request_capability(state: &mut State, cap: &Capability) -> bool {
    if state.capabilities_granted.contains(cap) || state.capabilities_pending.contains(cap) {
        return false;
    }
    state.capabilities_pending.push(cap.clone());
    true
}

/// Grants a capability (call only on the user's decision): adds it to
/// granted and removes it from pending.
pub fn grant_capability(state: &mut State, cap: &Capability) {
    if !state.capabilities_granted.contains(cap) {
        state.capabilities_granted.push(cap.clone());
    }
    state.capabilities_pending.retain(|c| c != cap);
}

/// Removes a pending request the user denied.
pub fn deny_capability(state: &mut State, cap: &Capability) {
    state.capabilities_pending.retain(|c| c != cap);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_keys_change_nothing_and_lists_dedupe() {
        let mut s = State {
            goals: vec!["keep".into()],
            open_loops: vec!["a".into()],
            ..Default::default()
        };
        let p = NotesPatch::parse(
            r#"{"add_open_loops":["a","b"],"close_open_loops":["a"],"add_decisions":["d","d"]}"#,
        )
        .unwrap();
        p.apply(&mut s);
        assert_eq!(s.goals, vec!["keep"]);
        assert_eq!(s.open_loops, vec!["b"]);
        assert_eq!(s.decisions, vec!["d"]);
    }

    #[test]
    fn wrong_types_reject_the_whole_block() {
        for bad in [
            r#"{"set_goals":"g"}"#,
            r#"{"add_decisions":[1]}"#,
            r#"{"set_episode_summary":["x"]}"#,
            r#"{"actions":[{"a":1}]}"#,
            r#"[]"#,
            r#"{"set_goals":["ok"],"add_constraints":[null]}"#,
            "not json",
        ] {
            assert!(NotesPatch::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn actions_parse_and_unknowns_are_kept_for_tracing() {
        let p = NotesPatch::parse(r#"{"actions":["condense_now","condense_smart","request_permission:net:huggingface.co","grant_permission:net","dance"],"mood":"happy"}"#).unwrap();
        assert_eq!(
            p.actions,
            vec![
                Action::CondenseNow,
                Action::CondenseSmart,
                Action::RequestPermission(Capability::NetHost("huggingface.co".into())),
                Action::GrantPermission(Capability::Net),
                Action::Unknown("dance".into())
            ]
        );
        assert_eq!(p.unknown_keys, vec!["mood"]);
        assert_eq!(
            Action::parse("request_permission:NET; rm"),
            Action::Unknown("request_permission:NET; rm".into())
        );
    }

    #[test]
    fn actions_are_read_exactly_as_written() {
        // Space around a known name makes it another name (the reference's rule).
        for spaced in [" condense_now", "condense_now ", "\trequest_permission:net"] {
            assert_eq!(Action::parse(spaced), Action::Unknown(spaced.into()));
        }
        // A permission action naming nothing has its own reason.
        for empty in ["request_permission:", "grant_permission:"] {
            assert_eq!(Action::parse(empty), Action::EmptyCapability(empty.into()));
            assert_eq!(Action::parse(empty).as_protocol(), empty);
        }
    }

    #[test]
    fn granted_capabilities_are_never_pending() {
        let mut s = State::default();
        let net = Capability::Net;
        assert!(request_capability(&mut s, &net));
        assert!(!request_capability(&mut s, &net));
        grant_capability(&mut s, &net);
        assert!(s.capabilities_pending.is_empty());
        assert!(!request_capability(&mut s, &net));
        assert!(s.capabilities_pending.is_empty());
    }
}
