//! How an editor's session is opened: the project at the editor's `cwd`
//! through North's session runtime, with the editor's MCP servers and forms.

use std::path::Path;
use std::sync::Arc;

use north_agent::Approver;
use north_agent::redact::Redactor;
use north_protocol::PermissionMode;
use north_runtime::{
    LiveSession, McpSetup, Project, ProjectOptions, SessionChoice, SessionSpec, Sessions,
};

use crate::setup::{EditorForms, EditorServer, SessionSetup};

/// Why a session could not be opened (shown to the editor).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OpenError(pub String);

/// What every editor session is opened with: the user's flags (the project
/// is each session's `cwd`), the starting mode and the redactor.
pub struct AcpRuntime {
    /// Model, trust, sandbox and grant flags; `path` is replaced by each
    /// session's `cwd`.
    pub options: ProjectOptions,
    /// The mode sessions start in (None: the configuration's `mode`).
    pub mode: Option<PermissionMode>,
    /// What is scrubbed from what the editor and the logs see.
    pub redactor: Redactor,
}

impl AcpRuntime {
    /// The project at `cwd` with its MCP servers started (the user's and
    /// the editor's), ready to open sessions in.
    pub(crate) fn project(&self, cwd: &Path, setup: SessionSetup) -> Result<Sessions, OpenError> {
        let options = ProjectOptions {
            path: Some(cwd.to_path_buf()),
            ..self.options.clone()
        };
        // No one to ask about trust here: a project's own settings apply
        // only when it was trusted before (`north trust`).
        let project = Project::open(&options, None).map_err(|e| self.failed(&e))?;
        for notice in &project.notices {
            tracing::info!(notice = %notice, "opening the project");
        }
        let forms = setup
            .forms
            .map(|f| Arc::new(EditorElicitor(f)) as Arc<dyn north_mcp::elicit::Elicitor>);
        Ok(Sessions::start(
            project,
            self.options.model.clone(),
            None,
            McpSetup {
                login_on_demand: false,
                editor: setup.servers.into_iter().map(editor_server).collect(),
                forms,
                announce: None,
            },
        ))
    }

    /// A session of `sessions` (new, resumed or forked), asking `approver`.
    /// Sub-agents with a `model:` of their own start it, as in the terminal.
    pub(crate) fn session(
        &self,
        sessions: &Sessions,
        choice: SessionChoice,
        approver: Arc<dyn Approver>,
    ) -> Result<LiveSession, OpenError> {
        sessions
            .open(SessionSpec {
                choice,
                approver,
                redactor: self.redactor.clone(),
                mode: self.mode,
            })
            .map_err(|e| self.failed(&e))
    }

    fn failed(&self, e: &north_runtime::RuntimeError) -> OpenError {
        let message = self.redactor.scrub(&e.to_string()).into_owned();
        tracing::error!(error = %message, "cannot open a session for the editor");
        OpenError(message)
    }
}

/// A server the editor passed, as North configures servers.
fn editor_server(server: EditorServer) -> north_mcp::config::ServerConfig {
    use north_mcp::config::{Scope, ServerConfig, Transport};
    let (name, transport) = match server {
        EditorServer::Stdio {
            name,
            command,
            args,
            env,
        } => (
            name,
            Transport::Stdio {
                command: command.display().to_string(),
                args,
                env: env.into_iter().collect(),
                cwd: None,
            },
        ),
        EditorServer::Http { name, url, headers } => (
            name,
            Transport::Http {
                url,
                headers: headers.into_iter().collect(),
            },
        ),
    };
    ServerConfig {
        name: server_name(&name),
        transport,
        timeout_secs: None,
        scope: Scope::Editor,
        disabled: false,
        oauth: None,
    }
}

/// An editor's server name as North's tool names can carry it
/// (`mcp__<server>__<tool>`): letters, digits, `-` and `_`, at most 32.
fn server_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let out: String = out.trim_matches('_').chars().take(32).collect();
    if out.is_empty() { "editor".into() } else { out }
}

/// Servers' forms, shown by the editor.
struct EditorElicitor(EditorForms);

impl north_mcp::elicit::Elicitor for EditorElicitor {
    fn elicit(
        &self,
        form: north_protocol::ElicitForm,
    ) -> futures::future::BoxFuture<'static, north_protocol::ElicitAnswer> {
        self.0.ask(form)
    }
}
