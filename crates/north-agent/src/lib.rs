//! North's orchestrator: turns a model and tools into an assistant.
//!
//! Main types: [`Agent`] (one session's tool loop: system prompt and
//! context, streamed model calls, tool calls in order under approval,
//! NOTES patches and actions, condensation, a checkpoint after every step;
//! [`ModelSwitch`] moves a session to another model),
//! [`Approver`] (how front ends decide shell commands, edits and
//! capabilities; [`FlagApprover`] for headless runs), [`config::Config`]
//! (flags > environment > project > global > defaults, with sources),
//! [`store::SessionStore`] (atomic checkpoints and JSONL traces under
//! `.north/sessions/<id>/`), [`memory::MemoryFile`] (memory with BM25
//! retrieval), [`blocks::BlockFilter`] and [`textcalls`] (the NOTES and
//! text tool-call protocols), and [`mesh::Mesh`] (planner → executor →
//! memory under a policy), and [`undo`] (per-turn snapshots of the working
//! tree; undo and rewind of code and conversation).
//!
//! This crate must not render anything or read the terminal: front ends
//! submit actions and render the events it emits.

mod agent;
pub mod approval;
pub mod blocks;
pub mod commands;
pub mod condense;
pub mod config;
pub mod context;
pub mod intent;
pub mod memory;
pub mod mesh;
pub mod notes;
pub mod redact;

pub mod store;
pub mod textcalls;
pub mod trust;
pub mod undo;

pub use agent::{
    Agent, AgentError, AgentOptions, DiffError, Emit, ExpandError, ExpandedInput, InputExpander,
    ModeError, ModeKit, ModelSwitch, RewindReport, SessionDiff, SwitchReport, TurnEnd,
};
pub use approval::{ApprovalRequest, Approver, FlagApprover};
