//! North and the Model Context Protocol (MCP), on the official Rust SDK
//! (`rmcp`), in both directions.
//!
//! As a **client**, [`McpHub`] runs the servers configured in a project's
//! `.mcp.json` and the user's `mcp.json` ([`config`]): stdio servers as
//! child processes through North's OS sandbox with the key-free
//! environment, streamable HTTP servers over the network. Their tools join
//! a [`north_tools::Registry`] through [`McpHub::tool_source`] as
//! `mcp__<server>__<tool>`, each call needing approval; past a threshold
//! their definitions wait behind `mcp_tool_search`. Servers start in the
//! background and in parallel, restart on the next use after a crash, and
//! every request has a timeout and is cancellable.
//!
//! As a **server**, [`serve`] exposes North's own tools over stdio: the
//! read and search tools, the edit tools as proposals with an apply step,
//! and the shell under North's command policy and OS sandbox.
//!
//! This crate must not talk to a model, render UI, or decide trust: the
//! binary tells it whether a project's servers may start.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `config`: server configuration
//! - `elicit`: what servers ask of the user (input, roots) and what a login shows them
//! - `oauth`: logging in to HTTP servers that ask for OAuth, and their tokens (uses `config`)
//! - `status`: what a hub and its servers say about themselves (uses `config`, `elicit`, `oauth`)
//! - `stdio`: a stdio server as a child process, with bounded buffers on both of its output streams (uses `config`)
//! - `server`: one configured server (uses `config`, `elicit`, `oauth`, `status`, `stdio`)
//! - `hub`: the connections to configured servers (uses `config`, `server`, `status`)
//! - `result`: an MCP `CallToolResult` as North's tool envelope `{ok, output, error}`
//! - `content`: what servers offer besides tools (uses `hub`, `result`, `server`, `status`)
//! - `serve`: `north mcp serve`
//! - `tools`: servers' tools in North's registry (uses `hub`, `result`, `status`)

pub mod config;
mod content;
pub mod elicit;
mod hub;
pub mod oauth;
pub mod result;
mod serve;
mod server;
mod status;
pub mod stdio;
mod tools;

pub use content::{Expansion, Offers};
pub use hub::McpHub;
pub use serve::{ServeOptions, serve};
pub use status::{
    Announcer, HubOptions, McpError, PromptInfo, RemoteTool, ResourceInfo, ServerState,
    ServerStatus,
};
pub use tools::SEARCH_TOOL;

/// Installs the TLS crypto provider (ring) HTTPS servers need, once.
pub(crate) fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Another part of the process may have installed one already.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
