//! The client side of the protocol: what North declares to a server and
//! answers when it asks (progress, the user's input, roots), and why a
//! connection could not be made.

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
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};

use super::short;
use crate::elicit::{ElicitorSlot, Roots};

/// Receives what a server sends on its own: progress of the call in
/// flight, requests for the user's input and for North's roots.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(super) server: String,
    /// Where progress of the call in flight goes (a front end shows it).
    pub(super) live: Arc<Mutex<Option<LiveOutput>>>,
    pub(super) elicitor: ElicitorSlot,
    pub(super) roots: Roots,
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
