//! The agent: one session's tool loop.
//!
//! A turn at a glance ([`Agent::run_turn`], in `turn.rs`; the loop is a
//! step function in `step.rs`, each step ending in a typed `Step`):
//!
//! 1. the user input is appended and the checkpoint saved (`history.rs`);
//! 2. the system prompt is built from the product rules, the project card,
//!    `AGENTS.md`, the session state and retrieved memory (`system.rs`);
//! 3. before each model step, condensation runs if the context nears its
//!    budget or a NOTES action asked for it (`condensing.rs`);
//! 4. the model streams; text and thinking reach the front end with
//!    protocol blocks hidden; the stop reason is announced (a `max_tokens`
//!    cut-off with a notice); NOTES patches and actions are applied and
//!    text-protocol tool calls collected, a malformed block answered with
//!    its error (`actions.rs`);
//! 5. calls the model could not finish or form (cut off, invalid JSON, no
//!    name) are kept well-formed and answered with what was wrong
//!    (`malformed.rs`); each other call runs in order (`dispatch.rs`),
//!    asking the user where its approval policy says so (`approvals.rs`);
//!    each result is recorded and checkpointed as soon as it exists
//!    (`history.rs`);
//! 6. the loop ends when the model answers without tools, the step limit is
//!    hit, the user interrupts, or the provider fails.
//!
//! At the start of each turn the tools it offers are decided once
//! (`offer.rs`): background-command and web tools wait until the session
//! needs them, and a turn's requests share one list.
//!
//! Between turns a front end may move the session to another model
//! ([`Agent::switch_model`], `model.rs`).
//!
//! The agent is split by concept: the services it calls and the
//! conversation it holds (`parts.rs`), the turn step (`step.rs`), and the
//! dispatch of each call (`dispatch.rs`, `approvals.rs`), whose commands go
//! through the one orchestrator, `north_policy::orchestrate`, on a
//! context of their own (`ToolContext::for_call`).
//!
//! Front ends see only [`Event`](north_protocol::Event)s through [`Emit`] and
//! answer approvals through an [`Approver`]. Sessions are put together and
//! closed by `north-runtime`, never by a front end.

mod actions;
mod approvals;
mod code_check;
mod condensing;
mod delegate;
mod denial;
mod diff;
mod disclosure;
pub(crate) mod dispatch;
mod expand;
mod history;
mod hooked;
mod images;
mod isolated;
mod malformed;
mod model;
mod modes;
mod offer;
mod parts;
mod rewind;
mod step;
mod stream;
mod system;
mod turn;

pub use delegate::{AGENT_TOOL, Delegation, ModelFactory};
pub use diff::{DiffError, SessionDiff};
pub use dispatch::Describer;
pub use expand::{ExpandError, ExpandedInput, InputExpander};
pub use hooked::SessionEndReason;
pub use images::AttachError;
pub use isolated::{Isolated, Isolator, MERGE_REVIEW};
pub use model::{ModelSwitch, SwitchReport};
pub use modes::{ModeError, ModeKit};
pub use rewind::RewindReport;
pub use turn::{INTERRUPTED_NOTE, is_interrupted_note};

use std::path::PathBuf;
use std::sync::Arc;

use north_llm::Backend;
use north_protocol::{Capability, Event, Message, ReasoningEffort, State, TraceKind, Usage};
use north_tools::{Registry, ToolContext};
use serde_json::json;

use crate::approval::Approver;
use crate::context::ProjectCard;
use crate::redact::Redactor;
use crate::store::{Session, StoreError};
use north_config::ToolProtocol;

/// Where events go: any thread-safe callback (a channel sender, a printer).
pub type Emit<'a> = dyn Fn(Event) + Send + Sync + 'a;

