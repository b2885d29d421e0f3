//! Persisted runtime contracts: State, Checkpoint, ChatMessage, trace events
//! (runtime-contracts §1 and §6).

use crate::capability::Capability;
use crate::message::{Message, Role};
use serde::{Deserialize, Serialize};

/// Long-lived agent state stored in the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    /// Current goals.
    pub goals: Vec<String>,
    /// Open loops (things started, not finished).
    pub open_loops: Vec<String>,
    /// Decisions taken.
    pub decisions: Vec<String>,
    /// Constraints to respect.
    pub constraints: Vec<String>,
    /// Rolling summary of the episode so far.
    pub episode_summary: String,
    /// Tags for memory retrieval.
    pub memory_tags: Vec<String>,
    /// Ids of memory entries referenced.
    pub memory_refs: Vec<String>,
    /// Capabilities the user granted, e.g. `net` or `net:example.com`.
    pub capabilities_granted: Vec<Capability>,
    /// Capabilities requested and awaiting approval; never holds a granted one.
    pub capabilities_pending: Vec<Capability>,
}

impl State {
    /// Restores the invariants a file written by another version (or edited
    /// by hand) may break: a granted capability is never also pending, and
    /// no capability is listed twice.
    pub fn normalize(&mut self) {
        dedup(&mut self.capabilities_granted);
        dedup(&mut self.capabilities_pending);
        let granted = &self.capabilities_granted;
        self.capabilities_pending.retain(|c| !granted.contains(c));
    }
}

fn dedup<T: PartialEq>(list: &mut Vec<T>) {
    let mut i = 0;
    while i < list.len() {
        if list[..i].contains(&list[i]) {
            list.remove(i);
        } else {
            i += 1;
        }
    }
}

/// The persisted unit, written atomically after every turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Session id.
    pub session_id: String,
    /// Increases by one with every write.
    pub revision: u64,
    /// Unix timestamp (seconds) of the write.
    pub updated_ts: f64,
    /// The agent state.
    pub state: State,
    /// Recent messages, bounded by condensation.
    pub recent_messages: Vec<ChatMessage>,
    /// Last trace ids or file names.
    #[serde(default)]
    pub trace_tail: Vec<String>,
    /// The same window as `recent_messages` with full fidelity (tool calls
    /// and results as structured blocks), so a resumed session continues
    /// exactly. An extension of the runtime contract; absent in old files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    /// The provider and model that produced `messages`, so a session resumed
    /// on another model drops reasoning only its producer can take back.
    /// Absent in old files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Tokens used over the whole session so far, so a resumed session
    /// continues its count. Absent in old files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::Usage>,
}

/// A provider and a model name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    /// Provider name (`anthropic`, `openai`, `scripted`).
    pub provider: String,
    /// Model name as the provider knows it.
    pub model: String,
}

/// Minimal persisted chat message: a role and text content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it (`system`, `user`, `assistant`, `tool`).
    pub role: Role,
    /// The content as text.
    pub content: String,
}
