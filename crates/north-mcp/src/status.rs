//! What a hub and its servers say about themselves: options, states,
//! listings and errors. A leaf module: the hub and each server connection
//! share these types without depending on each other.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

pub use crate::elicit::Announcer;

/// How a hub runs its servers.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// The project root: stdio servers start there.
    pub root: PathBuf,
    /// How stdio servers start: the OS sandbox under the MCP server policy
    /// (unconfined by default, for library users without the launcher).
    pub spawner: north_tools::Spawner,
    /// How long connecting (start + initialize + listing) may take.
    pub connect_timeout: Duration,
    /// How long one call may take unless the server sets its own `timeout`.
    pub call_timeout: Duration,
    /// Where images and binary resources from tool results are saved.
    pub attachments: PathBuf,
    /// Past this many tools in all, their definitions are deferred behind
    /// `mcp_tool_search`.
    pub defer_threshold: usize,
    /// Where OAuth tokens live, and whether a login may start on its own.
    pub oauth: crate::oauth::OAuthOptions,
    /// Where what a login needs the user to see goes (the URL to open).
    pub announce: Announcer,
    /// Who answers a server's request for input (none: declined).
    pub elicitor: crate::elicit::ElicitorSlot,
    /// The roots servers are told of (`roots/list`).
    pub roots: crate::elicit::Roots,
}

impl HubOptions {
    /// Defaults for a project at `root`: 30 s to connect, 120 s per call,
    /// attachments under `.north/mcp-attachments`, deferral past 40 tools.
    pub fn new(root: PathBuf) -> Self {
        HubOptions {
            attachments: root.join(".north").join("mcp-attachments"),
            roots: crate::elicit::Roots::new(&root),
            root,
            spawner: north_tools::Spawner::unconfined(),
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
            defer_threshold: 40,
            oauth: crate::oauth::OAuthOptions::default(),
            announce: Announcer::default(),
            elicitor: crate::elicit::ElicitorSlot::default(),
        }
    }
}

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Not started yet (it starts on first use or in the background).
    Idle,
    /// Starting and initializing.
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// It failed to start, or stopped; the next use starts it again.
    Failed,
    /// It asks for a login (`north mcp login NAME`).
    NeedsLogin,
    /// Switched off in its configuration.
    Disabled,
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerState::Idle => "not started",
            ServerState::Starting => "starting",
            ServerState::Ready => "ready",
            ServerState::Failed => "failed",
            ServerState::NeedsLogin => "needs login",
            ServerState::Disabled => "disabled",
        })
    }
}

/// One listed tool of a server.
#[derive(Debug, Clone)]
pub struct RemoteTool {
    /// The name the server knows it by.
    pub name: String,
    /// The name the model calls: `mcp__<server>__<tool>`.
    pub exposed: String,
    /// Its description.
    pub description: String,
    /// Its JSON schema.
    pub input_schema: Value,
    /// The server says the tool only reads (`readOnlyHint`): a hint for
    /// how front ends file it, never a reason to skip an approval.
    pub read_only: bool,
}

/// One resource a server lists.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its MIME type, when given.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// One prompt a server offers.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PromptInfo {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its arguments: name and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// A server's state for `/mcp` and `north mcp list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// Where it was configured.
    pub scope: crate::config::Scope,
    /// How it is reached.
    pub transport: String,
    /// Where it stands.
    pub state: ServerState,
    /// Tools listed at the last connection.
    pub tools: usize,
    /// Resources listed at the last connection.
    pub resources: usize,
    /// Prompts listed at the last connection.
    pub prompts: usize,
    /// The last error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// A failed request to a server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// No server of that name is configured.
    #[error("no MCP server named `{0}` (see `north mcp list`)")]
    UnknownServer(String),
    /// The server could not be started or initialized.
    #[error("MCP server `{server}` could not start: {message}")]
    Start {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The server answered with an error, or stopped.
    #[error("MCP server `{server}`: {message}")]
    Request {
        /// The server.
        server: String,
        /// What happened.
        message: String,
    },
    /// The request took longer than allowed.
    #[error("MCP server `{server}` did not answer within {secs} s")]
    Timeout {
        /// The server.
        server: String,
        /// The limit.
        secs: u64,
    },
    /// The user interrupted.
    #[error("cancelled by the user")]
    Cancelled,
    /// A prompt command or resource mention the user typed cannot be used
    /// as written (unknown prompt, missing argument).
    #[error("{0}")]
    Input(String),
}
