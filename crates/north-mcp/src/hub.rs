//! The connections to configured servers: started in the background and in
//! parallel, restarted on the next use after a crash, every request bounded
//! by a timeout and cancellable.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use north_tools::shell::LiveOutput;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, GetPromptRequestParams,
    Implementation, ProgressNotificationParam, ReadResourceRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, Transport};
use crate::stdio::{self, StderrTail};

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
}

/// Receives what a server sends on its own: progress of the call in flight.
#[derive(Clone)]
struct Handler {
    server: String,
    /// Where progress of the call in flight goes (a front end shows it).
    live: Arc<Mutex<Option<LiveOutput>>>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("north", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let mut line = match params.total {
            Some(total) => format!("progress {}/{}", params.progress, total),
            None => format!("progress {}", params.progress),
        };
        if let Some(message) = params.message {
            line.push_str(&format!(": {message}"));
        }
        tracing::debug!(server = %self.server, "{line}");
        line.push('\n');
        if let Ok(live) = self.live.lock()
            && let Some(live) = live.as_ref()
        {
            let _ = live.send((north_protocol::OutputStream::Stdout, line));
        }
    }
}

/// A live connection.
struct Connection {
    service: RunningService<RoleClient, Handler>,
    /// The stdio server's process (killed when the connection is dropped).
    _child: Option<stdio::ChildGuard>,
}

impl Connection {
    fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// What a connection listed.
#[derive(Default)]
struct Listing {
    tools: Vec<RemoteTool>,
    resources: Vec<ResourceInfo>,
    prompts: Vec<PromptInfo>,
}

/// One configured server.
pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
    listing: Mutex<Listing>,
    state: Mutex<(ServerState, Option<String>)>,
    tail: StderrTail,
    live: Arc<Mutex<Option<LiveOutput>>>,
}

/// Tool names must fit providers' rules: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn exposed_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let full = format!("mcp__{server}__{clean}");
    if full.len() <= 64 && clean == tool {
        return full;
    }
    // Cut (or cleaned) names get a short hash of the original, so two tools
    // never collapse into one name.
    use sha2::Digest;
    let hash = sha2::Sha256::digest(tool.as_bytes());
    let suffix = format!("_{:02x}{:02x}{:02x}", hash[0], hash[1], hash[2]);
    let mut base = full;
    base.truncate(64 - suffix.len());
    base + &suffix
}

fn short(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    text.chars().take(500).collect()
}

impl Server {
    fn new(config: ServerConfig) -> Self {
        let state = if config.disabled {
            ServerState::Disabled
        } else {
            ServerState::Idle
        };
        Server {
            config,
            conn: tokio::sync::Mutex::new(None),
            listing: Mutex::new(Listing::default()),
            state: Mutex::new((state, None)),
            tail: StderrTail::default(),
            live: Arc::new(Mutex::new(None)),
        }
    }

    fn name(&self) -> &str {
        &self.config.name
    }

    fn set_state(&self, state: ServerState, error: Option<String>) {
        if let Ok(mut s) = self.state.lock() {
            *s = (state, error);
        }
    }

    pub(crate) fn state(&self) -> (ServerState, Option<String>) {
        self.state
            .lock()
            .map(|s| s.clone())
            .unwrap_or((ServerState::Failed, None))
    }

    pub(crate) fn tools(&self) -> Vec<RemoteTool> {
        self.listing
            .lock()
            .map(|l| l.tools.clone())
            .unwrap_or_default()
    }

    fn status(&self) -> ServerStatus {
        let (state, last_error) = self.state();
        let (tools, resources, prompts) = self
            .listing
            .lock()
            .map(|l| (l.tools.len(), l.resources.len(), l.prompts.len()))
            .unwrap_or_default();
        ServerStatus {
            name: self.config.name.clone(),
            scope: self.config.scope,
            transport: self.config.describe(),
            state,
            tools,
            resources,
            prompts,
            last_error,
        }
    }

