//! North's interactive terminal front end.
//!
//! One conversational timeline printed into the terminal's normal screen
//! (finished items scroll into scrollback and stay there after exit) above
//! a small live area: the answer being streamed, an inline diff review or
//! command approval, the composer and a status line.
//!
//! Main types: [`App`] (the UI state machine: agent events and keys in,
//! [`Action`]s out), [`TuiApprover`] (the agent's approver: each request
//! becomes a prompt answered over a oneshot channel), [`InlineTerminal`]
//! (the inline live area with lines inserted above), and [`run`] (the loop
//! that wires them to a real terminal and an [`north_agent::Agent`]).
//!
//! Modules: `app` (state and agent events), `keys` (key handling),
//! `prompt` (approval prompts and their options, refusing with feedback),
//! `complete` (the command palette and the `@` file picker), `slash`
//! (slash commands), `checklist` (the model's plan), `view` (the live
//! area's layout), `run` (terminal set-up and the loop) and `worker` (the
//! task that owns the agent), plus rendering helpers (`markdown`, `diff`,
//! `transcript`, `pager`, `wrap`, `style`).
//!
//! This crate must not call a model or run a tool: it renders the events
//! the agent emits and submits the user's input and decisions.

mod app;
mod approver;
mod checklist;
mod complete;
mod composer;
pub mod diff;
mod highlight;
pub mod hooks;
mod keys;
mod live;
pub mod markdown;
mod mcp;
pub mod pager;
mod plan;
mod popup;
mod prompt;
mod replay;
mod rewind;
mod run;
mod slash;
pub mod style;
mod term;
pub mod transcript;
mod view;
mod worker;
pub mod wrap;

pub use app::{Action, App, SessionInfo};
pub use approver::{FeedbackSlot, Inbox, Prompt, PromptKind, TuiApprover, UiMsg, channel};
pub use hooks::{FileFinder, McpServerLine, McpView};
pub use run::{Exit, STREAM_FPS, Start, TuiError, draw, restore_terminal, run};
pub use slash::COMMANDS;
pub use term::{FrameBackend, InlineTerminal, SharedWriter, TtyBackend};
pub use transcript::Item;
pub use worker::{ModelSwitcher, OpenSessionError, SessionOpener};
