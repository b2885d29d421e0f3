//! The turn loop: model steps, streamed output, tool calls in order, and
//! how a turn ends.

use north_protocol::{
    ChatRequest, ContentBlock, ErrorKind, Event, Message, NoticeKind, Role, StopReason,
    ToolOutcome, TraceKind, Usage,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::malformed::{self, Planned};
use super::{Agent, Emit, TurnEnd};
use crate::context::SystemPromptError;
use north_config::ToolProtocol;

/// The note kept in the conversation after a turn the user interrupted,
/// in Claude Code's words: the model reads that its request was cut
/// short, and a replay shows the interrupt where it happened.
pub const INTERRUPTED_NOTE: &str = "[Request interrupted by user]";

/// Whether `block` is the note an interrupt left.
pub fn is_interrupted_note(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text { text } if text == INTERRUPTED_NOTE)
}

/// The error and turn-end events of an interrupted turn.
fn interrupted(emit: &Emit<'_>, usage: Usage) -> TurnEnd {
    emit(Event::Error {
        kind: ErrorKind::Interrupted,
        message: "interrupted".into(),
    });
    emit(Event::TurnEnd {
        stop_reason: None,
        usage,
    });
    TurnEnd::Interrupted
}

impl Agent {
    /// Ends a turn the user interrupted: the note in the conversation
    /// (not after calls still waiting for their results, which would
    /// split them), saved, then the error and turn-end events.
    pub(super) fn interrupted(&mut self, emit: &Emit<'_>, usage: Usage) -> TurnEnd {
        let last = self.conv.messages.last();
        let open_calls = last.is_some_and(|m| m.tool_calls().next().is_some());
        let noted = last.is_some_and(|m| m.content.last().is_some_and(is_interrupted_note));
        if last.is_some() && !open_calls && !noted {
            self.conv.messages.push(Message::user(INTERRUPTED_NOTE));
            self.save(emit);
        }
        interrupted(emit, usage)
    }

    /// Ends a turn whose system prompt could not be built: nothing is sent.
    pub(super) fn prompt_failed(&self, error: &SystemPromptError, emit: &Emit<'_>) -> TurnEnd {
        let message = format!("{error}; nothing was sent to the model");
        tracing::error!(severity = "recoverable", error = %message, "system prompt failed");
        self.unsent("system_prompt", message, emit)
    }

    /// Ends a turn before anything was sent, saying why (`kind` names the
    /// cause in the trace).
    pub(super) fn unsent(&self, kind: &str, message: String, emit: &Emit<'_>) -> TurnEnd {
        self.services
            .tracer
            .record(TraceKind::Error, json!({"kind": kind, "message": message}));
        emit(Event::Error {
            kind: ErrorKind::Config,
            message: message.clone(),
        });
        emit(Event::TurnEnd {
            stop_reason: None,
            usage: Usage::default(),
        });
        TurnEnd::PromptFailed(message)
    }

    pub(super) fn request(&self, system: &str) -> ChatRequest {
        let mut req = ChatRequest::new(self.opts.model.clone(), self.conv.messages.clone());
        req.system = Some(system.to_string());
        req.max_tokens = self.opts.max_tokens;
        req.reasoning = self.opts.reasoning;
        req.cache_key = Some(self.conv.session.id.clone());
        if self.opts.tool_protocol == ToolProtocol::Native {
            req.server_tools = self.opts.server_tools.clone();
            req.tools = self.offered_specs();
            req.tools.extend(self.disclosure.tools());
            req.tools.extend(self.delegation_tools());
            for tool in &mut req.tools {
                tool.input_schema = north_tools::args::for_model(&tool.input_schema);
            }
        }
        req
    }

