//! Language servers for North: what a server says about code North is
//! about to write, before it is written.
//!
//! - [`framing`]: LSP's `Content-Length` framing, bounded in size.
//! - [`Server`]: one running server over stdio — `initialize`, documents
//!   opened and changed as *unsaved* versions (a proposal is never written
//!   for the server to see it), `publishDiagnostics` kept per document and
//!   version, requests with timeouts, the server's own requests answered.
//! - [`Servers`]: the configured servers of a project, started lazily per
//!   language through the one spawner (inside the sandbox), restarted after
//!   a crash up to a limit, shut down with the session; [`Servers::diagnose`]
//!   tells "clean" from "no answer".
//!
//! Module map, lowest first: `types` (diagnostics, locations, server
//! definitions), `framing`, `server` (uses `framing`, `types`), `servers`
//! (uses `server`, `types`).
//!
//! It must not write a file, block a turn past its timeouts, or start a
//! process but through `north_sandbox::Spawner`.

pub mod framing;
mod server;
mod servers;
mod types;

pub use server::{Server, ServerError};
pub use servers::{Diagnosed, LspError, Servers};
pub use types::{
    Diagnostic, Location, ServerDef, Severity, Symbol, compare, known_servers, types_known,
};