    /// The live connection, starting the server when it is not running.
    async fn ensure(&self, opts: &HubOptions) -> Result<Arc<Connection>, McpError> {
        if self.config.disabled {
            return Err(McpError::Start {
                server: self.name().into(),
                message: "it is disabled in its configuration".into(),
            });
        }
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            if !conn.is_closed() {
                return Ok(conn.clone());
            }
            let why = match self.tail.last_line() {
                Some(line) => format!("it stopped (last stderr: {line}); restarting"),
                None => "it stopped; restarting".into(),
            };
            tracing::warn!(server = %self.name(), "{why}");
            *slot = None;
        }
        self.set_state(ServerState::Starting, None);
        let started = tokio::time::timeout(opts.connect_timeout, self.connect(opts)).await;
        let result = match started {
            Ok(Ok((conn, listing))) => {
                if let Ok(mut l) = self.listing.lock() {
                    *l = listing;
                }
                let conn = Arc::new(conn);
                *slot = Some(conn.clone());
                self.set_state(ServerState::Ready, None);
                return Ok(conn);
            }
            Ok(Err(message)) => message,
            Err(_) => format!(
                "it did not finish starting within {} s",
                opts.connect_timeout.as_secs()
            ),
        };
        let message = match self.tail.last_line() {
            Some(line) if !result.contains(&line) => format!("{result} (stderr: {line})"),
            _ => result,
        };
        self.set_state(ServerState::Failed, Some(message.clone()));
        Err(McpError::Start {
            server: self.name().into(),
            message,
        })
    }

    async fn connect(&self, opts: &HubOptions) -> Result<(Connection, Listing), String> {
        let config = self
            .config
            .expanded(&|k| std::env::var(k).ok())
            .map_err(|e| format!("in its configuration: {e}"))?;
        let handler = Handler {
            server: self.name().into(),
            live: self.live.clone(),
        };
        let (service, child) = match &config.transport {
            Transport::Stdio { command, .. } => {
                let spawned = stdio::spawn(
                    self.name(),
                    &config.transport,
                    &opts.root,
                    opts.launcher.as_deref(),
                    self.tail.clone(),
                )
                .map_err(|e| format!("cannot run `{command}`: {e}"))?;
                let (guard, reader, writer) = spawned.into_parts();
                let service = handler
                    .serve((reader, writer))
                    .await
                    .map_err(|e| format!("initialize failed: {}", short(e)))?;
                (service, Some(guard))
            }
            Transport::Http { url, headers } => {
                crate::install_tls_provider();
                let mut custom = std::collections::HashMap::new();
                let mut auth = None;
                for (k, v) in headers {
                    if k.eq_ignore_ascii_case("authorization") {
                        auth = Some(v.strip_prefix("Bearer ").unwrap_or(v).to_string());
                        continue;
                    }
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| format!("bad header name `{k}`: {e}"))?;
                    let value = http::HeaderValue::from_str(v)
                        .map_err(|e| format!("bad value for header `{k}`: {e}"))?;
                    custom.insert(name, value);
                }
                let mut config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                if let Some(auth) = auth {
                    config = config.auth_header(auth);
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| format!("cannot connect to {url}: {}", short(e)))?;
                (service, None)
            }
        };
        let listing = list(&service, self.name()).await?;
        Ok((
            Connection {
                service,
                _child: child,
            },
            listing,
        ))
    }

    /// Runs `request` on the live connection under `timeout` and `cancel`.
    /// A connection that closed during the request is dropped, so the next
    /// use starts the server again.
    async fn request<T, F, Fut>(
        &self,
        opts: &HubOptions,
        cancel: &CancellationToken,
        request: F,
    ) -> Result<T, McpError>
    where
        F: FnOnce(rmcp::Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let conn = tokio::select! {
            c = self.ensure(opts) => c?,
            () = cancel.cancelled() => return Err(McpError::Cancelled),
        };
        let timeout = self
            .config
            .timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(opts.call_timeout);
        let peer = conn.service.peer().clone();
        // Dropping the request future sends `notifications/cancelled`.
        let outcome = tokio::select! {
            r = request(peer) => r,
            () = tokio::time::sleep(timeout) => {
                return Err(McpError::Timeout { server: self.name().into(), secs: timeout.as_secs() });
            }
            () = cancel.cancelled() => return Err(McpError::Cancelled),
        };
        match outcome {
            Ok(v) => Ok(v),
            Err(e) => {
                // Give the process a moment to be seen as gone.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let closed = conn.is_closed()
                    || matches!(
                        e,
                        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)
                    );
                if closed {
                    let mut slot = self.conn.lock().await;
                    if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, &conn)) {
                        *slot = None;
                    }
                    let why = match self.tail.last_line() {
                        Some(line) => format!(
                            "stopped during the request (last stderr: {line}); North starts it again on the next use"
                        ),
                        None => "stopped during the request; North starts it again on the next use"
                            .to_string(),
                    };
                    self.set_state(ServerState::Failed, Some(why.clone()));
                    return Err(McpError::Request {
                        server: self.name().into(),
                        message: why,
                    });
                }
                Err(McpError::Request {
                    server: self.name().into(),
                    message: short(e),
                })
            }
        }
    }
}

