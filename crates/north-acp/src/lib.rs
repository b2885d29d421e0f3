//! North as an Agent Client Protocol (ACP) agent: an editor (Zed, a
//! JetBrains IDE, Neovim) drives North sessions over JSON-RPC on stdio and
//! shows North's messages, tool calls, diffs and permission prompts in its
//! own UI.
//!
//! Main types: [`serve`] (one editor connection on stdin/stdout) and
//! [`SessionFactory`] (how the binary opens a North [`Agent`](north_agent::Agent) for a session;
//! it owns configuration, trust and providers). Inside, `updates` turns
//! North [`Event`](north_protocol::Event)s into `session/update`
//! notifications and `approver` asks the editor through
//! `session/request_permission`.
//!
//! This crate is a front end: it renders agent events and submits actions.
//! It must not run the tool loop, read configuration, or write files itself.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `approver`: approvals in the editor
//! - `setup`: what an editor passes for a session (its MCP servers, its forms)
//! - `updates`: north events as ACP `session/update`s
//! - `server`: the connection (uses `approver`, `setup`, `updates`)

mod approver;
mod server;
mod setup;
mod updates;

pub use server::{OpenError, SessionFactory, serve, serve_on};
pub use setup::{EditorForms, EditorServer, SessionSetup};
