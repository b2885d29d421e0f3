//! Sessions of an open project: the one place an [`Agent`] is put together
//! (tools, MCP servers, grants, hooks, agents and skills, the model factory,
//! the permission modes) and the one place a session ends (its `SessionEnd`
//! hooks, its background jobs) and the project's MCP servers stop.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use north_agent::redact::Redactor;
use north_agent::store::Session;
use north_agent::{Agent, AgentOptions, Approver, Emit, SessionEndReason};
use north_protocol::{Capability, PermissionMode};
use north_tools::{Registry, ToolContext};

use crate::RuntimeError;
use crate::mcp::{McpSetup, attach_mcp, start_hub};
use crate::project::{Project, SessionChoice, assistant_tools, mode_kit};
use crate::provider::ModelChoice;

/// The sessions of one project: the project, its MCP servers (started once,
/// shared by every session opened here) and what every agent is built with.
pub struct Sessions {
    project: Arc<Project>,
    mcp: Option<Arc<north_mcp::McpHub>>,
    max_tokens: Option<u32>,
    models: ModelChoice,
    notices: Vec<String>,
    status_line: Option<Arc<crate::StatusLine>>,
}

/// What opening one session needs: all of it, so no agent is half set up.
pub struct SessionSpec {
    /// New, resumed or forked.
    pub choice: SessionChoice,
    /// Who decides approvals: the person (TUI, editor) or flags.
    pub approver: Arc<dyn Approver>,
    /// What is scrubbed from logs and transcripts.
    pub redactor: Redactor,
    /// The mode to start in; `None`: the configuration's `mode`.
    pub mode: Option<PermissionMode>,
}

impl Sessions {
    /// Starts the project's MCP servers (in the background: call this inside
    /// a Tokio runtime) and makes ready to open sessions. `max_tokens` is the
    /// user's `--max-tokens`; `models` the model flags a custom agent's own
    /// `model` is started with.
    pub fn start(
        project: Project,
        models: ModelChoice,
        max_tokens: Option<u32>,
        mcp: McpSetup,
    ) -> Sessions {
        let (hub, notices) = start_hub(&project, mcp);
        let status_line = crate::StatusLine::for_project(&project).map(Arc::new);
        Sessions {
            status_line,
            project: Arc::new(project),
            mcp: hub,
            max_tokens,
            models,
            notices,
        }
    }

    /// The project.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The status line command the user configured, if any.
    pub fn status_line(&self) -> Option<&Arc<crate::StatusLine>> {
        self.status_line.as_ref()
    }

    /// The MCP servers, when the project has any.
    pub fn mcp(&self) -> Option<&Arc<north_mcp::McpHub>> {
        self.mcp.as_ref()
    }

    /// What the user should hear about the MCP servers' configuration.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Waits up to `timeout` for the MCP servers to connect (a headless
    /// run's first request carries their tools) and returns, for each that
    /// failed, what went wrong.
    pub async fn wait_ready(&self, timeout: std::time::Duration) -> Vec<(String, String)> {
        let Some(hub) = &self.mcp else {
            return Vec::new();
        };
        hub.wait_ready(timeout).await;
        hub.statuses()
            .into_iter()
            .filter_map(|s| s.last_error.map(|e| (s.name, e)))
            .collect()
    }

    /// Opens a session: the agent with the project's tools and the MCP
    /// servers' beside them, the grants, hooks, agents, skills, model
    /// factory and permission modes.
    pub fn open(&self, spec: SessionSpec) -> Result<LiveSession, RuntimeError> {
        let session = self.project.session(&spec.choice)?;
        let project = &self.project;
        let mut tools = assistant_tools(&project.grants);
        crate::project::add_web_tools(&mut tools, project);
        // The language-server tools, where a server is configured or found.
        if project.code.is_some() {
            for tool in north_tools::tools::CodeTool::ALL {
                tools.register(Arc::new(tool));
            }
        }
        if let Some(hub) = &self.mcp {
            tools.add_source(hub.tool_source());
        }
        let mut delegation =
            north_agent::Delegation::new(project.agents.clone(), project.skills.clone());
        let config = project.config.clone();
        let models = self.models.clone();
        let max_tokens = self.max_tokens;
        delegation.models = Some(Arc::new(move |name: &str| {
            crate::project::model_switch(&config, &models, max_tokens, name)
                .map_err(|e| e.to_string())
        }));
        // Only a repository's main tree can give a sub-agent a worktree.
        if north_tools::git::repository_of(&project.root).is_ok_and(|(top, _)| top == project.root)
        {
            delegation.isolate = Some(crate::worktrees::isolator(project.clone()));
        }
        let live = AgentParts {
            backend: project.selected.backend.clone(),
            tools,
            ctx: project.tool_context(),
            approver: spec.approver,
            session,
            redactor: spec.redactor,
            options: project.agent_options(self.max_tokens),
            hooks: (!project.config.hooks.is_empty()).then(|| Arc::new(project.hooks())),
            grants: project.grants.clone(),
        }
        .build()?;
        let mut live = live;
        if let Some(hub) = &self.mcp {
            attach_mcp(&mut live.agent, hub);
        }
        live.agent.set_delegation(delegation);
        live.agent.set_mode_kit(mode_kit(project));
        let mode = spec.mode.unwrap_or(project.config.mode.value);
        live.agent
            .set_mode(mode)
            .map_err(|source| RuntimeError::Mode { mode, source })?;
        Ok(live)
    }

