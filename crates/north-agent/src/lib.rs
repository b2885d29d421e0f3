//! North's orchestrator (in progress): the pieces of the agent runtime that
//! turn a model and tools into an assistant.
//!
//! Main types so far: [`blocks::BlockFilter`] (hides `<<<NOTES_JSON>>>` and
//! `<<<TOOL_CALLS_JSON>>>` blocks from streamed text), [`notes::NotesPatch`]
//! (the state-patch protocol), [`textcalls`] (the text tool-call protocol),
//! [`store::SessionStore`] (atomic checkpoints and JSONL traces under
//! `.north/sessions/<id>/`) and [`memory::MemoryFile`] (memory entries with
//! BM25 retrieval).
//!
//! This crate must not render anything or read the terminal: front ends
//! submit actions and render the events it emits.

mod agent;
pub mod approval;
pub mod blocks;
pub mod condense;
pub mod config;
pub mod context;
pub mod intent;
pub mod memory;
pub mod mesh;
pub mod notes;
pub mod redact;
mod run_tool;
pub mod store;
pub mod textcalls;

pub use agent::{Agent, AgentOptions, Emit, TurnEnd};
pub use approval::{ApprovalRequest, Approver, FlagApprover};
