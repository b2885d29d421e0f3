//! The connections to configured servers: started in the background and in
//! parallel, restarted on the next use after a crash, every request bounded
//! by a timeout and cancellable.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use north_tools::shell::LiveOutput;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::server::Server;

/// How a hub runs its servers.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// The project root: stdio servers start there.
    pub root: PathBuf,
    /// The OS sandbox launcher (`north sandbox … --`) stdio servers start
    /// through; `None` runs them unconfined.
    pub launcher: Option<Vec<OsString>>,
    /// How long connecting (start + initialize + listing) may take.
    pub connect_timeout: Duration,
    /// How long one call may take unless the server sets its own `timeout`.
    pub call_timeout: Duration,
    /// Where images and binary resources from tool results are saved.
    pub attachments: PathBuf,
    /// Past this many tools in all, their definitions are deferred behind
    /// `mcp_tool_search`.
    pub defer_threshold: usize,
}

impl HubOptions {
    /// Defaults for a project at `root`: 30 s to connect, 120 s per call,
    /// attachments under `.north/mcp-attachments`, deferral past 40 tools.
    pub fn new(root: PathBuf) -> Self {
        HubOptions {
            attachments: root.join(".north").join("mcp-attachments"),
            root,
            launcher: None,
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
            defer_threshold: 40,
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

/// The configured servers and their connections.
pub struct McpHub {
    pub(crate) servers: Vec<Arc<Server>>,
    pub(crate) opts: HubOptions,
    /// Deferred tools the model has loaded with `mcp_tool_search`.
    pub(crate) loaded: Mutex<std::collections::BTreeSet<String>>,
}

impl McpHub {
    /// A hub for `servers`; nothing starts until [`McpHub::start_all`] or a
    /// first use.
    pub fn new(servers: Vec<ServerConfig>, opts: HubOptions) -> Arc<Self> {
        Arc::new(McpHub {
            servers: servers
                .into_iter()
                .map(|s| Arc::new(Server::new(s)))
                .collect(),
            opts,
            loaded: Mutex::new(Default::default()),
        })
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Starts every enabled server in the background, all at once; returns
    /// immediately (the first prompt never waits for a server). Outside a
    /// Tokio runtime nothing starts now: each server starts on first use.
    pub fn start_all(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for server in &self.servers {
            if server.config.disabled {
                continue;
            }
            let server = server.clone();
            let hub = self.clone();
            runtime.spawn(async move {
                if let Err(e) = server.ensure(&hub.opts).await {
                    tracing::warn!("{e}");
                }
            });
        }
    }

    /// Waits until every enabled server is connected or has failed, at
    /// most `limit` (for headless runs, whose first request should carry
    /// the servers' tools).
    pub async fn wait_ready(&self, limit: Duration) {
        let all = futures::future::join_all(
            self.servers
                .iter()
                .filter(|s| !s.config.disabled)
                .map(|s| s.ensure(&self.opts)),
        );
        let _ = tokio::time::timeout(limit, all).await;
    }

    /// Every server's state.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    pub(crate) fn server(&self, name: &str) -> Result<&Arc<Server>, McpError> {
        self.servers
            .iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| McpError::UnknownServer(name.into()))
    }

    /// Calls tool `tool` (the server's own name) of `server` and returns
    /// the raw `CallToolResult` as JSON. Progress goes to `live`.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
        live: Option<LiveOutput>,
    ) -> Result<Value, McpError> {
        let server = self.server(server)?;
        if let Ok(mut l) = server.live.lock() {
            *l = live;
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let result = server
            .request(&self.opts, cancel, |peer| async move {
                peer.call_tool(params).await
            })
            .await;
        if let Ok(mut l) = server.live.lock() {
            *l = None;
        }
        let result = result?;
        serde_json::to_value(&result).map_err(|e| McpError::Request {
            server: server.name().into(),
            message: format!("unreadable result: {e}"),
        })
    }

    /// The tools of `server`, connecting first.
    pub async fn tools(&self, server: &str) -> Result<Vec<RemoteTool>, McpError> {
        let server = self.server(server)?;
        server.ensure(&self.opts).await?;
        Ok(server.tools())
    }

    /// The resources of `server`, connecting first.
    pub async fn resources(&self, server: &str) -> Result<Vec<ResourceInfo>, McpError> {
        let server = self.server(server)?;
        server.ensure(&self.opts).await?;
        Ok(server
            .listing
            .lock()
            .map(|l| l.resources.clone())
            .unwrap_or_default())
    }

    /// The prompts of `server`, connecting first.
    pub async fn prompts(&self, server: &str) -> Result<Vec<PromptInfo>, McpError> {
        let server = self.server(server)?;
        server.ensure(&self.opts).await?;
        Ok(server
            .listing
            .lock()
            .map(|l| l.prompts.clone())
            .unwrap_or_default())
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.close())).await;
    }
}
