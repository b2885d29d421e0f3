//! The mesh (`north mesh "goal"`, spec/mesh.md): a planner decomposes the
//! goal into a typed list of [`Step`]s, an executor carries the steps out
//! strictly with the tools `read`, `write` and `bash`, and a memory agent
//! summarizes the execution log into a durable [`MemoryEntry`] in the
//! project memory (`.north/memory.json`, the file North's retrieval reads).
//!
//! - The planner and the memory agent are [`RoleAgent`]s (one model call,
//!   the spec's role as system prompt, their prompts built with north-prompt;
//!   the plan is parsed as structured output).
//! - The executor is an [`Agent`] (tool loop, approvals, trace, checkpoints)
//!   over the mesh tools behind the policy. Its first input holds the goal,
//!   the plan, the last five memories and the policy; each step is one turn.
//! - The policy ([`MeshPolicy`], from `policy.json` or a preset) is enforced
//!   by a gate around every tool before it runs; each decision is an
//!   [`AuditEntry`] in the session trace (kind `policy`), the log (target
//!   `north::audit`) and the event stream.
//!
//! Progress is a stream of [`MeshEvent`]s: the agent's events plus the plan,
//! steps, policy decisions, the memory written and the end ([`MeshStatus`]).
//!
//! # Extension points
//!
//! **Adding a tool.** Implement [`north_tools::Tool`] (a spec and an async
//! `call`), then register it with [`Mesh::with_tool`] and the [`ToolRule`]
//! the policy layer checks before every call — the Rust form of the spec's
//! "define the tool, register it in TOOLS, add policy enforcement":
//!
//! ```ignore
//! let mesh = Mesh::new(backend, ctx, policy, approver, redactor, opts)?
//!     .with_tool(Arc::new(WordCount), |args: &Value, policy: &MeshPolicy, _ctx: &ToolContext| {
//!         match args["path"].as_str() {
//!             Some(p) if !p.contains("..") => Ok(()),
//!             _ => Err("Command denied by policy: path must stay in the project".into()),
//!         }
//!     });
//! ```
//!
//! The tool is offered to the executor under its spec's name; refusals reach
//! the model as `ok:false` with the rule's message, and are audited like the
//! built-in checks. A tool whose spec asks for `write` approval goes through
//! the reviewed edit pipeline (`--approve-edits`), `shell` through command
//! approval, `net` through capabilities.
//!
//! **Adding an agent.** Implement [`MeshAgent`] (usually around a
//! [`RoleAgent`], the counterpart of the spec's `CustomAgent(Agent)`) and
//! add it with [`Mesh::with_agent`]. It runs after the executor, reads the
//! [`ExecutionLog`], and may return a note that joins the log the memory
//! agent summarizes:
//!
//! ```ignore
//! struct Reviewer(RoleAgent);
//! impl MeshAgent for Reviewer {
//!     fn name(&self) -> &str { "reviewer" }
//!     fn run<'a>(&'a self, log: &'a ExecutionLog, cancel: &'a CancellationToken)
//!         -> BoxFuture<'a, Result<Option<String>, LlmError>> {
//!         Box::pin(async move { Ok(Some(self.0.ask(&log.render(), cancel).await?)) })
//!     }
//! }
//! let reviewer = RoleAgent::new("reviewer", "You check results for mistakes.", backend, model);
//! let mesh = mesh.with_agent(Arc::new(Reviewer(reviewer)));
//! ```
//!
//! **Adding a model adapter** needs nothing here: the mesh runs on any
//! `north_llm::Backend`.
//!
//! Module map, lowest first (the types the modules share live in this file):
//! - `gate`: the policy enforcement layer around every mesh tool
//! - `prompts`: the planner's, executor's and memory agent's prompts
//! - `log`: the execution log the memory agent reads (uses `prompts`)
//! - `role`: role agents, one model call with a role as system prompt (uses `log`)
//! - `events`: what a run emits (uses `gate`, `prompts`)
//! - `run`: one run, plan → execute → extra agents → remember (uses `events`, `prompts`)