/// A sink that queues events, in order, for a front end that renders them
/// on a loop of its own (`north exec` with the agent's [`Event`]s, `north
/// mesh` with its own): the runtime then calls only code of North's crates
/// while it works, never the front end's.
pub fn event_queue<E: Send + 'static>() -> (
    impl Fn(E) + Send + Sync + Clone + 'static,
    tokio::sync::mpsc::UnboundedReceiver<E>,
) {
    let (sender, events) = tokio::sync::mpsc::unbounded_channel();
    // A front end that stopped reading has ended: nothing is left to show.
    let sink = move |event| {
        let _ = sender.send(event);
    };
    (sink, events)
}

/// How the agent runs.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Provider name (for events and traces).
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Model steps per user turn before stopping.
    pub max_steps: u32,
    /// Native or text tool calls.
    pub tool_protocol: ToolProtocol,
    /// Output tokens per request (from the model's window and limits, see
    /// `north_llm::ModelLimits`).
    pub max_tokens: u32,
    /// Input budget in tokens (system prompt, tools and messages);
    /// condensation keeps requests under it.
    pub context_budget: u64,
    /// The share of the context budget, in percent, at which the
    /// conversation is condensed on its own (the configuration's
    /// `compact_at`; default 85).
    pub compact_at_percent: u8,
    /// How much the model may reason (None: the provider's default).
    pub reasoning: Option<ReasoningEffort>,
    /// Extra memory files searched besides the project's (e.g. global).
    pub extra_memory: Vec<PathBuf>,
    /// Replaces North's product rules at the top of the system prompt, for
    /// agents with a narrower role (e.g. the mesh executor).
    pub role: Option<String>,
    /// Whether the project's own allow rules apply (workspace trust; see
    /// [`crate::trust`]). Library default: they do not.
    pub project_trust: crate::trust::ProjectTrust,
    /// Section overrides of North's system prompt (see
    /// [`context::SYSTEM_PROMPT_NS`](crate::context::SYSTEM_PROMPT_NS)).
    pub prompt_overrides: Option<north_prompt::PromptOverrides>,
    /// Snapshot the working tree before and after each user turn so it can
    /// be undone (see [`crate::undo`]). Library default: off.
    pub snapshots: bool,
    /// Tools the provider runs itself that requests ask for (the user's
    /// `web_search.provider`). Library default: none.
    pub server_tools: Vec<north_protocol::ServerTool>,
    /// Command rules besides the project allowlist's that let commands run
    /// unasked (Claude Code's `allow` in a trusted project). Library
    /// default: none.
    pub shell_allow: north_policy::AllowRules,
    /// Command rules that narrow: never run, always ask (Claude Code's
    /// `deny` and `ask`). Library default: none.
    pub shell_limits: north_policy::LimitRules,
    /// Path rules for reads and edits (Claude Code's `Read(…)` and
    /// `Edit(…)`). Library default: none.
    pub path_rules: north_policy::PathRules,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            provider: "scripted".into(),
            model: "scripted".into(),
            max_steps: 25,
            tool_protocol: ToolProtocol::Native,
            max_tokens: 8192,
            context_budget: 120_000,
            compact_at_percent: north_config::DEFAULT_COMPACT_AT,
            reasoning: None,
            extra_memory: Vec::new(),
            role: None,
            prompt_overrides: None,
            project_trust: crate::trust::ProjectTrust::Untrusted,
            snapshots: false,
            server_tools: Vec::new(),
            shell_allow: north_policy::AllowRules::default(),
            shell_limits: north_policy::LimitRules::default(),
            path_rules: north_policy::PathRules::default(),
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// The model answered without asking for tools.
    Done,
    /// The step limit was reached.
    StepLimit,
    /// The user interrupted.
    Interrupted,
    /// The provider failed after retries; the session is kept.
    ProviderFailed(String),
    /// The system prompt could not be built; nothing was sent to the model.
    PromptFailed(String),
}

