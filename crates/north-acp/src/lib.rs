//! North as an Agent Client Protocol (ACP) agent: an editor (Zed, a
//! JetBrains IDE, Neovim) drives North sessions over JSON-RPC on stdio and
//! shows North's messages, tool calls, diffs and permission prompts in its
//! own UI.
//!
//! Main types: [`serve`] (one editor connection on stdin/stdout),
//! [`Server`] (`north serve`: many clients on a unix socket and a loopback
//! WebSocket, sharing sessions through one [`Hub`]) and [`AcpRuntime`] (the user's flags each session's project is opened with,
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
//! - `ext`: North's `_north/...` extension messages
//! - `updates`: north events as ACP `session/update`s
//! - `history`: a session's modes and history as ACP tells them
//! - `clients`: the clients attached to a session; events to all, a
//!   permission question to all, the first answer wins (uses `ext`, `updates`)
//! - `approver`: approvals in the clients (uses `clients`)
//! - `setup`: what an editor passes for a session (its MCP servers, its forms)
//! - `open`: a session's project and agent, through the runtime (uses `setup`)
//! - `hub`: the sessions this process serves (uses `approver`, `clients`,
//!   `history`, `open`, `setup`)
//! - `ops`: what a connection asks of the hub (uses `ext`, `history`, `hub`)
//! - `server`: one connection (uses `ext`, `history`, `hub`, `ops`)
//! - `listen`: `north serve`'s sockets, tokens and bounded client queues
//!   (uses `hub`, `server`)
//! - `schema`: the JSON Schema of every message (uses `ext`)

mod approver;
mod clients;
pub mod ext;
mod history;
mod hub;
mod listen;
mod open;
mod ops;
pub mod schema;
mod server;
mod setup;
mod updates;

pub use clients::Backlog;
pub use hub::{Hub, Limits};
pub use listen::{LineSink, LineStream, Listen, ListenError, Server, Token};
pub use open::{AcpRuntime, OpenError};
pub use server::{serve, serve_on};
pub use setup::{EditorForms, EditorServer, SessionSetup};