    /// Runs one user turn to its end. Events go to `emit` as they happen,
    /// with any known secret scrubbed (a key can reach an event through a
    /// file the model reads or text it repeats).
    pub async fn run_turn(
        &mut self,
        input: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        let redactor = self.services.redactor.clone();
        let scrubbed = move |e: Event| emit(redactor.scrub_event(e));
        if let Some(recovery) = self.recovered.take() {
            scrubbed(Event::Notice {
                kind: NoticeKind::Recovered,
                message: recovery.to_string(),
            });
        }
        self.session_start_hooks(&scrubbed).await;
        if let Err(reason) = self.prompt_hooks(input, &scrubbed).await {
            return self.prompt_blocked(&reason, &scrubbed);
        }
        let message = match self.expand_input(input, &scrubbed, cancel).await {
            Ok(message) => message,
            Err(message) => return TurnEnd::PromptFailed(message),
        };
        if let Err(message) = self.images_accepted() {
            self.conv.pending_images.clear();
            return self.unsent("image", message, &scrubbed);
        }
        self.begin_turn(input, &scrubbed);
        self.offer_turn(Some(input));
        let end = self.run_turn_inner(Some(&message), &scrubbed, cancel).await;
        self.end_turn_snapshot(&scrubbed).await;
        self.snapshot(&scrubbed);
        end
    }

