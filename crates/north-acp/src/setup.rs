//! What an editor passes for a session besides its directory: the MCP
//! servers it wants North to use (`mcpServers` of `session/new` and
//! `session/load`), and — when it can show forms — a way to ask its user
//! what a server's `elicitation/create` wants.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{CreateElicitationRequest, McpServer};
use futures::future::BoxFuture;
use north_protocol::{ElicitAnswer, ElicitForm};
use serde_json::{Value, json};

/// An MCP server the editor passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorServer {
    /// A child process on stdin/stdout.
    Stdio {
        /// Its name.
        name: String,
        /// The program.
        command: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it.
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP.
    Http {
        /// Its name.
        name: String,
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// The editor's servers North can use; an SSE one (deprecated in MCP) is
/// skipped and said so in the log.
pub(crate) fn editor_servers(servers: &[McpServer]) -> Vec<EditorServer> {
    servers
        .iter()
        .filter_map(|s| match s {
            McpServer::Stdio(s) => Some(EditorServer::Stdio {
                name: s.name.clone(),
                command: s.command.clone(),
                args: s.args.clone(),
                env: s.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect(),
            }),
            McpServer::Http(s) => Some(EditorServer::Http {
                name: s.name.clone(),
                url: s.url.clone(),
                headers: s
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            }),
            other => {
                tracing::warn!(server = ?other, "an MCP server over SSE was not started: North speaks streamable HTTP");
                None
            }
        })
        .collect()
}

/// Asks the editor's user to fill in a server's form.
#[derive(Clone)]
pub struct EditorForms {
    pub(crate) cx: ConnectionTo<Client>,
    pub(crate) session: Arc<OnceLock<String>>,
}

impl EditorForms {
    /// The editor's answer to `form` (declined when the editor fails).
    pub fn ask(&self, form: ElicitForm) -> BoxFuture<'static, ElicitAnswer> {
        let session = self.session.get().cloned().unwrap_or_default();
        let cx = self.cx.clone();
        Box::pin(async move {
            let request = json!({
                "mode": "form",
                "sessionId": session,
                "message": format!("{} asks: {}", form.server, form.message),
                "requestedSchema": form.schema,
            });
            let Ok(request) = serde_json::from_value::<CreateElicitationRequest>(request) else {
                return ElicitAnswer::Decline;
            };
            match cx.send_request(request).block_task().await {
                Ok(response) => answer(&serde_json::to_value(&response).unwrap_or(Value::Null)),
                Err(e) => {
                    tracing::warn!(error = %e, "the editor could not show a server's form; declined");
                    ElicitAnswer::Decline
                }
            }
        })
    }
}

/// The editor's response as North's answer.
fn answer(response: &Value) -> ElicitAnswer {
    match response.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitAnswer::Accept(
            response
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        ),
        Some("cancel") => ElicitAnswer::Cancel,
        _ => ElicitAnswer::Decline,
    }
}

/// What a session is opened with besides its directory.
#[derive(Clone, Default)]
pub struct SessionSetup {
    /// The editor's MCP servers for this session.
    pub servers: Vec<EditorServer>,
    /// Its forms, when it said it shows them.
    pub forms: Option<EditorForms>,
}
