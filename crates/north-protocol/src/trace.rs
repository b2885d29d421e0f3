//! Trace events (runtime-contracts §6): one JSON line per event, with a
//! timestamp, a kind and kind-specific data.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// What a trace event records. Serialized under its snake_case name; names
/// this version does not know load as [`TraceKind::Other`], so traces written
/// by other versions stay readable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TraceKind {
    /// A model request was sent (`llm_req`).
    LlmReq,
    /// A model stream ended (`llm_stream`).
    LlmStream,
    /// A model response completed (`llm_done`).
    LlmDone,
    /// A NOTES patch was applied or rejected (`notes_patch`).
    NotesPatch,
    /// NOTES actions ran (`actions`).
    Actions,
    /// Memory was retrieved for the input (`retrieval`).
    Retrieval,
    /// The tool calls of a step (`tool_plan`).
    ToolPlan,
    /// A tool call started (`tool_start`).
    ToolStart,
    /// A tool call finished (`tool_done`).
    ToolDone,
    /// An approval was asked and decided (`approval`).
    Approval,
    /// Condensation ran, was skipped or failed (`condense`).
    Condense,
    /// An error ended a turn (`error`).
    Error,
    /// A session was resumed (`resume`).
    Resume,
    /// A turn stopped at the step limit (`step_limit`).
    StepLimit,
    /// A mesh policy decision (`policy`).
    Policy,
    /// A mesh run started (`mesh_start`).
    MeshStart,
    /// The mesh planner produced (or failed to produce) a plan (`mesh_plan`).
    MeshPlan,
    /// The mesh memory agent wrote an entry (`mesh_memory`).
    MeshMemory,
    /// A mesh run ended (`mesh_done`).
    MeshDone,
    /// A tool call could not run: cut off, invalid arguments, no name (`tool_rejected`).
    ToolRejected,
    /// The session moved to another provider or model (`model_switch`).
    ModelSwitch,
    /// An apply a killed process left was settled at start-up (`recovery`).
    Recovery,
    /// The working tree was snapshotted for undo (`snapshot`).
    Snapshot,
    /// Files or the conversation were undone or rewound (`undo`).
    Undo,
    /// The tools a turn holds back, when that changes (`tools_offered`).
    ToolsOffered,
    /// A kind this version does not know.
    Other(String),
}

const NAMES: &[(TraceKind, &str)] = &[
    (TraceKind::LlmReq, "llm_req"),
    (TraceKind::LlmStream, "llm_stream"),
    (TraceKind::LlmDone, "llm_done"),
    (TraceKind::NotesPatch, "notes_patch"),
    (TraceKind::Actions, "actions"),
    (TraceKind::Retrieval, "retrieval"),
    (TraceKind::ToolPlan, "tool_plan"),
    (TraceKind::ToolStart, "tool_start"),
    (TraceKind::ToolDone, "tool_done"),
    (TraceKind::Approval, "approval"),
    (TraceKind::Condense, "condense"),
    (TraceKind::Error, "error"),
    (TraceKind::Resume, "resume"),
    (TraceKind::StepLimit, "step_limit"),
    (TraceKind::Policy, "policy"),
    (TraceKind::MeshStart, "mesh_start"),
    (TraceKind::MeshPlan, "mesh_plan"),
    (TraceKind::MeshMemory, "mesh_memory"),
    (TraceKind::MeshDone, "mesh_done"),
    (TraceKind::ToolRejected, "tool_rejected"),
    (TraceKind::ModelSwitch, "model_switch"),
    (TraceKind::Recovery, "recovery"),
    (TraceKind::Snapshot, "snapshot"),
    (TraceKind::Undo, "undo"),
    (TraceKind::ToolsOffered, "tools_offered"),
];

impl TraceKind {
    /// The kind's name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            TraceKind::Other(s) => s,
            known => NAMES
                .iter()
                .find(|(k, _)| k == known)
                .map(|(_, n)| *n)
                .unwrap_or("unknown"),
        }
    }

    /// The kind with this wire name.
    pub fn from_name(name: &str) -> TraceKind {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| TraceKind::Other(name.to_string()))
    }
}

impl fmt::Display for TraceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TraceKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TraceKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(TraceKind::from_name(&String::deserialize(d)?))
    }
}

/// One line of a JSONL trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Unix timestamp in seconds.
    pub ts: f64,
    /// Event kind.
    pub kind: TraceKind,
    /// Kind-specific data.
    pub data: Value,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_known_kind_round_trips_and_unknown_kinds_load() {
        for (kind, name) in NAMES {
            assert_eq!(kind.as_str(), *name);
            assert_eq!(&TraceKind::from_name(name), kind);
        }
        let line = r#"{"ts":1.5,"kind":"from_the_future","data":{}}"#;
        let event: TraceEvent = serde_json::from_str(line).unwrap();
        assert_eq!(event.kind, TraceKind::Other("from_the_future".into()));
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
}
