//! Protocol types shared by every North crate.
//!
//! This crate is the vocabulary of North: provider-neutral chat messages
//! ([`Message`], [`ContentBlock`]), tool declarations and invocations
//! ([`ToolSpec`], [`ToolCall`], [`ToolOutcome`], [`FileDiff`]), what a model stream yields
//! ([`StreamDelta`], [`Usage`], [`StopReason`]), the [`Event`]s front ends
//! render, and the persisted runtime contracts ([`State`], [`Checkpoint`],
//! [`ChatMessage`], [`TraceEvent`]).
//!
//! It must not do I/O, hold runtime state, or depend on any other North
//! crate: everything here is plain data with a stable serde form.

mod capability;
mod event;
mod json;
mod message;
mod mode;
mod request;
mod state;
mod stream;
mod tool;
mod trace;

pub use capability::{Capability, CapabilityError};
pub use event::{ApprovalDecision, ApprovalKind, ErrorKind, Event, NoticeKind, OutputStream};
pub use json::{json_kind, json_type};
pub use message::{ContentBlock, Message, Role};
pub use mode::PermissionMode;
pub use request::{ChatRequest, ChatResponse, ReasoningEffort};
pub use state::{ChatMessage, Checkpoint, ModelRef, State};
pub use stream::{StopReason, StreamDelta, Usage};
pub use tool::{ApprovalPolicy, FileDiff, ToolCall, ToolOutcome, ToolSpec, wire_safe};
pub use trace::{TraceEvent, TraceKind};
