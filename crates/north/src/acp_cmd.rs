//! `north acp`: North as an Agent Client Protocol agent for one editor
//! connection on stdin/stdout (Zed, JetBrains IDEs, Neovim). Stdout carries
//! only the protocol; logs go to the log file and stderr.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use north_acp::{EditorForms, EditorServer, OpenError, SessionFactory, SessionSetup};
use north_agent::redact::Redactor;
use north_agent::{Agent, Approver};
use north_protocol::{Capability, PermissionMode};

use crate::args::{Mode, ModelArgs};
use crate::{logging, setup};

/// `north acp` options.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Model and project options (`--path` is ignored: each session's
    /// project is the editor's `cwd`).
    #[command(flatten)]
    pub model: ModelArgs,
    /// Grant a capability (`net`, `net:<domain>`) to every session; repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<Capability>,
    /// Permission mode sessions start in [default: the config key `mode`, else ask].
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
}

struct Factory {
    model: ModelArgs,
    grants: Vec<Capability>,
    mode: Option<PermissionMode>,
    redactor: Redactor,
}

impl Factory {
    fn open_agent(
        &self,
        cwd: &Path,
        resume: Option<&str>,
        approver: Arc<dyn Approver>,
        setup: SessionSetup,
    ) -> anyhow::Result<Agent> {
        let mut model = self.model.clone();
        model.path = Some(cwd.to_path_buf());
        // No one to ask about trust here: a project's own settings apply
        // only when it was trusted before (`north trust`).
        let mut project = setup::project(&model, &crate::args::RunFlags::default(), None)?;
        project.grant(&self.grants);
        let choice = match resume {
            Some(id) => setup::SessionChoice::Resume(id.to_string()),
            None => setup::SessionChoice::New,
        };
        let session = project.session(&choice)?;
        let editor = setup.servers.into_iter().map(editor_server).collect();
        let mcp = crate::mcp_setup::mcp_hub_with(&project, false, editor, None);
        if let Some(hub) = &mcp {
            if let Some(forms) = setup.forms {
                hub.set_elicitor(Arc::new(EditorElicitor(forms)));
            }
            hub.start_all();
        }
        // Sub-agents with a `model:` of their own start it, as in the
        // terminal.
        crate::builder::AgentBuilder::default()
            .grants(&self.grants)
            .mcp(mcp)
            .models(&model)
            .build(
                &project,
                approver,
                session,
                self.redactor.clone(),
                Some(self.mode.unwrap_or(project.config.mode.value)),
            )
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

impl SessionFactory for Factory {
    fn open(
        &self,
        cwd: &Path,
        resume: Option<&str>,
        approver: Arc<dyn Approver>,
        setup: SessionSetup,
    ) -> Result<Agent, OpenError> {
        self.open_agent(cwd, resume, approver, setup).map_err(|e| {
            let message = self.redactor.scrub(&format!("{e:#}")).into_owned();
            tracing::error!(error = %message, "cannot open a session for the editor");
            OpenError(message)
        })
    }
}

/// Runs `north acp`.
pub fn main(args: AcpArgs) -> ExitCode {
    let redactor = Redactor::from_env();
    let log = logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north acp starting");
    let factory = Factory {
        model: args.model,
        grants: args.grants,
        mode: args.mode.map(PermissionMode::from),
        redactor,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("north: error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(north_acp::serve(Arc::new(factory))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("north: error: the editor connection failed: {e}");
            ExitCode::from(1)
        }
    }
}
