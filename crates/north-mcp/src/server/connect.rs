//! Connecting to a server: a stdio child through North's sandbox, or
//! streamable HTTP — with the stored OAuth token when there is one — and
//! the client side of the protocol (what North declares, what it answers).

use std::sync::{Arc, Mutex};

use north_protocol::{ElicitAnswer, ElicitForm};
use north_tools::shell::LiveOutput;
// Roots are in the 2025-11-25 spec North speaks; rmcp marks them
// deprecated for a later one.
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, Implementation,
    ProgressNotificationParam, ProtocolVersion,
};
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};

use super::listing::{Listing, list};
use super::{Server, short};
use crate::config::Transport;
use crate::elicit::{ElicitorSlot, Roots};
use crate::oauth::{self, TokenFile};
use crate::status::HubOptions;
use crate::stdio;

/// Receives what a server sends on its own: progress of the call in
/// flight, requests for the user's input and for North's roots.
#[derive(Clone)]
pub(crate) struct Handler {
    server: String,
    /// Where progress of the call in flight goes (a front end shows it).
    live: Arc<Mutex<Option<LiveOutput>>>,
    elicitor: ElicitorSlot,
    roots: Roots,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The newest version with the initialize handshake: servers on
        // 2025-06-18 and 2025-11-25 answer it, older ones negotiate down.
        // Forms (asked of the user, or declined with nobody to ask) and
        // roots, whose changes servers hear of.
        let capabilities: ClientCapabilities = serde_json::from_value(
            serde_json::json!({"elicitation": {"form": {}}, "roots": {"listChanged": true}}),
        )
        .unwrap_or_default();
        ClientConfig::new(
            capabilities,
            Implementation::new("north", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .roots
            .list()
            .into_iter()
            .map(|(uri, name)| {
                let mut root = Root::new(uri);
                root.name = Some(name);
                root
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let request = serde_json::to_value(&request).unwrap_or_default();
        let text = |k: &str| {
            request
                .get(k)
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
        };
        // A URL to visit (a login of the server's own) is not a form North
        // shows; it is declined and said so.
        let answer = if request.get("requestedSchema").is_none() || text("mode") == "url" {
            tracing::warn!(server = %self.server, "a URL elicitation was declined: North shows forms only");
            ElicitAnswer::Decline
        } else {
            let form = ElicitForm::from_schema(
                &self.server,
                text("message"),
                request
                    .get("requestedSchema")
                    .unwrap_or(&serde_json::Value::Null),
            );
            self.elicitor.ask(form).await
        };
        let result = match answer {
            ElicitAnswer::Accept(content) => {
                serde_json::json!({"action": "accept", "content": content})
            }
            ElicitAnswer::Decline => serde_json::json!({"action": "decline"}),
            ElicitAnswer::Cancel => serde_json::json!({"action": "cancel"}),
        };
        serde_json::from_value(result)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
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
    pub(crate) service: RunningService<RoleClient, Handler>,
    /// The stdio server's process (killed when the connection is dropped).
    _child: Option<stdio::ChildGuard>,
}

impl Connection {
    pub(super) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// Why connecting failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConnectFailure {
    /// The server asked for authorization: its `WWW-Authenticate`.
    Auth(String),
    /// Anything else, said for the user.
    Other(String),
}

impl ConnectFailure {
    /// A failed request: a challenge when the server sent one.
    pub(super) fn from_service(what: &str, e: rmcp::ServiceError) -> Self {
        match e.auth_challenge() {
            Some(challenge) => ConnectFailure::Auth(challenge.to_string()),
            None => ConnectFailure::Other(format!("{what}: {}", short(e))),
        }
    }
}

impl From<String> for ConnectFailure {
    fn from(s: String) -> Self {
        ConnectFailure::Other(s)
    }
}

/// `handler` over streamable HTTP with `client`.
async fn serve_http<C>(
    handler: Handler,
    client: C,
    config: StreamableHttpClientTransportConfig,
    url: &str,
) -> Result<RunningService<RoleClient, Handler>, ConnectFailure>
where
    C: StreamableHttpClient + Send + Sync + Clone + 'static,
{
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(client, config);
    handler
        .serve(transport)
        .await
        .map_err(|e| match e.auth_challenge() {
            Some(challenge) => ConnectFailure::Auth(challenge.to_string()),
            None => ConnectFailure::Other(format!("cannot connect to {url}: {}", short(e))),
        })
}

impl Server {
    /// The token file of this HTTP server, when tokens have a place.
    pub(crate) fn token_file(&self, opts: &HubOptions) -> Option<TokenFile> {
        let Transport::Http { url, .. } = &self.config.transport else {
            return None;
        };
        let dir = opts.oauth.dir.as_ref()?;
        Some(TokenFile::new(dir, self.name(), url))
    }

    pub(super) async fn connect(
        &self,
        opts: &HubOptions,
    ) -> Result<(Connection, Listing), ConnectFailure> {
        let config = self
            .config
            .expanded(&north_secrets::var)
            .map_err(|e| format!("in its configuration: {e}"))?;
        let handler = Handler {
            server: self.name().into(),
            live: self.live.clone(),
            elicitor: opts.elicitor.clone(),
            roots: opts.roots.clone(),
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
                let mut transport_config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom);
                let oauth_client = match (&auth, self.token_file(opts)) {
                    // A static `Authorization` header is the user's choice.
                    (None, Some(store)) => {
                        oauth::authorized_client(url, config.oauth.as_ref(), &store)
                            .await
                            .map_err(|e| format!("its stored login: {e}"))?
                    }
                    _ => None,
                };
                let service = match oauth_client {
                    Some(client) => serve_http(handler, client, transport_config, url).await?,
                    None => {
                        if let Some(auth) = auth {
                            transport_config = transport_config.auth_header(auth);
                        }
                        serve_http(handler, reqwest013::Client::new(), transport_config, url)
                            .await?
                    }
                };
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
}