/// An agent bound to one session.
pub struct Agent {
    /// What the agent calls: model, tools, approver, trace.
    services: parts::Services,
    /// What it holds: the session, messages, state, usage.
    conv: parts::Conversation,
    opts: AgentOptions,
    card: Option<ProjectCard>,
    /// The system prompt's summarized sections and those the model opened.
    disclosure: disclosure::Disclosure,
    /// The subdirectories whose instruction files were looked for (given
    /// with the first tool result that touched them).
    nested_seen: std::collections::HashSet<PathBuf>,
    /// Exact commands the user chose "Always" for in this session; they
    /// apply even where the project's own rules do not (an untrusted project).
    session_rules: north_policy::AllowRules,
    /// What settling an interrupted edit did at start-up, told at the next turn.
    recovered: Option<north_tools::edit::Recovery>,
    /// Snapshots and turn records for undo (None: off, or unavailable).
    undo: Option<rewind::Undo>,
    /// The permission mode and what it switches between.
    modes: modes::Modes,
    /// Puts outside content (MCP prompts and resources) into user inputs.
    expander: Option<Arc<dyn InputExpander>>,
    /// The user's hooks (None: none configured).
    hooks: Option<Arc<crate::hooks::Hooks>>,
    /// Whether `SessionStart` hooks ran in this process.
    hooks_started: bool,
    /// Why this session starts, when not a start or resume (`clear`: the
    /// user cleared the conversation), for `SessionStart`'s `source`.
    start_source: Option<&'static str>,
    /// Context hooks gave for the next user message.
    hook_context: Vec<String>,
    /// The agents and skills this session may use.
    delegation: Option<delegate::Delegation>,
    /// The `skill` tool over the delegation's skills (None: no skills, or
    /// an agent not allowed them).
    skill_tool: Option<Arc<dyn north_tools::Tool>>,
    /// How deep this agent is (0: the user's; 1: a sub-agent).
    depth: u32,
    /// Whether this agent's definition lets it start sub-agents.
    delegate_allowed: bool,
    /// The tools this turn holds back until the session needs them.
    offer: offer::Offer,
}

