//! One mesh run: plan → execute step by step → extra agents → remember.

use std::sync::{Arc, Mutex};

use north_llm::LlmError;
use north_prompt::parse_structured_output;
use north_protocol::{ApprovalDecision, ChatRequest, Event, Message, StopReason, TraceKind};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::events::scrub;
use super::prompts::{
    ExecutorParams, MEMORY_ROLE, PLANNER_ROLE, PlannerParams, memory_text, plan_error, plan_text,
    policy_text, repair_prompt,
};
use super::{
    AgentNote, Audit, ExecutionLog, Mesh, MeshError, MeshEvent, MeshNote, MeshPhase, MeshStatus,
    Step, StepLog,
};
use north_agent::TurnEnd;
use north_agent::memory::MemoryEntry;
use north_agent::store::{Session, Tracer};
use north_runtime::LiveSession;

/// What a run did.
#[derive(Debug, Clone)]
pub struct MeshReport {
    /// How it ended.
    pub status: MeshStatus,
    /// The executor's session id.
    pub session_id: String,
    /// The execution log (goal, plan, steps, notes).
    pub log: ExecutionLog,
    /// The memory entry written, if the run got that far.
    pub memory: Option<MemoryEntry>,
    /// Every policy decision.
    pub audit: Vec<super::AuditEntry>,
}

/// Why the planner failed.
enum PlanFailure {
    Cancelled,
    Provider(String),
    Unusable(String),
}

impl From<LlmError> for PlanFailure {
    fn from(e: LlmError) -> Self {
        if e.is_cancelled() {
            PlanFailure::Cancelled
        } else {
            PlanFailure::Provider(e.to_string())
        }
    }
}

impl From<MeshError> for PlanFailure {
    fn from(e: MeshError) -> Self {
        PlanFailure::Unusable(e.to_string())
    }
}

type Emit<'a> = dyn Fn(MeshEvent) + Send + Sync + 'a;

