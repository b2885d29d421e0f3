//! The turn loop as a step function: a turn is steps until one of them
//! ends it, each step one model request, its response kept, and its tool
//! calls run in order. [`Step`] is what a step led to.

use north_protocol::{Event, NoticeKind, ToolOutcome, TraceKind, Usage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::malformed::Planned;
use super::{Agent, Emit, TurnEnd};
use crate::condense::estimate_tokens;
use north_config::ToolProtocol;

/// What one step led to.
pub(super) enum Step {
    /// The model has more to do: another step.
    Continue,
    /// The turn ended.
    Ended(TurnEnd),
}

/// What a turn carries from step to step.
struct Turn<'a> {
    /// The user's input (empty when continuing an unfinished turn).
    input: &'a str,
    /// The system prompt (rebuilt after condensation).
    system: String,
    /// Tokens used so far.
    usage: Usage,
    /// A Stop hook already sent the model back once.
    stop_hook_active: bool,
}

impl Agent {
    /// Runs a turn: steps until one ends it, or the step limit.
    pub(super) async fn run_turn_inner(
        &mut self,
        input: Option<&str>,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        self.services.ctx.cancel = cancel.child_token();
        if let Some((from, dropped)) = self.conv.resumed_from.take() {
            emit(Event::Notice {
                kind: NoticeKind::ModelSwitched,
                message: super::model::switch_message(&from, &self.model(), dropped),
            });
        }
        let input = self.take_input(input, emit);
        let system = match self.system(&input).await {
            Ok(s) => s,
            Err(e) => return self.prompt_failed(&e, emit),
        };
        let mut turn = Turn {
            input: &input,
            system,
            usage: Usage::default(),
            stop_hook_active: false,
        };
        for step in 1..=self.opts.max_steps {
            if let Step::Ended(end) = self.step(step, &mut turn, emit, cancel).await {
                return end;
            }
        }
        self.step_limit(turn.usage, emit)
    }

    /// One step: condense if due, one request, the response kept, then its
    /// calls — or, without calls, the end of the turn (unless a Stop hook
    /// sends the model back).
    async fn step(
        &mut self,
        step: u32,
        turn: &mut Turn<'_>,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Step {
        emit(Event::TurnStarted { turn: step });
        match self.maybe_condense(&turn.system, emit, cancel).await {
            Err(end) => return Step::Ended(end),
            Ok(true) => match self.system(turn.input).await {
                Ok(s) => turn.system = s,
                Err(e) => return Step::Ended(self.prompt_failed(&e, emit)),
            },
            Ok(false) => {}
        }
        // A background command that ended is news for the model.
        for notice in self.services.ctx.shell.jobs().take_exits() {
            self.push_user_text(&format!("[{notice}]"));
        }
        let request = self.request(&turn.system);
        let approx_tokens = estimate_tokens(&request.messages);
        self.services.tracer.record(
            TraceKind::LlmReq,
            json!({"step": step, "provider": self.opts.provider, "model": self.opts.model, "messages": request.messages.len(), "tools": request.tools.len(), "approx_tokens": approx_tokens}),
        );
        tracing::info!(
            provider = %self.opts.provider,
            model = %self.opts.model,
            step,
            messages = request.messages.len(),
            tools = request.tools.len(),
            approx_tokens,
            "model request"
        );
        let (response, visible, blocks, failure) = self.stream(request, emit, cancel).await;
        let failed = failure.is_some();
        let mut calls =
            self.take_response(step, &response, &visible, failed, &mut turn.usage, emit);
        if let Some(err) = failure {
            self.save(emit);
            return Step::Ended(self.provider_failed(&err, turn.usage, emit));
        }
        let text = self.apply_blocks(&blocks, emit).await;
        let mut rejected_blocks = 0;
        if self.opts.tool_protocol == ToolProtocol::Text {
            calls.extend(text.calls.into_iter().map(|call| Planned {
                call,
                problem: None,
            }));
            rejected_blocks = text.rejected;
        }
        self.save(emit);
        // A rejected tool-call block was answered with the reason; the model
        // gets a step to fix it instead of the turn ending silently.
        if calls.is_empty() && rejected_blocks == 0 {
            return self
                .answered(step, turn, response.stop_reason, emit, cancel)
                .await;
        }
        self.services.tracer.record(
            TraceKind::ToolPlan,
            json!({"step": step, "calls": calls.iter().map(|p| json!({"id": p.call.id, "tool": p.call.name, "rejected": p.problem.is_some()})).collect::<Vec<_>>()}),
        );
        self.run_calls(&calls, turn.usage, emit, cancel).await
    }

