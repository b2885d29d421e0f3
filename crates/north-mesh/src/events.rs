//! What a mesh run emits: the agent's own [`Event`]s as they are, plus mesh
//! events (plan, steps, policy decisions, the memory written, the end).
//! With `--json` each is one JSON object per line; the mesh events' `type`
//! values never collide with the agent's.

use north_policy::MeshPolicy;
use north_protocol::Event;
use serde::{Deserialize, Serialize};

use super::gate::AuditEntry;
use super::prompts::Step;
use north_agent::memory::MemoryEntry;
use north_agent::redact::Redactor;

/// One thing a mesh run reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MeshEvent {
    /// A mesh event.
    Mesh(MeshNote),
    /// An event of the executor agent (tool intents and results, text, ...).
    Agent(Event),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum MeshStatus {
    /// Plan, every step and the memory entry are done.
    Completed,
    /// Done, but a call was refused by the policy or by approval.
    Denied,
    /// A step stopped at the executor's step limit (the run went on).
    StepLimit,
    /// The planner gave no usable plan.
    PlanFailed {
        /// Why.
        message: String,
    },
    /// The model provider failed; no memory was written.
    ProviderFailed {
        /// The provider's error.
        message: String,
    },
    /// The session or memory file could not be used.
    StorageFailed {
        /// What failed.
        message: String,
    },
    /// The user interrupted; no memory was written.
    Interrupted,
}

/// A stage of a run, announced as it starts so a slow model never leaves
/// the user without output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeshPhase {
    /// The planner is writing the plan.
    Planning,
    /// The executor carries out the steps.
    Executing,
    /// Extra agents look at the run.
    Reviewing,
    /// The memory agent summarizes the run.
    Remembering,
}

/// A mesh event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MeshNote {
    /// The run started.
    MeshStarted {
        /// The executor's session id.
        session_id: String,
        /// The goal.
        goal: String,
        /// Provider name.
        provider: String,
        /// Model name.
        model: String,
        /// The policy in force.
        policy: MeshPolicy,
    },
    /// A stage starts.
    Phase {
        /// Which.
        phase: MeshPhase,
    },
    /// The planner's answer could not be used; it is asked again.
    PlanRetry {
        /// The attempt that failed (1-based).
        attempt: u32,
        /// Why it could not be used.
        error: String,
    },
    /// The planner's plan.
    Plan {
        /// The steps, in order.
        steps: Vec<Step>,
    },
    /// A step starts.
    StepStarted {
        /// 1-based.
        index: usize,
        /// How many steps the plan has.
        total: usize,
        /// What the step does.
        description: String,
        /// The tool the plan expects, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
    },
    /// A policy decision about a tool call (also in the trace and log).
    Policy {
        /// The decision.
        #[serde(flatten)]
        entry: AuditEntry,
    },
    /// A step ended.
    StepFinished {
        /// 1-based.
        index: usize,
        /// Tool calls made.
        calls: usize,
        /// Calls that failed or were refused.
        failed: usize,
    },
    /// An extra agent added a note.
    AgentNote {
        /// The agent.
        agent: String,
        /// The note.
        text: String,
    },
    /// The memory agent's summary was stored.
    MemoryWritten {
        /// The entry.
        entry: MemoryEntry,
        /// The memory file, relative to the project root.
        path: String,
    },
    /// The run ended.
    MeshFinished {
        /// How.
        #[serde(flatten)]
        status: MeshStatus,
        /// Tool calls refused by policy or approval.
        denied: usize,
    },
}

/// `event` with every known secret replaced.
pub(crate) fn scrub(redactor: &Redactor, event: MeshEvent) -> MeshEvent {
    match event {
        MeshEvent::Agent(e) => MeshEvent::Agent(redactor.scrub_event(e)),
        MeshEvent::Mesh(note) if !redactor.is_empty() => {
            let Ok(text) = serde_json::to_string(&note) else {
                return MeshEvent::Mesh(note);
            };
            match redactor.scrub(&text) {
                std::borrow::Cow::Borrowed(_) => MeshEvent::Mesh(note),
                std::borrow::Cow::Owned(clean) => {
                    MeshEvent::Mesh(serde_json::from_str(&clean).unwrap_or(note))
                }
            }
        }
        other => other,
    }
}
