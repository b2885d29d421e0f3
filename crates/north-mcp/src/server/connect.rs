//! Connecting to a server: a stdio child through North's sandbox, or
//! streamable HTTP — with the stored OAuth token when there is one.

use std::sync::Arc;

use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use rmcp::{RoleClient, ServiceExt};

use super::handler::{ConnectFailure, Handler};
use super::listing::{Listing, list};
use super::observed::{Observed, Seen};
use super::{Server, short};
use crate::config::Transport;
use crate::oauth::{self, TokenFile};
use crate::status::HubOptions;
use crate::stdio;

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

/// How long connecting waits for the server to answer the standalone GET
/// stream (a server without one answers at once, with an error status).
const STREAM_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// `handler` over streamable HTTP with `client`, what it sees noted in
/// `seen`.
async fn serve_http<C>(
    handler: Handler,
    client: C,
    config: StreamableHttpClientTransportConfig,
    url: &str,
    seen: &Arc<Seen>,
) -> Result<RunningService<RoleClient, Handler>, ConnectFailure>
where
    C: StreamableHttpClient + Send + Sync + Clone + 'static,
{
    let client = Observed {
        inner: client,
        seen: seen.clone(),
    };
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
                    &opts.spawner,
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
                let seen = Seen::new();
                let service = match oauth_client {
                    Some(client) => {
                        serve_http(handler, client, transport_config, url, &seen).await?
                    }
                    None => {
                        if let Some(auth) = auth {
                            transport_config = transport_config.auth_header(auth);
                        }
                        let client = reqwest013::Client::new();
                        serve_http(handler, client, transport_config, url, &seen).await?
                    }
                };
                // The server's own requests travel on the GET stream: no
                // call goes out before the server has it.
                seen.stream_ready(STREAM_WAIT).await;
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
