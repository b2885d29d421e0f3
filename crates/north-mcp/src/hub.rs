//! The connections to configured servers: started in the background and in
//! parallel, restarted on the next use after a crash, every request bounded
//! by a timeout and cancellable.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use north_tools::shell::LiveOutput;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::server::Server;
use crate::status::{HubOptions, McpError, PromptInfo, RemoteTool, ResourceInfo, ServerStatus};

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
            .request(&self.opts, cancel, |peer| {
                let params = params.clone();
                async move { peer.call_tool(params).await }
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

    /// Logs in to HTTP server `name` (its browser flow, whatever state it
    /// is in) and reconnects with the new tokens; returns where they are.
    pub async fn login(&self, name: &str) -> Result<std::path::PathBuf, McpError> {
        self.login_announcing(name, self.opts.announce.clone())
            .await
    }

    /// [`McpHub::login`], saying what the user must see (the URL) through
    /// `announce`.
    pub async fn login_announcing(
        &self,
        name: &str,
        announce: crate::status::Announcer,
    ) -> Result<std::path::PathBuf, McpError> {
        let server = self.server(name)?;
        let fail = |message: String| McpError::Start {
            server: name.into(),
            message,
        };
        let crate::config::Transport::Http { .. } = &server.config.transport else {
            return Err(fail(
                "it is a stdio server: logins are for HTTP servers".into(),
            ));
        };
        let store = server
            .token_file(&self.opts)
            .ok_or_else(|| fail("North has no state directory to keep tokens in".into()))?;
        let config = server
            .config
            .expanded(&north_secrets::var)
            .map_err(|e| fail(format!("in its configuration: {e}")))?;
        let crate::config::Transport::Http { url, .. } = &config.transport else {
            return Err(fail("not an HTTP server".into()));
        };
        // The server's own challenge names its metadata and scopes.
        let challenge = crate::oauth::probe_challenge(url).await;
        let target = crate::oauth::LoginTarget {
            name,
            url,
            config: config.oauth.as_ref(),
            challenge: challenge.as_deref(),
        };
        crate::oauth::login(&target, &store, &move |line: &str| announce.say(line))
            .await
            .map_err(|e| fail(e.to_string()))?;
        server.close().await;
        server.set_state(crate::status::ServerState::Idle, None);
        Ok(store.path().to_path_buf())
    }

    /// Forgets the tokens of server `name`; `Ok(false)` when there were none.
    pub async fn logout(&self, name: &str) -> Result<bool, McpError> {
        let server = self.server(name)?;
        let Some(store) = server.token_file(&self.opts) else {
            return Ok(false);
        };
        let removed = store.remove().map_err(|e| McpError::Start {
            server: name.into(),
            message: format!("{}: {e}", store.path().display()),
        })?;
        server.close().await;
        Ok(removed)
    }

    /// From now on `elicitor` answers servers' requests for input.
    pub fn set_elicitor(&self, elicitor: Arc<dyn crate::elicit::Elicitor>) {
        self.opts.elicitor.set(elicitor);
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.close())).await;
    }
}