impl Mesh {
    fn tool_lines(&self) -> String {
        self.tools(Arc::new(Audit::new(None)))
            .specs()
            .iter()
            .map(|t| format!("- {}: {}", t.name, t.description))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Asks the planner for a plan (one repair attempt when the answer is
    /// not a valid list of steps: the repair names the exact problem and
    /// shows the schema).
    async fn plan(
        &self,
        goal: &str,
        tracer: Option<&Tracer>,
        note: &(dyn Fn(MeshNote) + Sync),
        cancel: &CancellationToken,
    ) -> Result<Vec<Step>, PlanFailure> {
        let rendered = self.prompts.planner(PlannerParams {
            tools: self.tool_lines(),
            policy: policy_text(&self.policy),
        })?;
        let planner = self.role_agent("planner", PLANNER_ROLE);
        let mut messages = vec![Message::user(format!("Goal: {goal}"))];
        let mut last_error = String::new();
        for attempt in 1..=2 {
            let mut req = ChatRequest::new(self.opts.agent.model.clone(), messages.clone());
            req.max_tokens = self.opts.agent.max_tokens;
            rendered.apply_to(&mut req);
            if let Some(t) = tracer {
                t.record(
                    TraceKind::LlmReq,
                    json!({"purpose": "plan", "attempt": attempt, "model": req.model}),
                );
            }
            let max_tokens = req.max_tokens;
            let resp = planner.call(req, cancel).await?;
            if let Some(t) = tracer {
                t.record(
                    TraceKind::LlmDone,
                    json!({"purpose": "plan", "usage": resp.usage}),
                );
            }
            let text = resp.text();
            let cut_at = (resp.stop_reason == Some(StopReason::MaxTokens)).then_some(max_tokens);
            match parse_structured_output(&text, &rendered) {
                Ok(steps) if !steps.is_empty() && cut_at.is_none() => return Ok(steps),
                Ok(steps) if !steps.is_empty() => {
                    // A cut answer that still parsed lost its last steps.
                    last_error = plan_error_cut(cut_at);
                    if attempt == 2 {
                        return Ok(steps);
                    }
                }
                Ok(_) => last_error = "the plan has no steps".to_owned(),
                Err(e) => last_error = plan_error(&text, cut_at, &e),
            }
            if let Some(t) = tracer {
                t.record(
                    TraceKind::MeshPlan,
                    json!({"ok": false, "attempt": attempt, "error": last_error}),
                );
            }
            if attempt == 2 {
                break;
            }
            note(MeshNote::PlanRetry {
                attempt,
                error: last_error.clone(),
            });
            // The answer goes back cut short: enough to see what went
            // wrong, not enough to crowd a small window.
            messages.push(Message::assistant(excerpt(&text, 1_000)));
            messages.push(Message::user(repair_prompt(
                &last_error,
                rendered
                    .strict_output_schema()
                    .unwrap_or(&serde_json::Value::Null),
            )));
        }
        Err(PlanFailure::Unusable(last_error))
    }

    /// Asks the memory agent for a summary of `log`.
    async fn summarize(
        &self,
        log: &ExecutionLog,
        tracer: Option<&Tracer>,
        cancel: &CancellationToken,
    ) -> Result<String, PlanFailure> {
        let system = self.prompts.memory(self.opts.summary_chars)?;
        let agent = self.role_agent("memory", MEMORY_ROLE);
        // The log of a long run can exceed a small window: keep its start
        // (goal and plan) and its end, within half the input budget.
        let room = usize::try_from(self.opts.agent.context_budget * 2).unwrap_or(usize::MAX);
        let mut req = agent.request(&head_and_tail(&log.render(), room));
        req.system = Some(system);
        if let Some(t) = tracer {
            t.record(
                TraceKind::LlmReq,
                json!({"purpose": "memory", "model": req.model}),
            );
        }
        let resp = agent.call(req, cancel).await?;
        if let Some(t) = tracer {
            t.record(
                TraceKind::LlmDone,
                json!({"purpose": "memory", "usage": resp.usage}),
            );
        }
        let (text, _) = north_protocol::blocks::split_blocks(&resp.text());
        let text = text.trim();
        let summary = if text.is_empty() {
            fallback_summary(log)
        } else {
            text.chars().take(self.opts.summary_chars).collect()
        };
        Ok(self.redactor.scrub(&summary).into_owned())
    }

    fn executor_input(
        &self,
        goal: &str,
        plan: &[Step],
        memories: &[MemoryEntry],
    ) -> Result<String, MeshError> {
        self.prompts.executor(ExecutorParams {
            goal: goal.to_owned(),
            plan: plan_text(plan),
            memories: memory_text(memories),
            policy: policy_text(&self.policy),
            first_step: step_input(1, plan),
        })
    }

    /// Runs `goal` on `session`: plan, execute, remember. Events go to
    /// `emit` as they happen, with secrets scrubbed.
    pub async fn run(
        &self,
        session: Session,
        goal: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> MeshReport {
        let emit = |e: MeshEvent| emit(scrub(&self.redactor, e));
        let note = |n: MeshNote| emit(MeshEvent::Mesh(n));
        let tracer = session.tracer(self.redactor.clone()).ok();
        let audit = Arc::new(Audit::new(session.tracer(self.redactor.clone()).ok()));
        let mut report = MeshReport {
            status: MeshStatus::Completed,
            session_id: session.id.clone(),
            log: ExecutionLog {
                goal: goal.to_owned(),
                ..Default::default()
            },
            memory: None,
            audit: Vec::new(),
        };
        let finish = |mut report: MeshReport, status: MeshStatus| {
            report.audit = audit.entries();
            let denied = audit.denied();
            if let Some(t) = &tracer {
                t.record(
                    TraceKind::MeshDone,
                    json!({"status": status, "denied": denied}),
                );
            }
            note(MeshNote::MeshFinished {
                status: status.clone(),
                denied,
            });
            report.status = status;
            report
        };
        note(MeshNote::MeshStarted {
            session_id: session.id.clone(),
            goal: goal.to_owned(),
            provider: self.opts.agent.provider.clone(),
            model: self.opts.agent.model.clone(),
            policy: self.policy.clone(),
        });
        if let Some(t) = &tracer {
            t.record(
                TraceKind::MeshStart,
                json!({"goal": goal, "policy": self.policy}),
            );
        }

        // 1. Plan.
        let plan = match self.make_plan(goal, tracer.as_ref(), &note, cancel).await {
            Ok(plan) => plan,
            Err(status) => return finish(report, status),
        };
        report.log.plan = plan.clone();

        // 2. Execute, one turn per step.
        let (mut agent, first_input) = match self.start_executor(goal, &plan, session, &audit) {
            Ok(started) => started,
            Err(status) => return finish(report, status),
        };
        note(MeshNote::Phase {
            phase: MeshPhase::Executing,
        });
        let executed = self
            .execute_steps(
                &mut agent,
                &plan,
                first_input,
                &audit,
                &mut report.log,
                &emit,
                cancel,
            )
            .await;
        // The executor's session ends here however the steps ended: its
        // background jobs stop and the SessionEnd hooks run.
        agent
            .close(north_agent::SessionEndReason::Other, &|_| {})
            .await;
        if let Some(status) = executed.stopped {
            return finish(report, status);
        }

        // 3. Extra agents.
        if let Err(status) = self.run_extra_agents(&mut report.log, &note, cancel).await {
            return finish(report, status);
        }

        // 4. Remember.
        match self
            .remember(goal, &report.log, tracer.as_ref(), &note, cancel)
            .await
        {
            Ok(entry) => report.memory = Some(entry),
            Err(status) => return finish(report, status),
        }
        let refused = executed.refused || audit.denied() > 0;
        let status = if executed.step_limit {
            MeshStatus::StepLimit
        } else if refused {
            MeshStatus::Denied
        } else {
            MeshStatus::Completed
        };
        finish(report, status)
    }

    /// The planner's steps for `goal`, shown and traced; or the status a
    /// run ends with.
    async fn make_plan(
        &self,
        goal: &str,
        tracer: Option<&Tracer>,
        note: &(dyn Fn(MeshNote) + Sync),
        cancel: &CancellationToken,
    ) -> Result<Vec<Step>, MeshStatus> {
        note(MeshNote::Phase {
            phase: MeshPhase::Planning,
        });
        let plan = match self.plan(goal, tracer, note, cancel).await {
            Ok(plan) => plan,
            Err(PlanFailure::Cancelled) => return Err(MeshStatus::Interrupted),
            Err(PlanFailure::Provider(message)) => {
                return Err(MeshStatus::ProviderFailed { message });
            }
            Err(PlanFailure::Unusable(message)) => {
                return Err(MeshStatus::PlanFailed { message });
            }
        };
        if let Some(t) = tracer {
            t.record(TraceKind::MeshPlan, json!({"ok": true, "steps": plan}));
        }
        note(MeshNote::Plan {
            steps: plan.clone(),
        });
        Ok(plan)
    }

    /// The executor, on `session`, and its first input (goal, plan, the
    /// last memories, the policy); or the status a run ends with.
    fn start_executor(
        &self,
        goal: &str,
        plan: &[Step],
        session: Session,
        audit: &Arc<Audit>,
    ) -> Result<(LiveSession, String), MeshStatus> {
        let memories = match self.recent_memories() {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "memory file unreadable; executing without memories");
                Vec::new()
            }
        };
        let first_input =
            self.executor_input(goal, plan, &memories)
                .map_err(|e| MeshStatus::PlanFailed {
                    message: e.to_string(),
                })?;
        let agent =
            self.executor(session, audit.clone())
                .map_err(|e| MeshStatus::StorageFailed {
                    message: e.to_string(),
                })?;
        Ok((agent, first_input))
    }

    /// Runs the plan's steps, one executor turn each, logging what each
    /// did; stops at an interrupt or a provider failure.
    #[allow(
        clippy::too_many_arguments,
        reason = "the run's pieces the steps share, each borrowed for the loop"
    )]
    async fn execute_steps(
        &self,
        agent: &mut LiveSession,
        plan: &[Step],
        first_input: String,
        audit: &Audit,
        log: &mut ExecutionLog,
        emit: &(dyn Fn(MeshEvent) + Sync),
        cancel: &CancellationToken,
    ) -> Executed {
        let note = |n: MeshNote| emit(MeshEvent::Mesh(n));
        let refused = Mutex::new(false);
        let mut executed = Executed::default();
        for (i, step) in plan.iter().enumerate() {
            let index = i + 1;
            if cancel.is_cancelled() {
                executed.stopped = Some(MeshStatus::Interrupted);
                break;
            }
            note(MeshNote::StepStarted {
                index,
                total: plan.len(),
                description: step.description.clone(),
                tool: step.tool.clone(),
            });
            let input = if index == 1 {
                first_input.clone()
            } else {
                step_input(index, plan)
            };
            let step_log = Mutex::new(StepLog::new(index, &step.description));
            let flush_audit = || {
                for entry in audit.take_pending() {
                    note(MeshNote::Policy { entry });
                }
            };
            let on_event = |e: Event| {
                flush_audit();
                if let Event::ApprovalDecided {
                    decision: ApprovalDecision::Deny | ApprovalDecision::Reject,
                    ..
                } = &e
                    && let Ok(mut r) = refused.lock()
                {
                    *r = true;
                }
                if let Ok(mut log) = step_log.lock() {
                    log.observe(&e);
                }
                emit(MeshEvent::Agent(e));
            };
            let end = agent.run_turn(&input, &on_event, cancel).await;
            flush_audit();
            let step_log = step_log.into_inner().unwrap_or_else(|p| p.into_inner());
            note(MeshNote::StepFinished {
                index,
                calls: step_log.calls.len(),
                failed: step_log.failed(),
            });
            log.steps.push(step_log);
            match end {
                TurnEnd::Done => {}
                TurnEnd::StepLimit => executed.step_limit = true,
                TurnEnd::Interrupted => {
                    executed.stopped = Some(MeshStatus::Interrupted);
                    break;
                }
                TurnEnd::ProviderFailed(message) | TurnEnd::PromptFailed(message) => {
                    executed.stopped = Some(MeshStatus::ProviderFailed { message });
                    break;
                }
            }
        }
        executed.refused = refused.into_inner().unwrap_or(false);
        executed
    }

    /// Runs the extra agents over the log; each may add a note to it.
    async fn run_extra_agents(
        &self,
        log: &mut ExecutionLog,
        note: &(dyn Fn(MeshNote) + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), MeshStatus> {
        if !self.agents.is_empty() {
            note(MeshNote::Phase {
                phase: MeshPhase::Reviewing,
            });
        }
        for extra in &self.agents {
            match extra.run(log, cancel).await {
                Ok(Some(text)) => {
                    let text = self.redactor.scrub(&text).into_owned();
                    note(MeshNote::AgentNote {
                        agent: extra.name().to_owned(),
                        text: text.clone(),
                    });
                    log.notes.push(AgentNote {
                        agent: extra.name().to_owned(),
                        text,
                    });
                }
                Ok(None) => {}
                Err(e) if e.is_cancelled() => return Err(MeshStatus::Interrupted),
                Err(e) => {
                    let message = format!("agent `{}`: {e}", extra.name());
                    return Err(MeshStatus::ProviderFailed { message });
                }
            }
        }
        Ok(())
    }

    /// The memory agent summarizes the log into a memory entry, appended to
    /// the project memory.
    async fn remember(
        &self,
        goal: &str,
        log: &ExecutionLog,
        tracer: Option<&Tracer>,
        note: &(dyn Fn(MeshNote) + Sync),
        cancel: &CancellationToken,
    ) -> Result<MemoryEntry, MeshStatus> {
        note(MeshNote::Phase {
            phase: MeshPhase::Remembering,
        });
        let summary = match self.summarize(log, tracer, cancel).await {
            Ok(s) => s,
            Err(PlanFailure::Cancelled) => return Err(MeshStatus::Interrupted),
            Err(PlanFailure::Provider(message) | PlanFailure::Unusable(message)) => {
                return Err(MeshStatus::ProviderFailed { message });
            }
        };
        let entry = MemoryEntry::new(goal, summary);
        let memory = self.memory();
        if let Err(e) = memory.append(entry.clone()) {
            return Err(MeshStatus::StorageFailed {
                message: e.to_string(),
            });
        }
        if let Some(t) = tracer {
            t.record(
                TraceKind::MeshMemory,
                json!({"id": entry.id, "path": memory.path()}),
            );
        }
        note(MeshNote::MemoryWritten {
            entry: entry.clone(),
            path: ".north/memory.json".to_owned(),
        });
        Ok(entry)
    }
}

