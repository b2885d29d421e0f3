//! Delegation: the `agent` tool runs a sub-agent — a fresh [`Agent`] with
//! the definition's system prompt, only its tools and its model, under the
//! parent's approver, sandbox, trust, grants and hooks — and its final
//! answer is the call's result. Consecutive `agent` calls of one model
//! message run concurrently (bounded); cancelling the turn cancels them
//! all. The `skill` tool loads a skill the system prompt lists.
//!
//! A sub-agent's transcript is a session of its own inside the parent's
//! (`agents/<name>-<call>`); its events reach the front end wrapped in
//! [`Event::Agent`].

use std::sync::Arc;

use futures::StreamExt;
use north_protocol::{ApprovalPolicy, Event, Role, ToolCall, ToolOutcome, ToolSpec};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::isolated::{Isolated, Isolator};
use super::{Agent, AgentError, Emit, ModelSwitch, TurnEnd};
use crate::skills::SkillSet;
use crate::subagents::{AgentDef, AgentSet, Isolation};
use north_worktree::{Registry, Worktree};

/// Builds a sub-agent's model by name (the binary's provider setup).
pub type ModelFactory = Arc<dyn Fn(&str) -> Result<ModelSwitch, String> + Send + Sync>;

/// The `agent` tool's name.
pub const AGENT_TOOL: &str = "agent";

/// What a session may delegate to and load.
#[derive(Clone)]
pub struct Delegation {
    /// The agents the `agent` tool offers.
    pub agents: Arc<AgentSet>,
    /// The skills the system prompt lists and the `skill` tool loads.
    pub skills: Arc<SkillSet>,
    /// How deep sub-agents may nest (1: a sub-agent cannot start one).
    pub max_depth: u32,
    /// How many sub-agents of one message run at once.
    pub parallel: usize,
    /// Builds a definition's own model (None: every agent uses the parent's).
    pub models: Option<ModelFactory>,
    /// Makes a sub-agent's own worktree (None: no agent is isolated here).
    pub isolate: Option<Isolator>,
}

impl Delegation {
    /// The agents and skills, with the defaults: depth 1, 4 at once.
    pub fn new(agents: AgentSet, skills: SkillSet) -> Delegation {
        Delegation {
            agents: Arc::new(agents),
            skills: Arc::new(skills),
            max_depth: 1,
            parallel: 4,
            models: None,
            isolate: None,
        }
    }
}

impl std::fmt::Debug for Delegation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegation")
            .field("agents", &self.agents.names())
            .field("skills", &self.skills.skills().len())
            .field("max_depth", &self.max_depth)
            .field("parallel", &self.parallel)
            .field("isolate", &self.isolate.is_some())
            .finish_non_exhaustive()
    }
}

fn agent_spec(agents: &AgentSet, isolation: bool) -> ToolSpec {
    let list: Vec<String> = agents
        .defs()
        .iter()
        .map(|d| format!("- {}: {}", d.name, d.description))
        .collect();
    let mut properties = json!({
        "agent": {"type": "string", "enum": agents.names()},
        "prompt": {"type": "string"}
    });
    if isolation {
        properties["isolation"] = json!({
            "type": "string",
            "enum": ["worktree"],
            "description": "`worktree`: in a git worktree of its own (parallel agents never collide); its changes come back for review"
        });
    }
    ToolSpec {
        name: AGENT_TOOL.into(),
        description: format!(
            "Hand a task to a sub-agent: a fresh context, its own tools, only its answer comes back (put the whole task in `prompt`). Calls in one message run in parallel. Agents:\n{}",
            list.join("\n")
        ),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": ["agent", "prompt"],
            "additionalProperties": false
        }),
        approval: ApprovalPolicy::None,
    }
}

/// What one planned `agent` call needs before it runs.
struct Planned {
    index: usize,
    call_id: String,
    name: String,
    prompt: String,
    sub: Agent,
    /// Its own worktree, when isolated.
    worktree: Option<(Worktree, Registry)>,
}

impl Agent {
    /// Lets this session delegate to `delegation`'s agents and load its
    /// skills.
    pub fn set_delegation(&mut self, delegation: Delegation) {
        self.skill_tool = delegation.skills.tool();
        self.delegation = Some(delegation);
    }

