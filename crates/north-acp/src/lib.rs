//! North as an Agent Client Protocol (ACP) agent: an editor (Zed, a
//! JetBrains IDE, Neovim) drives North sessions over JSON-RPC on stdio and
//! shows North's messages, tool calls, diffs and permission prompts in its
//! own UI.
//!
//! Main types: [`serve`] (one editor connection on stdin/stdout) and
//! [`AcpRuntime`] (the user's flags each session's project is opened with,
//! through North's session runtime: configuration, trust and providers are
//! `north-runtime`'s business). Inside, `updates` turns
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
//! - `open`: a session for the editor, opened through the runtime (uses `setup`)
//! - `updates`: north events as ACP `session/update`s
//! - `server`: the connection (uses `approver`, `open`, `setup`, `updates`)

mod approver;
mod open;
mod server;
mod setup;
mod updates;

pub use open::{AcpRuntime, OpenError};
pub use server::{serve, serve_on};
pub use setup::{EditorForms, EditorServer, SessionSetup};