/// Why an agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The session could not be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An edit a killed process left half applied could not be settled;
    /// nothing was read or changed.
    #[error("cannot settle an interrupted edit before starting: {0}")]
    Recovery(#[from] north_tools::edit::ApplyError),
    /// The project root is not usable.
    #[error("project root: {0}")]
    Root(#[from] north_tools::sandbox::SandboxError),
}

impl Agent {
    /// An agent on `session`, resuming its checkpoint if it has one.
    pub fn new(
        backend: Arc<dyn Backend>,
        tools: Registry,
        ctx: ToolContext,
        approver: Arc<dyn Approver>,
        session: Session,
        redactor: Redactor,
        opts: AgentOptions,
    ) -> Result<Agent, AgentError> {
        // Nothing is read or written before an interrupted apply is settled.
        let recovery = north_tools::edit::recover(&ctx.sandbox()?)?;
        let tracer = session.tracer(redactor.clone())?;
        let (log, resumed) = session.open_log(redactor.clone())?;
        let modes = modes::Modes {
            mode: north_protocol::PermissionMode::Ask,
            kit: None,
            full_tools: tools.clone(),
            plain_shell: ctx.shell.clone(),
        };
        let mut agent = Agent {
            services: parts::Services {
                backend,
                tools,
                ctx,
                approver,
                tracer,
                redactor,
            },
            conv: parts::Conversation::open(session, log),
            opts,
            card: None,
            disclosure: Default::default(),
            nested_seen: Default::default(),
            start_source: None,
            session_rules: Default::default(),
            recovered: None,
            undo: None,
            modes,
            expander: None,
            hooks: None,
            hooks_started: false,
            hook_context: Vec::new(),
            delegation: None,
            skill_tool: None,
            depth: 0,
            delegate_allowed: true,
            offer: Default::default(),
        };
        if agent.opts.snapshots {
            match rewind::Undo::open(&agent.services.ctx.root, &agent.conv.session) {
                Ok(u) => agent.undo = Some(u),
                // Undo is a convenience: the session still runs without it.
                Err(e) => tracing::warn!(error = %e, "undo unavailable"),
            }
        }
        if !recovery.settled.is_empty() {
            agent.services.tracer.record(
                TraceKind::Recovery,
                json!({"settled": recovery.to_string()}),
            );
            agent.recovered = Some(recovery);
        }
        if let Some(cp) = resumed {
            agent.resume(cp);
        }
        Ok(agent)
    }

    /// Takes up a saved session: its state (never its grants), messages,
    /// usage; calls a killed process left open are closed, and reasoning
    /// another model wrote is dropped.
    fn resume(&mut self, cp: north_protocol::Checkpoint) {
        self.conv.state = cp.state;
        self.conv.state.normalize();
        // Capabilities are the user's to grant in this run: a checkpoint
        // (which a repository could have shipped or edited) never
        // widens them. What was granted before is asked for again.
        let carried = std::mem::take(&mut self.conv.state.capabilities_granted);
        if !carried.is_empty() {
            tracing::info!(
                dropped = carried.len(),
                "grants of the resumed session not carried over"
            );
        }
        self.conv.revision = cp.revision;
        self.conv.messages = cp.messages;
        self.conv.total = cp.usage.unwrap_or_default();
        // What came from the log is on disk as it is; an old session's
        // history (from its checkpoint) is written to the log at the first sync.
        self.conv.clean = self.conv.log.messages_on_disk();
        self.close_interrupted_calls();
        let mut dropped = 0;
        if let Some(previous) = cp.model.filter(|m| *m != self.model()) {
            dropped = self.drop_reasoning();
            self.conv.resumed_from = Some((previous, dropped));
        }
        self.services.tracer.record(
            TraceKind::Resume,
            json!({"revision": self.conv.revision, "messages": self.conv.messages.len(), "model_changed": self.conv.resumed_from.is_some(), "dropped_reasoning": dropped}),
        );
    }

    /// Everything a tool call borrows from the agent, and the call's own
    /// context (the session's services, the grants as they stand).
    fn call_env<'a>(&'a mut self, emit: &'a Emit<'a>) -> dispatch::CallEnv<'a> {
        let escalation = self.escalation_shell();
        let read_only_shell = self.read_only_shell();
        let hook_session = self.hook_session();
        dispatch::CallEnv {
            mode: self.modes.mode,
            escalation,
            read_only_shell,
            typed_by_user: false,
            hook_permission: None,
            hooks: self.hooks.as_ref(),
            hook_session,
            tools: &self.services.tools,
            ctx: self
                .services
                .ctx
                .for_call(self.conv.state.capabilities_granted.clone()),
            approver: &*self.services.approver,
            state: &mut self.conv.state,
            tracer: &self.services.tracer,
            trust: &self.opts.project_trust,
            shell_allow: &self.opts.shell_allow,
            shell_limits: &self.opts.shell_limits,
            path_rules: &self.opts.path_rules,
            session_rules: &mut self.session_rules,
            emit,
        }
    }

    /// This session replaces a conversation the user cleared (`/new`,
    /// `/clear`): its `SessionStart` hooks hear `source: clear`.
    pub fn started_by_clear(&mut self) {
        self.start_source = Some("clear");
    }

    /// Names the session (`/rename`), so `--resume NAME` finds it; an empty
    /// name removes it. Returns the name it has now.
    pub fn rename_session(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.conv.session.rename(name)?;
        Ok(self.conv.session.name())
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.conv.session.id
    }

    /// The current state.
    pub fn state(&self) -> &State {
        &self.conv.state
    }

    /// The conversation.
    pub fn messages(&self) -> &[Message] {
        &self.conv.messages
    }

    /// Usage over the session so far (resumed sessions continue their count).
    pub fn total_usage(&self) -> Usage {
        self.conv.total
    }

    /// Grants a capability on the user's behalf (e.g. `--grant net`).
    pub fn grant(&mut self, cap: &Capability) {
        north_protocol::notes::grant_capability(&mut self.conv.state, cap);
    }
}
