//! Protocol types shared by every North crate.
//!
//! This crate is the vocabulary of North: provider-neutral chat messages
//! ([`Message`], [`ContentBlock`]), tool declarations and invocations
//! ([`ToolSpec`], [`ToolCall`], [`ToolOutcome`], [`FileDiff`]), what a model stream yields
//! ([`StreamDelta`], [`Usage`], [`StopReason`]), the [`Event`]s front ends
//! render, and the persisted runtime contracts ([`State`], [`Checkpoint`],
//! [`ChatMessage`], [`TraceEvent`]), and the text protocols a model speaks
//! inside its answer: [`notes`] (NOTES patches), [`textcalls`] (tool calls
//! for models without native ones) and the [`blocks`] filter that hides
//! them from a stream.
//!
//! It must not do I/O, hold runtime state, or depend on any other North
//! crate: everything here is plain data with a stable serde form.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `capability`: capabilities a user grants a session (runtime-contracts §4)
//! - `elicit`: a form an MCP server asks the user to fill in, and the answer
//! - `json`: words for JSON values in messages that say what was found
//! - `tool`: tool declarations, invocations and results
//! - `message`: provider-neutral chat messages (uses `tool`)
//! - `stream`: what a model stream yields (uses `message`)
//! - `event`: events the runtime emits and front ends render (uses `stream`)
//! - `mode`: permission modes
//! - `request`: provider-neutral requests and complete responses (uses `message`, `stream`, `tool`)
//! - `state`: persisted runtime contracts (uses `capability`, `message`)
//! - `trace`: trace events (runtime-contracts §6)
//! - `blocks`: hiding marker-delimited blocks from streamed text
//! - `notes`: the NOTES patch protocol (runtime-contracts §2) (uses `state`, `capability`)
//! - `textcalls`: the text tool-call protocol (runtime-contracts §3) (uses `tool`)
//! - `results`: typed views of tool results — shell results, naming, grant requests (uses `capability`, `tool`)

pub mod blocks;
mod capability;
mod elicit;
mod event;
mod json;
mod message;
mod mode;
pub mod notes;
mod request;
mod results;
mod state;
mod stream;
pub mod textcalls;
mod tool;
mod trace;

pub use capability::{Capability, CapabilityError};
pub use elicit::{ElicitAnswer, ElicitField, ElicitForm, Expected, FieldError, FieldKind};
pub use event::{
    ApprovalDecision, ApprovalKind, ErrorKind, Event, HookEvent, HookOutcome, NoticeKind,
    OutputStream, hook_line,
};
pub use json::{json_kind, json_type};
pub use message::{ContentBlock, HostedApi, Message, Role};
pub use mode::PermissionMode;
pub use request::{ChatRequest, ChatResponse, ReasoningEffort, ServerTool};
pub use results::{DENIED_NOTE, GrantRequest, HostReached, Naming, REFUSED_NOTE, ShellResult};
pub use state::{ChatMessage, Checkpoint, ModelRef, State};
pub use stream::{StopReason, StreamDelta, Usage};
pub use tool::{
    ApprovalPolicy, Diagnostic, FileDiagnostics, FileDiff, HunkRef, Severity, ToolCall, ToolKind,
    ToolOutcome, ToolSpec, wire_safe,
};
pub use trace::{TraceEvent, TraceKind};