mod events;
mod gate;
mod log;
mod prompts;
mod role;
mod run;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use north_llm::Backend;
use north_policy::MeshPolicy;
use north_prompt::{PromptRenderError, PromptValidationError};
use north_tools::tools::mesh_tools_with;
use north_tools::{Registry, Tool, ToolContext};

pub use events::{MeshEvent, MeshNote, MeshPhase, MeshStatus};
pub use gate::{Audit, AuditEntry, RuleRefusal, ToolRule, Verdict};
pub use log::{AgentNote, CallLog, ExecutionLog, RESULT_CHARS, StepLog};
pub use prompts::{
    EXECUTOR_ROLE, MEMORY_ROLE, PLANNER_ROLE, Prompts, Step, memory_text, plan_text, policy_text,
};
pub use role::{MeshAgent, RoleAgent};
pub use run::MeshReport;

use gate::{Gated, Kind, Shared};
use north_agent::AgentOptions;
use north_agent::approval::Approver;
use north_agent::memory::{MemoryEntry, MemoryFile};
use north_agent::redact::Redactor;
use north_agent::store::StoreError;
use north_runtime::{AgentParts, LiveSession, RuntimeError};

/// How many recent memories the executor sees (the spec's context window).
pub(crate) const MEMORY_CONTEXT: usize = 5;