    /// Whether this session may start sub-agents.
    fn may_delegate(&self) -> bool {
        self.delegation
            .as_ref()
            .is_some_and(|d| self.depth < d.max_depth && !d.agents.defs().is_empty())
            && self.delegate_allowed
    }

    /// The `agent` and `skill` specs this session offers.
    pub(super) fn delegation_tools(&self) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        if let Some(d) = &self.delegation
            && self.may_delegate()
        {
            specs.push(agent_spec(&d.agents, d.isolate.is_some()));
        }
        if let Some(tool) = &self.skill_tool {
            specs.push(tool.spec());
        }
        specs
    }

    /// The skills the system prompt lists (empty: none).
    pub(super) fn skills_listing(&self) -> String {
        match (&self.delegation, &self.skill_tool) {
            (Some(d), Some(_)) => d.skills.listing(),
            _ => String::new(),
        }
    }

    /// Answers a `skill` call; `None` for every other call.
    pub(super) async fn skill_call(&self, call: &ToolCall) -> Option<ToolOutcome> {
        let tool = self.skill_tool.as_ref().filter(|_| call.name == "skill")?;
        let ctx = self
            .services
            .ctx
            .for_call(self.conv.state.capabilities_granted.clone());
        Some(tool.call(call.arguments.clone(), &ctx).await)
    }

    /// Whether `call` is a call of the `agent` tool this session handles.
    pub(super) fn is_agent_call(&self, call: &ToolCall) -> bool {
        call.name == AGENT_TOOL
            && self.delegation.is_some()
            && self.services.tools.get(AGENT_TOOL).is_none()
    }

    /// Runs a run of consecutive `agent` calls of one message: each is
    /// announced and put to the `PreToolUse` hooks, the rest run together,
    /// and each result is recorded (after `PostToolUse`) in call order.
    pub(super) async fn agent_batch(
        &mut self,
        calls: &[ToolCall],
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) {
        let mut runnable: Vec<&ToolCall> = Vec::new();
        for call in calls {
            self.announce(call, emit);
            let hooked = self.pre_tool_hooks(call, emit).await;
            match hooked.block.or(hooked.halt) {
                Some(reason) => self.blocked_by_hook(call, &reason, emit),
                None => runnable.push(call),
            }
        }
        let outcomes = self.run_agents(&runnable, emit, cancel).await;
        for (call, mut outcome) in runnable.into_iter().zip(outcomes) {
            // A hook's `continue: false` after a sub-agent ends nothing more
            // than the sub-agent itself did.
            let _ = self.post_tool_hooks(call, &mut outcome, emit).await;
            self.record_result(call, &outcome, emit);
            self.save(emit);
        }
    }

    /// Runs `calls` (all `agent` calls) concurrently; their outcomes in
    /// order.
    pub(super) async fn run_agents(
        &mut self,
        calls: &[&ToolCall],
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Vec<ToolOutcome> {
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        let mut planned = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            match self.start_agent(call, emit).await {
                Ok((name, prompt, sub, worktree)) => planned.push(Planned {
                    index,
                    call_id: call.id.clone(),
                    name,
                    prompt,
                    sub,
                    worktree,
                }),
                Err(e) => outcomes[index] = Some(ToolOutcome::err(e)),
            }
        }
        let parallel = self.delegation.as_ref().map_or(1, |d| d.parallel.max(1));
        let mut runs = futures::stream::iter(planned.into_iter().map(|mut p| {
            let cancel = cancel.child_token();
            async move {
                let wrap = |e: Event| {
                    emit(Event::Agent {
                        call_id: p.call_id.clone(),
                        agent: p.name.clone(),
                        event: Box::new(e),
                    })
                };
                let end = p.sub.run_turn(&p.prompt, &wrap, &cancel).await;
                let done = end == TurnEnd::Done || end == TurnEnd::StepLimit;
                let mut outcome = answer(&p.name, &p.sub, end);
                if let (false, Some((wt, _))) = (done, &p.worktree) {
                    // Its work is not lost, nor merged: say where it is.
                    let note = format!(
                        " (its worktree {} stays at {}: `north worktree merge {}` reviews what it did, `north worktree remove {} --force` drops it)",
                        wt.name,
                        wt.path.display(),
                        wt.name,
                        wt.name
                    );
                    outcome.error = outcome.error.map(|e| e + &note);
                }
                (p.index, p.call_id, outcome, p.worktree.filter(|_| done))
            }
        }))
        .buffer_unordered(parallel);
        let mut isolated = Vec::new();
        while let Some((index, call_id, outcome, worktree)) = runs.next().await {
            outcomes[index] = Some(outcome);
            if let Some(wt) = worktree {
                isolated.push((index, call_id, wt));
            }
        }
        drop(runs);
        // One review per isolated sub-agent, in call order, after all ran.
        isolated.sort_by_key(|(index, ..)| *index);
        for (index, call_id, (wt, registry)) in isolated {
            let report = self.merge_worktree(&wt, &registry, &call_id, emit).await;
            if let Some(Some(out)) = outcomes.get_mut(index)
                && let Some(obj) = out.output.as_object_mut()
            {
                obj.insert("worktree".into(), report);
            }
        }
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| ToolOutcome::err("the sub-agent did not run")))
            .collect()
    }

    /// Plans `call` and builds its sub-agent (in a worktree of its own
    /// when isolated), with its start hooks run.
    #[allow(clippy::type_complexity, reason = "a private step's parts")]
    async fn start_agent(
        &mut self,
        call: &ToolCall,
        emit: &Emit<'_>,
    ) -> Result<(String, String, Agent, Option<(Worktree, Registry)>), String> {
        let (def, prompt, isolation) = self.plan_agent(call)?;
        let isolated = match isolation {
            Isolation::Shared => None,
            Isolation::Worktree => Some(self.isolate(&def.name, emit).await?),
        };
        let worktree = isolated
            .as_ref()
            .map(|i| (i.worktree.clone(), i.registry.clone()));
        let mut sub = match self.subagent(&def, call, isolated) {
            Ok(sub) => sub,
            Err(e) => {
                if let Some((wt, registry)) = &worktree {
                    let _ = north_worktree::remove(wt, registry, true);
                }
                return Err(e);
            }
        };
        self.subagent_start_hooks(&mut sub, &def.name, emit).await;
        Ok((def.name.clone(), prompt, sub, worktree))
    }

    /// A worktree of its own for the sub-agent `agent`, its
    /// `WorktreeCreate` hooks run (one that blocks takes it back).
    async fn isolate(&self, agent: &str, emit: &Emit<'_>) -> Result<Isolated, String> {
        let isolate = self
            .delegation
            .as_ref()
            .and_then(|d| d.isolate.clone())
            .ok_or("this front end cannot give a sub-agent a worktree of its own")?;
        // git's checkout blocks: off the turn's thread.
        let name = agent.to_string();
        let isolated = tokio::task::spawn_blocking(move || isolate(&name))
            .await
            .map_err(|e| e.to_string())
            .and_then(|made| made)
            .map_err(|e| format!("cannot make a worktree for the sub-agent `{agent}`: {e}"))?;
        if let Err(reason) = self.worktree_create_hooks(&isolated.worktree, emit).await {
            let _ = north_worktree::remove(&isolated.worktree, &isolated.registry, true);
            return Err(format!(
                "a WorktreeCreate hook refused the sub-agent's worktree: {reason}"
            ));
        }
        Ok(isolated)
    }

    /// The definition, prompt and isolation an `agent` call names, or why
    /// it cannot run.
    fn plan_agent(&self, call: &ToolCall) -> Result<(AgentDef, String, Isolation), String> {
        let Some(delegation) = &self.delegation else {
            return Err("this session has no agents".into());
        };
        if !self.may_delegate() {
            return Err(format!(
                "a sub-agent cannot start sub-agents (the depth limit is {}): do the task yourself with your own tools",
                delegation.max_depth
            ));
        }
        let name = call.arguments.get("agent").and_then(Value::as_str);
        let prompt = call.arguments.get("prompt").and_then(Value::as_str);
        let (Some(name), Some(prompt)) = (name, prompt) else {
            return Err("`agent` needs `agent` (the agent's name) and `prompt` (the task)".into());
        };
        if prompt.trim().is_empty() {
            return Err("`prompt` is empty: give the sub-agent its whole task".into());
        }
        let def = delegation.agents.get(name).ok_or_else(|| {
            format!(
                "no agent `{name}`; agents: {}",
                delegation.agents.names().join(", ")
            )
        })?;
        let isolation = match call.arguments.get("isolation").and_then(Value::as_str) {
            Some(word) => word
                .parse()
                .map_err(|e: crate::subagents::UnknownIsolation| e.to_string())?,
            None => def.isolation,
        };
        Ok((def.clone(), prompt.to_string(), isolation))
    }

    /// A fresh agent for `def`, answering `call`: in the parent's tree
    /// with the parent's shell, or in `isolated`'s worktree with its own.
    fn subagent(
        &self,
        def: &AgentDef,
        call: &ToolCall,
        isolated: Option<Isolated>,
    ) -> Result<Agent, String> {
        let session = self
            .conv
            .session
            .child(&format!("{}-{}", def.name, call.id))
            .map_err(|e| format!("cannot keep the sub-agent's transcript: {e}"))?;
        let keep = |name: &str| def.allows(name);
        let tools = self.modes.full_tools.only(keep);
        let mut opts = self.opts.clone();
        opts.role = Some(def.prompt.clone());
        opts.snapshots = false;
        // Claude Code's model aliases name Anthropic's models: under
        // another provider such an agent runs on the session's own model.
        let own = def.own_model().filter(|m| {
            !(matches!(*m, "sonnet" | "opus" | "haiku") && self.opts.provider != "anthropic")
        });
        let backend = match own {
            Some(model) => {
                let factory = self
                    .delegation
                    .as_ref()
                    .and_then(|d| d.models.clone())
                    .ok_or_else(|| format!("agent `{}` asks for model `{model}`, which this front end cannot start", def.name))?;
                let switch = factory(model)
                    .map_err(|e| format!("agent `{}`: model `{model}`: {e}", def.name))?;
                opts.provider = switch.provider;
                opts.model = switch.model;
                opts.max_tokens = switch.max_tokens;
                opts.context_budget = switch.context_budget;
                switch.backend
            }
            None => self.services.backend.clone(),
        };
        let (mut ctx, own_kit) = match isolated {
            Some(i) => (i.ctx, Some(i.kit)),
            None => {
                let mut ctx = self.services.ctx.clone();
                ctx.shell = self.modes.plain_shell.clone();
                (ctx, None)
            }
        };
        ctx.live_output = None;
        let mut sub = Agent::new(
            backend,
            tools,
            ctx,
            self.services.approver.clone(),
            session,
            self.services.redactor.clone(),
            opts,
        )
        .map_err(|e: AgentError| format!("cannot start the sub-agent: {e}"))?;
        sub.depth = self.depth + 1;
        sub.delegate_allowed = def.allows(AGENT_TOOL);
        sub.hooks = self.hooks.clone();
        // SessionStart belongs to the user's session, not to a sub-agent.
        sub.hooks_started = true;
        sub.delegation = self.delegation.clone();
        sub.skill_tool = self.skill_tool.clone().filter(|_| def.allows("skill"));
        sub.session_rules = self.session_rules.clone();
        if let Some(mut kit) = own_kit.or_else(|| self.modes.kit.clone()) {
            kit.plan_tools = kit.plan_tools.only(keep);
            sub.modes.kit = Some(kit);
        }
        // Never wider than the parent's mode; a mode this front end cannot
        // enter leaves the sub-agent in `ask`.
        let _ = sub.set_mode(def.mode_under(self.modes.mode));
        for cap in &self.conv.state.capabilities_granted {
            sub.grant(cap);
        }
        Ok(sub)
    }
}

/// The outcome of an `agent` call: the sub-agent's final text and usage.
fn answer(name: &str, sub: &Agent, end: TurnEnd) -> ToolOutcome {
    let text = sub
        .messages()
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.text_content().trim().is_empty())
        .map(|m| m.text_content())
        .unwrap_or_default();
    let usage = sub.total_usage();
    let usage = json!({"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens});
    match end {
        TurnEnd::Done => ToolOutcome::ok(json!({"agent": name, "answer": text, "usage": usage})),
        TurnEnd::StepLimit => ToolOutcome::ok(json!({
            "agent": name,
            "answer": text,
            "usage": usage,
            "note": "the sub-agent hit its step limit; its answer may be incomplete",
        })),
        TurnEnd::Interrupted => {
            ToolOutcome::err(format!("the sub-agent `{name}` was cancelled by the user"))
        }
        TurnEnd::ProviderFailed(e) | TurnEnd::PromptFailed(e) => {
            ToolOutcome::err(format!("the sub-agent `{name}` failed: {e}"))
        }
    }
}
