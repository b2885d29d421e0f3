//! OAuth 2.1 for HTTP servers, as the MCP authorization spec has it: a
//! 401's challenge starts discovery (protected resource metadata, then the
//! authorization server's, with the OpenID and 2025-03-26 fallbacks —
//! rmcp's authorization manager does these), registration (the entry's
//! own client, a Client ID Metadata Document, or dynamic registration),
//! PKCE and the `resource` parameter, the browser and a loopback callback
//! ([`login`]), tokens in a private file ([`TokenFile`]) refreshed as they
//! expire, and a step up when a call needs more scope.

mod login;
mod store;

use std::path::PathBuf;

use rmcp::transport::AuthClient;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, OAuthClientConfig,
};

pub use login::{LoginTarget, can_open_browser, login};
pub use store::TokenFile;

/// How many authorizations one request may go through (a login, then
/// step-ups for more scope) before North gives up on it.
pub(crate) const MAX_AUTHORIZATIONS: u32 = 3;

/// Why a login failed.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// Discovery, registration or the token exchange failed.
    #[error("{0}")]
    Protocol(AuthError),
    /// The authorization server's metadata could not be fetched.
    #[error("{at}: {problem}")]
    Metadata {
        /// The metadata URL.
        at: String,
        /// What went wrong there.
        problem: MetadataProblem,
    },
    /// The browser never came back, or came back with nothing usable.
    #[error("the login callback failed: {0}")]
    Callback(CallbackProblem),
    /// The user or the authorization server refused (its own words).
    #[error("the authorization server refused: {0}")]
    Denied(String),
    /// The token file could not be written.
    #[error("the tokens could not be saved: {0}")]
    Store(std::io::Error),
}

/// Why the metadata document could not be had.
#[derive(Debug, thiserror::Error)]
pub enum MetadataProblem {
    /// The request or its body failed.
    #[error("{0}")]
    Http(reqwest013::Error),
    /// The body is not metadata.
    #[error("not authorization server metadata: {0}")]
    Json(serde_json::Error),
}

/// Why the browser's return could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum CallbackProblem {
    /// The loopback listener could not be opened.
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port asked for (0: any).
        port: u16,
        /// The OS error.
        source: std::io::Error,
    },
    /// A connection could not be taken or read.
    #[error("{0}")]
    Io(std::io::Error),
    /// The request named no usable URL.
    #[error("{0}")]
    Url(url::ParseError),
    /// The browser never came back.
    #[error("no answer from the browser within {minutes} minutes")]
    TimedOut {
        /// How long North waited.
        minutes: u64,
    },
}

impl OAuthError {
    fn from_auth(e: AuthError) -> Self {
        OAuthError::Protocol(e)
    }
}

/// Where tokens live and whether a login may start on its own.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The directory of token files (the user's state directory).
    pub dir: Option<PathBuf>,
    /// Whether a server asking for a login starts one (a browser can be
    /// opened and someone is there); else North says which command to run.
    pub interactive: bool,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            dir: default_dir(),
            interactive: false,
        }
    }
}

/// `$XDG_STATE_HOME/north/mcp-oauth`.
pub fn default_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .and_then(|x| x.state_dir())
        .map(|d| d.join("north").join("mcp-oauth"))
}

/// What a `WWW-Authenticate` challenge asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// No (valid) token: a login.
    Login,
    /// A token without the scope this needs: a step up.
    MoreScope,
}

/// Reads a challenge's kind.
pub(crate) fn challenge_kind(header: &str) -> Challenge {
    let lower = header.to_ascii_lowercase();
    if lower.contains("insufficient_scope") {
        Challenge::MoreScope
    } else {
        Challenge::Login
    }
}

fn origin(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
}

/// The authorization server's metadata for the server at `url`, by the
/// spec's discovery. One relaxation: a server of the 2025-03-26 spec (no
/// resource metadata; its own origin is its authorization server) whose
/// metadata names an issuer on that same origin but with a path is taken —
/// the same party on both ends, so no mix-up is possible — where strict
/// RFC 8414 matching would refuse it.
pub(crate) async fn resolve_metadata(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, OAuthError> {
    match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => Ok(resolution.metadata),
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if origin(&received_issuer).is_some()
            && origin(&received_issuer) == origin(url)
            && origin(&expected_issuer) == origin(url) =>
        {
            let at = format!(
                "{}/.well-known/oauth-authorization-server",
                origin(url).unwrap_or_default()
            );
            let response = reqwest013::Client::new()
                .get(&at)
                .timeout(std::time::Duration::from_secs(15))
                .send()
                .await
                .map_err(|e| OAuthError::Metadata {
                    at: at.clone(),
                    problem: MetadataProblem::Http(e),
                })?;
            let body = response.bytes().await.map_err(|e| OAuthError::Metadata {
                at: at.clone(),
                problem: MetadataProblem::Http(e),
            })?;
            serde_json::from_slice(&body).map_err(|e| OAuthError::Metadata {
                at,
                problem: MetadataProblem::Json(e),
            })
        }
        Err(e) => Err(OAuthError::from_auth(e)),
    }
}

/// The `WWW-Authenticate` challenge `url` answers an unauthenticated
/// `initialize` with, if it asks for authorization (`north mcp login`
/// starts from it, so discovery follows what the server says).
pub(crate) async fn probe_challenge(url: &str) -> Option<String> {
    crate::install_tls_provider();
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "north", "version": env!("CARGO_PKG_VERSION")}}
    });
    let response = reqwest013::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .timeout(std::time::Duration::from_secs(15))
        .send()
        .await
        .ok()?;
    if !matches!(response.status().as_u16(), 401 | 403) {
        return None;
    }
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// An HTTP client that sends the stored token of the server at `url`
/// (refreshed when it expires), or `None` when there are no tokens.
pub(crate) async fn authorized_client(
    url: &str,
    config: Option<&crate::config::OAuthConfig>,
    store: &TokenFile,
) -> Result<Option<AuthClient<reqwest013::Client>>, OAuthError> {
    if !store.has_tokens() {
        return Ok(None);
    }
    crate::install_tls_provider();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(OAuthError::from_auth)?;
    manager.set_credential_store(store.clone());
    manager.set_metadata(resolve_metadata(&manager, url, None).await?);
    if !manager
        .initialize_from_store()
        .await
        .map_err(OAuthError::from_auth)?
    {
        return Ok(None);
    }
    // The stored record has the client id; a confidential client's
    // secret is set again so refreshes authenticate.
    let secret = config
        .and_then(|c| c.client_secret.clone())
        .or_else(|| store.client_secret());
    if let Some(secret) = secret
        && let Ok(creds) = manager.get_credentials().await
    {
        let id = creds.0;
        manager
            .configure_client(
                OAuthClientConfig::new(id, "http://127.0.0.1/callback").with_client_secret(secret),
            )
            .map_err(OAuthError::from_auth)?;
    }
    Ok(Some(AuthClient::new(reqwest013::Client::new(), manager)))
}