    /// The model answered without calls: the turn ends, unless a Stop hook
    /// sends the model back to work with its reason as the next instruction.
    async fn answered(
        &mut self,
        step: u32,
        turn: &mut Turn<'_>,
        stop_reason: Option<north_protocol::StopReason>,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Step {
        if step < self.opts.max_steps
            && !cancel.is_cancelled()
            && let Some(reason) = self.stop_hooks(turn.stop_hook_active, emit).await
        {
            turn.stop_hook_active = true;
            self.push_user_text(&format!("[A Stop hook did not let the turn end: {reason}]"));
            self.save(emit);
            return Step::Continue;
        }
        if let Err(end) = self.maybe_condense(&turn.system, emit, cancel).await {
            return Step::Ended(end);
        }
        emit(Event::TurnEnd {
            stop_reason,
            usage: turn.usage,
        });
        Step::Ended(TurnEnd::Done)
    }

    /// A step's calls in order: a malformed one answered with its problem,
    /// consecutive `agent` calls together, each other call through its
    /// hooks and the dispatcher. An interrupt or a hook's halt ends the turn.
    async fn run_calls(
        &mut self,
        calls: &[Planned],
        usage: Usage,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Step {
        self.before_tools(emit).await;
        let mut batched = 0;
        for (i, Planned { call, problem }) in calls.iter().enumerate() {
            if i < batched {
                continue;
            }
            if cancel.is_cancelled() {
                for rest in &calls[i..] {
                    self.record_result(
                        &rest.call,
                        &ToolOutcome::err("interrupted by the user before this call ran"),
                        emit,
                    );
                }
                self.save(emit);
                return Step::Ended(self.interrupted(emit, usage));
            }
            if let Some((for_model, for_user)) = problem {
                self.malformed_call(call, for_model, for_user, emit);
                continue;
            }
            // Consecutive `agent` calls run together.
            if self.is_agent_call(call) {
                batched = i + calls[i..]
                    .iter()
                    .take_while(|p| p.problem.is_none() && self.is_agent_call(&p.call))
                    .count();
                let batch: Vec<_> = calls[i..batched].iter().map(|p| p.call.clone()).collect();
                self.agent_batch(&batch, emit, cancel).await;
                continue;
            }
            if let Some(reason) = self.hooked_call(call, emit).await {
                return Step::Ended(self.halted(&calls[i + 1..], &reason, usage, emit));
            }
        }
        // An interrupt that stopped the last call ends the turn here: the
        // user asked North to stop, not to tell the model and go on.
        if cancel.is_cancelled() {
            return Step::Ended(self.interrupted(emit, usage));
        }
        Step::Continue
    }

    /// A call the model got wrong: the user is told, the model gets the
    /// problem as the call's result.
    fn malformed_call(
        &mut self,
        call: &north_protocol::ToolCall,
        for_model: &str,
        for_user: &str,
        emit: &Emit<'_>,
    ) {
        emit(Event::Notice {
            kind: NoticeKind::MalformedToolCall,
            message: for_user.to_string(),
        });
        self.services.tracer.record(
            TraceKind::ToolRejected,
            json!({"id": call.id, "tool": call.name, "reason": for_model}),
        );
        self.record_result(call, &ToolOutcome::err(for_model.to_string()), emit);
        self.save(emit);
    }

    /// One call through its `PreToolUse` hooks, the dispatcher and its
    /// `PostToolUse` hooks, its result kept at once. Returns a hook's halt.
    async fn hooked_call(
        &mut self,
        call: &north_protocol::ToolCall,
        emit: &Emit<'_>,
    ) -> Option<String> {
        self.announce(call, emit);
        let mut hooked = self.pre_tool_hooks(call, emit).await;
        if let Some(reason) = hooked.block.as_ref().or(hooked.halt.as_ref()) {
            self.blocked_by_hook(call, reason, emit);
            return hooked.halt;
        }
        // A hook's `updatedInput` is what runs (and what the policy judges).
        let updated = hooked
            .updated_input
            .take()
            .map(|fields| super::hooked::with_input(call, fields));
        let call = updated.as_ref().unwrap_or(call);
        self.services.tracer.record(TraceKind::ToolStart, json!({"id": call.id, "tool": call.name, "args": crate::intent::trace_args(&call.arguments)}));
        let mut outcome = self.run_call(call, hooked.permission, emit).await;
        if updated.is_some()
            && let Some(out) = outcome.output.as_object_mut()
        {
            out.insert(
                "inputChangedByHook".into(),
                json!({"note": "a PreToolUse hook changed this call's input before it ran; this is what ran", "input": call.arguments}),
            );
        }
        let halt = self.post_tool_hooks(call, &mut outcome, emit).await;
        self.record_result(call, &outcome, emit);
        // Each result is durable as soon as it exists.
        self.save(emit);
        halt
    }
}