async fn list(
    service: &RunningService<RoleClient, Handler>,
    server: &str,
) -> Result<Listing, String> {
    let caps = service
        .peer()
        .peer_info()
        .map(|info| serde_json::to_value(&info.capabilities).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let has = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
    let mut listing = Listing::default();
    if has("tools") {
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {}", short(e)))?;
        listing.tools = tools
            .into_iter()
            .map(|t| {
                let name = t.name.to_string();
                RemoteTool {
                    exposed: exposed_name(server, &name),
                    description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    name,
                }
            })
            .collect();
    }
    if has("resources") {
        // Resources and prompts are extras: a server failing to list them
        // still offers its tools.
        if let Ok(resources) = service.peer().list_all_resources().await {
            listing.resources = resources
                .into_iter()
                .filter_map(|r| {
                    let v = serde_json::to_value(&r).ok()?;
                    Some(ResourceInfo {
                        uri: v.get("uri")?.as_str()?.to_string(),
                        name: v
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        mime_type: v.get("mimeType").and_then(Value::as_str).map(String::from),
                    })
                })
                .collect();
        }
    }
    if has("prompts")
        && let Ok(prompts) = service.peer().list_all_prompts().await
    {
        listing.prompts = prompts
            .into_iter()
            .map(|p| PromptInfo {
                name: p.name.to_string(),
                description: p.description.clone().unwrap_or_default(),
                arguments: p
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| (a.name.to_string(), a.required.unwrap_or(false)))
                    .collect(),
            })
            .collect();
    }
    Ok(listing)
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

    /// The text of resource `uri` on `server` (binary parts are saved as
    /// attachments and named).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<String, McpError> {
        let s = self.server(server)?;
        let params: ReadResourceRequestParams =
            serde_json::from_value(serde_json::json!({ "uri": uri })).map_err(|e| {
                McpError::Request {
                    server: server.into(),
                    message: e.to_string(),
                }
            })?;
        let result = s
            .request(&self.opts, cancel, |peer| async move {
                peer.read_resource(params).await
            })
            .await?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let mut text = String::new();
        for part in value
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = part.get("text").and_then(Value::as_str) {
                text.push_str(t);
            } else if let Some(blob) = part.get("blob").and_then(Value::as_str) {
                let mime = part
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("application/octet-stream");
                match crate::result::save_attachment(&self.opts.attachments, blob, mime) {
                    Ok(path) => text.push_str(&format!(
                        "[binary {mime} content saved to {}]",
                        path.display()
                    )),
                    Err(e) => text.push_str(&format!("[binary {mime} content not saved: {e}]")),
                }
            }
        }
        Ok(text)
    }

    /// The messages of prompt `name` on `server` with `arguments`, as text
    /// (each message's role, then its text).
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<String, McpError> {
        let s = self.server(server)?;
        let params: GetPromptRequestParams =
            serde_json::from_value(serde_json::json!({ "name": name, "arguments": arguments }))
                .map_err(|e| McpError::Request {
                    server: server.into(),
                    message: e.to_string(),
                })?;
        let result = s
            .request(&self.opts, cancel, |peer| async move {
                peer.get_prompt(params).await
            })
            .await?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let mut out = Vec::new();
        for message in value
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let content = message.get("content").cloned().unwrap_or(Value::Null);
            let text = match content.get("text").and_then(Value::as_str) {
                Some(t) => t.to_string(),
                None => match content.get("resource").and_then(|r| r.get("text")) {
                    Some(Value::String(t)) => t.clone(),
                    _ => content.to_string(),
                },
            };
            out.push(text);
        }
        Ok(out.join("\n\n"))
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        for server in &self.servers {
            let conn = server.conn.lock().await.take();
            if let Some(conn) = conn
                && let Ok(mut conn) = Arc::try_unwrap(conn)
            {
                let _ = conn
                    .service
                    .close_with_timeout(Duration::from_secs(2))
                    .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::exposed_name;

    #[test]
    fn exposed_names_fit_provider_rules_and_stay_distinct() {
        assert_eq!(exposed_name("fs", "read_file"), "mcp__fs__read_file");
        let a = exposed_name("fs", "read.file");
        let b = exposed_name("fs", "read file");
        assert!(a.starts_with("mcp__fs__read_file_"));
        assert_ne!(a, b);
        let long = exposed_name("server", &"x".repeat(100));
        assert!(long.len() <= 64);
        let ok = |n: &str| {
            n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        assert!(ok(&a) && ok(&b) && ok(&long));
    }
}
