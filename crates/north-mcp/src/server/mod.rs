//! One configured server: its connection (a stdio child or streamable
//! HTTP), what it listed, its state, and the request wrapper that bounds
//! every request by a timeout and a cancel and notices a server that
//! stopped, so the next use starts it again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use north_tools::shell::LiveOutput;
use rmcp::RoleClient;
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, Transport};
use crate::oauth::{self, Challenge, LoginTarget, MAX_AUTHORIZATIONS};
use crate::status::{HubOptions, McpError, RemoteTool, ServerState, ServerStatus};
use crate::stdio::StderrTail;

mod connect;
mod handler;
mod listing;
mod observed;

pub(crate) use connect::Connection;
pub(crate) use handler::ConnectFailure;
pub(crate) use listing::{Listing, exposed_name};

/// One configured server.
pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    pub(crate) conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
    pub(crate) listing: Mutex<Listing>,
    pub(crate) state: Mutex<(ServerState, Option<String>)>,
    pub(crate) tail: StderrTail,
    pub(crate) live: Arc<Mutex<Option<LiveOutput>>>,
}

pub(super) fn short(e: impl std::fmt::Display) -> String {
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
        let mut authorizations = 0;
        let result = loop {
            let started = tokio::time::timeout(opts.connect_timeout, self.connect(opts)).await;
            match started {
                Ok(Ok((conn, listing))) => {
                    if let Ok(mut l) = self.listing.lock() {
                        *l = listing;
                    }
                    let conn = Arc::new(conn);
                    *slot = Some(conn.clone());
                    self.set_state(ServerState::Ready, None);
                    return Ok(conn);
                }
                // A login (or more scope) outside the connect timeout: the
                // user may take a while in the browser.
                Ok(Err(ConnectFailure::Auth(challenge))) => {
                    match self.authorize(opts, &challenge, &mut authorizations).await {
                        Ok(()) => continue,
                        Err(message) => {
                            self.set_state(ServerState::NeedsLogin, Some(message.clone()));
                            return Err(McpError::Start {
                                server: self.name().into(),
                                message,
                            });
                        }
                    }
                }
                Ok(Err(ConnectFailure::Other(message))) => break message,
                Err(_) => {
                    break format!(
                        "it did not finish starting within {} s",
                        opts.connect_timeout.as_secs()
                    );
                }
            }
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

    /// Answers a server's `challenge`: a login (or a step up to more
    /// scope) when one may start here and the limit is not reached, else
    /// why not and which command logs in.
    pub(crate) async fn authorize(
        &self,
        opts: &HubOptions,
        challenge: &str,
        authorizations: &mut u32,
    ) -> Result<(), String> {
        let what = match oauth::challenge_kind(challenge) {
            Challenge::Login => "needs you to log in",
            Challenge::MoreScope => "needs more access than your login gives",
        };
        let command = format!("north mcp login {}", self.name());
        if *authorizations >= MAX_AUTHORIZATIONS {
            return Err(format!(
                "{what}, and {MAX_AUTHORIZATIONS} authorizations did not satisfy it; check the account's permissions, then run `{command}`"
            ));
        }
        let (Some(store), Transport::Http { url, .. }) =
            (self.token_file(opts), &self.config.transport)
        else {
            return Err(format!("{what}, and North has no place to keep tokens"));
        };
        if !opts.oauth.interactive {
            return Err(format!("{what}: run `{command}`"));
        }
        *authorizations += 1;
        let config = self
            .config
            .expanded(&north_secrets::var)
            .map_err(|e| format!("in its configuration: {e}"))?;
        let target = LoginTarget {
            name: self.name(),
            url,
            config: config.oauth.as_ref(),
            challenge: Some(challenge),
        };
        self.set_state(ServerState::NeedsLogin, Some(format!("{what}: logging in")));
        let announce = opts.announce.clone();
        oauth::login(&target, &store, &move |line: &str| announce.say(line))
            .await
            .map_err(|e| format!("{what}, and the login failed: {e}; try `{command}`"))
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
        F: Fn(rmcp::Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let mut authorizations = 0;
        loop {
            match self.request_once(opts, cancel, &request).await {
                Err(Attempt::Challenged(challenge)) => {
                    // A login or step up, then the request once more on a
                    // fresh connection with the new token.
                    let conn = self.conn.lock().await.take();
                    drop(conn);
                    if let Err(message) =
                        self.authorize(opts, &challenge, &mut authorizations).await
                    {
                        self.set_state(ServerState::NeedsLogin, Some(message.clone()));
                        return Err(McpError::Request {
                            server: self.name().into(),
                            message,
                        });
                    }
                }
                Err(Attempt::Failed(e)) => return Err(e),
                Ok(v) => return Ok(v),
            }
        }
    }

    async fn request_once<T, F, Fut>(
        &self,
        opts: &HubOptions,
        cancel: &CancellationToken,
        request: &F,
    ) -> Result<T, Attempt>
    where
        F: Fn(rmcp::Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let conn = tokio::select! {
            c = self.ensure(opts) => c?,
            () = cancel.cancelled() => return Err(McpError::Cancelled.into()),
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
                return Err(McpError::Timeout { server: self.name().into(), secs: timeout.as_secs() }.into());
            }
            () = cancel.cancelled() => return Err(McpError::Cancelled.into()),
        };
        match outcome {
            Ok(v) => Ok(v),
            Err(e) if e.auth_challenge().is_some() => Err(Attempt::Challenged(
                e.auth_challenge().unwrap_or_default().to_string(),
            )),
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
                    }
                    .into());
                }
                Err(McpError::Request {
                    server: self.name().into(),
                    message: short(e),
                }
                .into())
            }
        }
    }
}

/// How one try of a request ended, when not with its result.
enum Attempt {
    /// The server asked for authorization (its `WWW-Authenticate`).
    Challenged(String),
    /// Anything else.
    Failed(McpError),
}

impl From<McpError> for Attempt {
    fn from(e: McpError) -> Self {
        Attempt::Failed(e)
    }
}
