//! The one recipe every front end builds its agent with — `north exec`,
//! the TUI (and each session it opens), `north acp`: the project's provider,
//! trust and sandbox, the assistant's tools with the MCP servers' tools
//! beside them, the grants, the permission modes. Front ends choose only
//! the approver, the session and the starting mode.

use std::sync::Arc;

use north_agent::redact::Redactor;
use north_agent::store::Session;
use north_agent::{Agent, Approver};
use north_protocol::{Capability, PermissionMode};

use crate::mcp_setup::attach_mcp;
use crate::setup::{Project, assistant_tools, mode_kit};

/// What an agent is built with, apart from the project (cheap to clone:
/// the TUI keeps one to open every later session the same way).
#[derive(Clone, Default)]
pub struct AgentBuilder {
    grants: Vec<Capability>,
    mcp: Option<Arc<north_mcp::McpHub>>,
    max_tokens: Option<u32>,
    models: Option<crate::args::ModelArgs>,
}

impl AgentBuilder {
    /// Capabilities the user granted (`--grant`): `net` adds `http.get`.
    pub fn grants(mut self, grants: &[Capability]) -> Self {
        self.grants = grants.to_vec();
        self
    }

    /// The MCP servers whose tools the agent is offered.
    pub fn mcp(mut self, hub: Option<Arc<north_mcp::McpHub>>) -> Self {
        self.mcp = hub;
        self
    }

    /// The user's `--max-tokens`.
    pub fn max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The user's model flags: a custom agent's own `model` is started
    /// with them (without them every agent uses the session's model).
    pub fn models(mut self, args: &crate::args::ModelArgs) -> Self {
        self.models = Some(args.clone());
        self
    }

    /// An agent for `project` on `session`, asking `approver`, starting in
    /// `mode` (None: the agent's own default, for a caller that sets it).
    pub fn build(
        &self,
        project: &Project,
        approver: Arc<dyn Approver>,
        session: Session,
        redactor: Redactor,
        mode: Option<PermissionMode>,
    ) -> anyhow::Result<Agent> {
        let mut tools = assistant_tools(&self.grants);
        crate::setup::add_web_tools(&mut tools, project);
        if let Some(hub) = &self.mcp {
            tools.add_source(hub.tool_source());
        }
        let mut agent = project.agent(tools, approver, session, redactor, self.max_tokens)?;
        for cap in &self.grants {
            agent.grant(cap);
        }
        if let Some(hub) = &self.mcp {
            attach_mcp(&mut agent, hub);
        }
        if !project.config.hooks.is_empty() {
            agent.set_hooks(Arc::new(project.hooks()));
        }
        let mut delegation =
            north_agent::Delegation::new(project.agents.clone(), project.skills.clone());
        if let Some(args) = self.models.clone() {
            let config = project.config.clone();
            let max_tokens = self.max_tokens;
            delegation.models = Some(Arc::new(move |name: &str| {
                crate::setup::model_switch(&config, &args, max_tokens, name)
                    .map_err(|e| format!("{e:#}"))
            }));
        }
        agent.set_delegation(delegation);
        agent.set_mode_kit(mode_kit(project, &self.grants));
        if let Some(mode) = mode {
            agent
                .set_mode(mode)
                .map_err(|e| anyhow::anyhow!("mode {mode}: {e}"))?;
        }
        Ok(agent)
    }
}