/// Why a mesh could not be built or a stage failed.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// A built-in prompt template is invalid (a bug).
    #[error("mesh prompt template is invalid: {0}")]
    Prompt(#[from] PromptValidationError),
    /// A prompt did not render.
    #[error("mesh prompt did not render: {0}")]
    Render(#[from] PromptRenderError),
    /// The session or memory store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a mesh runs.
#[derive(Debug, Clone)]
pub struct MeshOptions {
    /// The executor agent's options; provider, model and `max_tokens` are
    /// used by the planner and the memory agent too.
    pub agent: AgentOptions,
    /// Recent memories given to the executor (default [`MEMORY_CONTEXT`]).
    pub memory_context: usize,
    /// Longest memory summary kept, in characters (default 600).
    pub summary_chars: usize,
}

impl Default for MeshOptions {
    fn default() -> Self {
        MeshOptions {
            agent: AgentOptions::default(),
            memory_context: MEMORY_CONTEXT,
            summary_chars: 600,
        }
    }
}

/// The planner → executor → memory pipeline for one project.
pub struct Mesh {
    backend: Arc<dyn Backend>,
    ctx: ToolContext,
    policy: MeshPolicy,
    approver: Arc<dyn Approver>,
    redactor: Redactor,
    opts: MeshOptions,
    prompts: Prompts,
    extra_tools: Vec<(Arc<dyn Tool>, Arc<dyn ToolRule>)>,
    agents: Vec<Arc<dyn MeshAgent>>,
    /// The user's (and a trusted project's) hooks, run around the
    /// executor's tool calls as in every other front end.
    hooks: Option<Arc<north_agent::hooks::Hooks>>,
    /// Tools found at run time (the user's MCP servers).
    sources: Vec<Arc<dyn north_tools::ToolSource>>,
}

impl std::fmt::Debug for Mesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mesh")
            .field("root", &self.ctx.root)
            .field("policy", &self.policy)
            .field("opts", &self.opts)
            .field(
                "extra_tools",
                &self
                    .extra_tools
                    .iter()
                    .map(|(t, _)| t.spec().name)
                    .collect::<Vec<_>>(),
            )
            .field(
                "agents",
                &self.agents.iter().map(|a| a.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Mesh {
    /// A mesh working in `ctx.root` under `policy`. `approver` decides
    /// commands the policy allows and edits the policy enables (headless:
    /// [`north_agent::FlagApprover`] from `--allow-shell`, `--approve-edits`, `--yes`).
    pub fn new(
        backend: Arc<dyn Backend>,
        ctx: ToolContext,
        policy: MeshPolicy,
        approver: Arc<dyn Approver>,
        redactor: Redactor,
        opts: MeshOptions,
    ) -> Result<Mesh, MeshError> {
        Ok(Mesh {
            backend,
            ctx,
            policy,
            approver,
            redactor,
            opts,
            prompts: Prompts::new()?,
            extra_tools: Vec::new(),
            hooks: None,
            sources: Vec::new(),
            agents: Vec::new(),
        })
    }

    /// Adds a tool for the executor, checked by `rule` before every call.
    /// A tool named like a built-in one (`read`, `write`, `bash`) replaces it.
    #[must_use]
    pub fn with_tool(mut self, tool: Arc<dyn Tool>, rule: impl ToolRule + 'static) -> Self {
        self.extra_tools.push((tool, Arc::new(rule)));
        self
    }

    /// Runs `hooks` around the executor's tool calls (PreToolUse can block
    /// a step's command) and at its session's start and end.
    #[must_use]
    pub fn with_hooks(mut self, hooks: Arc<north_agent::hooks::Hooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Offers the executor the tools of `source` (an MCP hub's), each
    /// audited like the built-in ones and approved as its spec says.
    #[must_use]
    pub fn with_tool_source(mut self, source: Arc<dyn north_tools::ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// Adds an agent that runs after the executor (see the module docs).
    #[must_use]
    pub fn with_agent(mut self, agent: Arc<dyn MeshAgent>) -> Self {
        self.agents.push(agent);
        self
    }

    /// The policy in force.
    pub fn policy(&self) -> &MeshPolicy {
        &self.policy
    }

    /// The project memory file the mesh reads and appends to.
    pub fn memory(&self) -> MemoryFile {
        MemoryFile::project(&self.ctx.root)
    }

    /// The last memories the executor will see, oldest first.
    pub(crate) fn recent_memories(&self) -> Result<Vec<MemoryEntry>, StoreError> {
        self.memory().recent(self.opts.memory_context)
    }

    /// The executor's tools, each behind the policy, auditing into `audit`.
    pub fn tools(&self, audit: Arc<Audit>) -> Registry {
        let shared = Arc::new(Shared {
            policy: self.policy.clone(),
            trust: self.opts.agent.project_trust.clone(),
            audit,
            approver: self.approver.clone(),
            calls: AtomicU64::new(0),
        });
        let mut registry = Registry::new();
        let builtin = mesh_tools_with(&self.policy);
        for name in builtin.names() {
            let kind = match name.as_str() {
                "read" => Kind::Read,
                "write" => Kind::Write,
                "bash" => Kind::Bash,
                // A future built-in without a rule of its own is still audited.
                _ => Kind::Custom(Arc::new(
                    |_: &serde_json::Value, _: &MeshPolicy, _: &ToolContext| Ok(()),
                )),
            };
            if let Some(inner) = builtin.get(&name) {
                registry.register(Arc::new(Gated {
                    inner: inner.clone(),
                    kind,
                    shared: shared.clone(),
                }));
            }
        }
        for (tool, rule) in &self.extra_tools {
            registry.register(Arc::new(Gated {
                inner: tool.clone(),
                kind: Kind::Custom(rule.clone()),
                shared: shared.clone(),
            }));
        }
        for source in &self.sources {
            registry.add_source(Arc::new(gate::GatedSource {
                inner: source.clone(),
                shared: shared.clone(),
            }));
        }
        registry
    }

    /// A role agent on this mesh's backend and model.
    pub(crate) fn role_agent(&self, name: &str, role: &str) -> RoleAgent {
        RoleAgent::new(
            name,
            role,
            self.backend.clone(),
            self.opts.agent.model.clone(),
        )
        .with_max_tokens(self.opts.agent.max_tokens)
    }

    fn executor(
        &self,
        session: north_agent::store::Session,
        audit: Arc<Audit>,
    ) -> Result<LiveSession, RuntimeError> {
        // The user's hooks and grants (`--grant`) hold for the executor as
        // for exec: the runtime puts the agent together the one way.
        AgentParts {
            backend: self.backend.clone(),
            tools: self.tools(audit),
            ctx: self.ctx.clone(),
            approver: self.approver.clone(),
            session,
            redactor: self.redactor.clone(),
            options: AgentOptions {
                role: Some(EXECUTOR_ROLE.to_string()),
                ..self.opts.agent.clone()
            },
            hooks: self.hooks.clone(),
            grants: self.ctx.capabilities.clone(),
        }
        .build()
    }
}
