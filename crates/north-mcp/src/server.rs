//! One configured server: its connection (a stdio child or streamable
//! HTTP), what it listed, its state, and the request wrapper that bounds
//! every request by a timeout and a cancel and notices a server that
//! stopped, so the next use starts it again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use north_tools::shell::LiveOutput;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, Transport};
use crate::status::{
    HubOptions, McpError, PromptInfo, RemoteTool, ResourceInfo, ServerState, ServerStatus,
};
use crate::stdio::{self, StderrTail};

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
pub(crate) struct Connection {
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
pub(crate) struct Listing {
    pub(crate) tools: Vec<RemoteTool>,
    pub(crate) resources: Vec<ResourceInfo>,
    pub(crate) prompts: Vec<PromptInfo>,
}

/// One configured server.
pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    pub(crate) conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
    pub(crate) listing: Mutex<Listing>,
    pub(crate) state: Mutex<(ServerState, Option<String>)>,
    pub(crate) tail: StderrTail,
    pub(crate) live: Arc<Mutex<Option<LiveOutput>>>,
}

/// Tool names must fit providers' rules: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn exposed_name(server: &str, tool: &str) -> String {
    let clean = north_protocol::wire_safe(tool);
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
    pub(crate) fn new(config: ServerConfig) -> Self {
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

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn set_state(&self, state: ServerState, error: Option<String>) {
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

    pub(crate) fn status(&self) -> ServerStatus {
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
    pub(crate) async fn ensure(&self, opts: &HubOptions) -> Result<Arc<Connection>, McpError> {
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
            .expanded(&north_secrets::var)
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

    /// Closes the connection (a stdio server's process group is killed
    /// when its guard drops).
    pub(crate) async fn close(&self) {
        let conn = self.conn.lock().await.take();
        if let Some(conn) = conn
            && let Ok(mut conn) = Arc::try_unwrap(conn)
        {
            let _ = conn
                .service
                .close_with_timeout(Duration::from_secs(2))
                .await;
        }
    }

    /// Runs `request` on the live connection under `timeout` and `cancel`.
    /// A connection that closed during the request is dropped, so the next
    /// use starts the server again.
    pub(crate) async fn request<T, F, Fut>(
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
                    read_only: t
                        .annotations
                        .as_ref()
                        .and_then(|a| a.read_only_hint)
                        .unwrap_or(false),
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