    /// The model `/model NAME` switches to: `provider:model`, or a model
    /// name whose provider the catalogue knows (else the current one's).
    pub fn switch_model(&self, name: &str) -> Result<north_agent::ModelSwitch, RuntimeError> {
        crate::project::model_switch(&self.project.config, &self.models, self.max_tokens, name)
    }

    /// The end of a run, in one place: `live` closes (its `SessionEnd`
    /// hooks run with `reason`, its background jobs stop), then the MCP
    /// servers stop.
    pub async fn close(&self, live: &mut LiveSession, reason: SessionEndReason, emit: &Emit<'_>) {
        live.close(reason, emit).await;
        self.shutdown().await;
    }

    /// Stops the MCP servers. Sessions opened here should be closed first.
    pub async fn shutdown(&self) {
        if let Some(hub) = &self.mcp {
            hub.shutdown().await;
        }
        if let Some(code) = &self.project.code {
            code.shutdown().await;
        }
    }
}

/// Everything an agent is made of, each part required: the one
/// constructor of an [`Agent`] outside the agent crate (sessions of a
/// project, the mesh's executor, `north undo`).
pub struct AgentParts {
    /// The model backend.
    pub backend: Arc<dyn north_llm::Backend>,
    /// The tools offered.
    pub tools: Registry,
    /// The services tools use (root, shell, caches).
    pub ctx: ToolContext,
    /// Who decides approvals.
    pub approver: Arc<dyn Approver>,
    /// The session the conversation is kept in.
    pub session: Session,
    /// What is scrubbed from logs and transcripts.
    pub redactor: Redactor,
    /// Model, budgets, role and the project's trust.
    pub options: AgentOptions,
    /// The user's hooks (None: there are none).
    pub hooks: Option<Arc<north_agent::hooks::Hooks>>,
    /// The user's grants.
    pub grants: Vec<Capability>,
}

impl AgentParts {
    /// The agent, as a session to run and close.
    pub fn build(self) -> Result<LiveSession, RuntimeError> {
        let mut agent = Agent::new(
            self.backend,
            self.tools,
            self.ctx,
            self.approver,
            self.session,
            self.redactor,
            self.options,
        )?;
        if let Some(hooks) = self.hooks {
            agent.set_hooks(hooks);
        }
        for cap in &self.grants {
            agent.grant(cap);
        }
        Ok(LiveSession { agent })
    }
}

/// An open session: the agent to run turns on, closed through
/// [`LiveSession::close`] so its `SessionEnd` hooks run and its background
/// jobs stop however the front end ends.
pub struct LiveSession {
    agent: Agent,
}

impl LiveSession {
    /// A saved session opened to list or rewind its turns (`north undo`):
    /// no model is asked and no tool offered; the agent holds the session's
    /// lock and does the rewinding.
    pub fn for_rewind(
        root: &std::path::Path,
        session: Session,
    ) -> Result<LiveSession, RuntimeError> {
        let script = north_llm::scripted::Script { turns: Vec::new() };
        AgentParts {
            backend: Arc::new(north_llm::scripted::ScriptedBackend::new(script)),
            tools: Registry::default(),
            ctx: ToolContext::new(root.to_path_buf()),
            approver: Arc::new(north_agent::FlagApprover::default()),
            session,
            redactor: Redactor::from_env(),
            options: AgentOptions {
                snapshots: true,
                ..AgentOptions::default()
            },
            hooks: None,
            grants: Vec::new(),
        }
        .build()
    }

    /// Ends the session: `SessionEnd` hooks run with `reason`, background
    /// jobs stop. The agent stays usable for reading what it holds.
    pub async fn close(&mut self, reason: SessionEndReason, emit: &Emit<'_>) {
        self.agent.end_session(reason, emit).await;
    }
}

impl Deref for LiveSession {
    type Target = Agent;

    fn deref(&self) -> &Agent {
        &self.agent
    }
}

impl DerefMut for LiveSession {
    fn deref_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }
}