/// How the steps went: the status they stopped the run with, if any,
/// whether a step hit the step limit, whether the user refused something.
#[derive(Default)]
struct Executed {
    stopped: Option<MeshStatus>,
    step_limit: bool,
    refused: bool,
}

/// The executor's input for step `index` (1-based) of `plan`.
fn step_input(index: usize, plan: &[Step]) -> String {
    let Some(step) = plan.get(index - 1) else {
        return String::new();
    };
    let tool = match &step.tool {
        Some(t) => format!(" (expected tool: {t})"),
        None => String::new(),
    };
    format!(
        "Step {index} of {}: {}{tool}\nExecute this step now, then answer with what you found.",
        plan.len(),
        step.description
    )
}

/// The message for a plan cut off at `limit` tokens.
fn plan_error_cut(limit: Option<u32>) -> String {
    format!(
        "it was cut off at the output limit of {} tokens, so its last steps are missing",
        limit.unwrap_or_default()
    )
}

/// The first `max` characters of `text`, marked when cut.
fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push_str(" […]");
    }
    out
}

/// `text` within `max` bytes: its first third and its last two thirds.
fn head_and_tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let boundary = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let head = boundary(max / 3);
    let tail = boundary(text.len() - (max - head));
    format!(
        "{}\n[… part of the log omitted …]\n{}",
        &text[..head],
        &text[tail..]
    )
}

/// A summary built from the log when the memory agent says nothing.
fn fallback_summary(log: &ExecutionLog) -> String {
    let calls = log.calls().count();
    let failed = log.calls().filter(|c| !c.ok).count();
    format!(
        "Ran {} step(s) with {calls} tool call(s), {failed} failed.",
        log.steps.len()
    )
}