    /// Runs a command the user typed (`!cmd` in the TUI) in the project's
    /// shell, under the same policy and approvals as the model's commands,
    /// and adds what it printed to the conversation so the model sees it
    /// with the next message. No model request is made.
    pub async fn run_user_command(
        &mut self,
        command: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        /// Output characters of a user command kept in the conversation.
        const KEPT: usize = 8_000;
        self.services.ctx.cancel = cancel.child_token();
        self.conv.user_commands += 1;
        let call = north_protocol::ToolCall {
            id: format!("user-{}", self.conv.user_commands),
            name: "shell_run".into(),
            arguments: json!({ "command": command }),
        };
        emit(Event::ToolIntent {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            line: format!("You ran: `{command}`"),
            kind: north_protocol::ToolKind::Execute,
        });
        let outcome = {
            let mut env = self.call_env(emit);
            // The user typed it: no prompt; refusals and the sandbox hold.
            env.typed_by_user = true;
            env.run(&call).await
        };
        emit(Event::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            ok: outcome.ok,
            summary: self.summarize(&call.name, &outcome),
            details: Some(serde_json::to_value(&outcome).unwrap_or_default()),
        });
        let shown: String = match (
            &outcome.error,
            north_protocol::ShellResult::read(&outcome.output),
        ) {
            (Some(e), _) => format!("it was not run: {e}"),
            (None, Some(result)) => format!(
                "exit code {}\nstdout:\n{}\nstderr:\n{}",
                result.exit_code.map_or("?".to_string(), |c| c.to_string()),
                result.stdout,
                result.stderr
            ),
            (None, None) => outcome.output.to_string(),
        };
        let shown: String = shown.chars().take(KEPT).collect();
        self.push_user_text(&format!(
            "[I ran a command myself in the project shell: `{command}`; {shown}]"
        ));
        self.save(emit);
        if cancel.is_cancelled() {
            return self.interrupted(emit, Usage::default());
        }
        emit(Event::TurnEnd {
            stop_reason: None,
            usage: Usage::default(),
        });
        TurnEnd::Done
    }

    /// Continues a turn a killed process left unfinished (its last message
    /// is the user's input or tool results), sending exactly the request
    /// the interrupted process would have sent next. A session whose last
    /// turn ended has nothing to continue.
    pub async fn continue_turn(&mut self, emit: &Emit<'_>, cancel: &CancellationToken) -> TurnEnd {
        let redactor = self.services.redactor.clone();
        let scrubbed = move |e: Event| emit(redactor.scrub_event(e));
        // A turn the user interrupted ended: its note is not a request.
        let unfinished = self.conv.messages.last().is_some_and(|m| {
            (m.role == Role::User && !m.content.last().is_some_and(is_interrupted_note))
                || m.role == Role::Tool
                || m.tool_calls().next().is_some()
        });
        if !unfinished {
            let message =
                "nothing to continue: the session's last turn ended; give a prompt".to_string();
            scrubbed(Event::Error {
                kind: ErrorKind::Config,
                message: message.clone(),
            });
            return TurnEnd::PromptFailed(message);
        }
        self.offer_turn(None);
        let end = self.run_turn_inner(None, &scrubbed, cancel).await;
        self.snapshot(&scrubbed);
        end
    }

    /// Logs and counts the model's response (usage, a cut-off notice) and
    /// keeps it as the assistant's message: reasoning, text, then the calls,
    /// vetted. Returns the calls.
    pub(super) fn take_response(
        &mut self,
        step: u32,
        response: &north_protocol::ChatResponse,
        visible: &str,
        failed: bool,
        turn_usage: &mut Usage,
        emit: &Emit<'_>,
    ) -> Vec<Planned> {
        self.count_response(step, response, visible, failed, turn_usage, emit);
        let cut = !failed && response.stop_reason == Some(StopReason::MaxTokens);
        if let Some(reason) = response.stop_reason.clone().filter(|_| !failed) {
            emit(Event::ModelStopped { turn: step, reason });
        }
        if cut {
            emit(Event::Notice {
                kind: NoticeKind::OutputCut,
                message: format!(
                    "the model's output was cut off at the output limit of {} tokens (--max-tokens)",
                    self.opts.max_tokens
                ),
            });
        }
        // Reasoning first (a provider needs it before the calls it led
        // to), then the raw text (blocks included, so the model sees its
        // own protocol messages consistently), then the calls.
        let mut content: Vec<ContentBlock> = Vec::new();
        if !failed {
            content.extend(
                response
                    .content
                    .iter()
                    .filter(|b| b.is_reasoning() || matches!(b, ContentBlock::Hosted { .. }))
                    .cloned(),
            );
            for query in response
                .content
                .iter()
                .filter_map(ContentBlock::hosted_search_query)
            {
                emit(Event::Notice {
                    kind: NoticeKind::HostedSearch,
                    message: format!("the provider searched the web: {query}"),
                });
            }
        }
        let raw_text = response.text();
        if !raw_text.is_empty() {
            content.push(ContentBlock::text(raw_text));
        }
        let calls: Vec<Planned> = if failed {
            Vec::new()
        } else {
            malformed::vet(
                response.tool_calls().into_iter().cloned().collect(),
                cut,
                self.opts.max_tokens,
            )
        };
        content.extend(calls.iter().map(|p| ContentBlock::ToolCall(p.call.clone())));
        if !content.is_empty() {
            self.conv.messages.push(Message {
                role: Role::Assistant,
                content,
            });
        }
        calls
    }

    /// Logs, traces and counts a response's usage, for the turn and the
    /// session.
    fn count_response(
        &mut self,
        step: u32,
        response: &north_protocol::ChatResponse,
        visible: &str,
        failed: bool,
        turn_usage: &mut Usage,
        emit: &Emit<'_>,
    ) {
        tracing::info!(
            response_id = response.id.as_deref().unwrap_or("-"),
            input_tokens = response.usage.input_tokens,
            output_tokens = response.usage.output_tokens,
            stop_reason = ?response.stop_reason,
            failed = failed,
            "model response"
        );
        tracing::debug!(
            text_chars = visible.len(),
            tool_calls = response.tool_calls().len(),
            cache_read = response.usage.cache_read_input_tokens,
            reasoning_tokens = response.usage.reasoning_tokens,
            "model response details"
        );
        turn_usage.add(&response.usage);
        self.conv.total.add(&response.usage);
        emit(Event::Usage {
            usage: response.usage,
            total: self.conv.total,
        });
        self.services.tracer.record(
            TraceKind::LlmDone,
            json!({"step": step, "usage": response.usage, "stop_reason": response.stop_reason, "text_chars": visible.len(), "tool_calls": response.tool_calls().len()}),
        );
    }

    /// The turn's input made durable before the model sees it; continuing
    /// (no input), the request being worked on, for memory retrieval.
    pub(super) fn take_input(&mut self, input: Option<&str>, emit: &Emit<'_>) -> String {
        match input {
            Some(input) => {
                self.push_user_text(input);
                self.take_images();
                self.take_hook_context();
                self.save(emit);
                input.to_string()
            }
            None => self
                .conv
                .messages
                .iter()
                .rev()
                .find(|m| crate::condense::is_user_input(m))
                .map(Message::text_content)
                .unwrap_or_default(),
        }
    }

    /// Runs one vetted call, its output forwarded live while it runs, and
    /// logs and traces what it did.
    pub(super) async fn run_call(
        &mut self,
        call: &north_protocol::ToolCall,
        permission: Option<crate::hooks::HookPermission>,
        emit: &Emit<'_>,
    ) -> ToolOutcome {
        let started = std::time::Instant::now();
        let outcome = if let Some(outcome) = self.disclosure_call(call) {
            outcome
        } else if let Some(outcome) = self.skill_call(call).await {
            outcome
        } else {
            // A running command's output reaches the front end as it
            // is produced (Event::ToolOutput), while the call runs.
            let (live, mut output) = tokio::sync::mpsc::unbounded_channel();
            let forward = |(stream, text)| {
                emit(Event::ToolOutput {
                    call_id: call.id.clone(),
                    stream,
                    text,
                })
            };
            let outcome = {
                let mut env = self.call_env(emit);
                env.hook_permission = permission;
                env.ctx.live_output = Some(live);
                let run = env.run(call);
                tokio::pin!(run);
                loop {
                    tokio::select! {
                        outcome = &mut run => break outcome,
                        Some(chunk) = output.recv() => forward(chunk),
                    }
                }
            };
            while let Ok(chunk) = output.try_recv() {
                forward(chunk);
            }
            outcome
        };
        tracing::info!(
            tool = %call.name,
            call_id = %call.id,
            args = %crate::intent::log_args(&call.arguments),
            ok = outcome.ok,
            error = outcome.error.as_deref().unwrap_or(""),
            ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        tracing::debug!(
            tool = %call.name,
            output_bytes = outcome.output.to_string().len(),
            summary = %self.summarize(&call.name, &outcome),
            "tool result"
        );
        let mut done = json!({"id": call.id, "tool": call.name, "ok": outcome.ok, "error": outcome.error, "ms": started.elapsed().as_millis() as u64});
        // A command's connections through North's proxy, allowed and
        // refused, are part of the record.
        if let (Some(hosts), Some(record)) = (outcome.output.get("hosts"), done.as_object_mut()) {
            record.insert("hosts".into(), hosts.clone());
        }
        self.services.tracer.record(TraceKind::ToolDone, done);
        outcome
    }

    /// A model request that failed (after retries) or was cancelled ends
    /// the turn, saying why.
    pub(super) fn provider_failed(
        &mut self,
        err: &north_llm::LlmError,
        turn_usage: Usage,
        emit: &Emit<'_>,
    ) -> TurnEnd {
        if err.is_cancelled() {
            return self.interrupted(emit, turn_usage);
        }
        let message = self.services.redactor.scrub(&err.to_string()).into_owned();
        tracing::error!(severity = "recoverable", error = %message, "model request failed");
        self.services.tracer.record(
            TraceKind::Error,
            json!({"kind": "provider", "message": message}),
        );
        emit(Event::Error {
            kind: ErrorKind::Provider,
            message: message.clone(),
        });
        emit(Event::TurnEnd {
            stop_reason: None,
            usage: turn_usage,
        });
        TurnEnd::ProviderFailed(message)
    }

    /// The turn used all its model steps: it ends, and says how to go on.
    pub(super) fn step_limit(&self, turn_usage: Usage, emit: &Emit<'_>) -> TurnEnd {
        let message = format!(
            "Stopped after {} model steps (the step limit). Send another message to let me continue.",
            self.opts.max_steps
        );
        emit(Event::AssistantText {
            text: format!("\n{message}\n"),
        });
        emit(Event::TurnEnd {
            stop_reason: Some(StopReason::Other("max_steps".into())),
            usage: turn_usage,
        });
        self.services.tracer.record(
            TraceKind::StepLimit,
            json!({"max_steps": self.opts.max_steps}),
        );
        TurnEnd::StepLimit
    }
}
