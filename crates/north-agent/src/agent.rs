//! The agent: user input → system prompt + context → model (streamed) →
//! tool calls in order, each with its approval → results appended → model
//! continues, until it answers without tools or the step limit is hit.

use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use north_llm::{Backend, LlmError, ResponseBuilder};
use north_protocol::{
    ChatMessage, ChatRequest, Checkpoint, ContentBlock, ErrorKind, Event, Message, Role, State,
    StopReason, StreamDelta, ToolCall, ToolOutcome, Usage,
};
use north_tools::{Registry, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::blocks::{BlockFilter, BlockKind};
use crate::condense::{SUMMARY_INSTRUCTIONS, estimate_tokens, split_point, transcript};
use crate::config::ToolProtocol;
use crate::context::{ProjectCard, SystemParams, agents_md, state_text, system_prompt};
use crate::intent::{intent_line, summary};
use crate::memory::{MemoryFile, retrieve, retrieved_block};
use crate::notes::{Action, NotesPatch};
use crate::redact::Redactor;
use crate::run_tool::CallEnv;
use crate::store::{Session, StoreError, Tracer, now_ts};
use crate::textcalls;

/// Where events go: any thread-safe callback (a channel sender, a printer).
pub type Emit<'a> = dyn Fn(Event) + Send + Sync + 'a;

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
    /// Output tokens per request.
    pub max_tokens: u32,
    /// Context budget in tokens; condensation keeps requests under it.
    pub context_budget: u64,
    /// Extra memory files searched besides the project's (e.g. global).
    pub extra_memory: Vec<PathBuf>,
    /// Replaces North's product rules at the top of the system prompt, for
    /// agents with a narrower role (e.g. the mesh executor).
    pub role: Option<String>,
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
            extra_memory: Vec::new(),
            role: None,
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
}

/// An agent bound to one session.
pub struct Agent {
    backend: Arc<dyn Backend>,
    tools: Registry,
    ctx: ToolContext,
    approver: Arc<dyn Approver>,
    session: Session,
    tracer: Tracer,
    redactor: Redactor,
    opts: AgentOptions,
    state: State,
    messages: Vec<Message>,
    revision: u64,
    card: Option<ProjectCard>,
    total: Usage,
    /// Set by NOTES actions: `Some(true)` condense now, `Some(false)` if worthwhile.
    condense_requested: Option<bool>,
}

/// Ends a turn the user interrupted: the error and turn-end events.
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

fn chat_message(m: &Message) -> ChatMessage {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut content = String::new();
    for b in &m.content {
        match b {
            ContentBlock::Text { text } => content.push_str(text),
            ContentBlock::ToolCall(c) => content.push_str(&format!(
                "\n[tool_call {} {} {}]",
                c.id, c.name, c.arguments
            )),
            ContentBlock::ToolResult {
                call_id,
                content: c,
                ..
            } => content.push_str(&format!("[tool_result {call_id}] {c}")),
        }
    }
    ChatMessage {
        role: role.into(),
        content,
    }
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
    ) -> Result<Agent, StoreError> {
        let tracer = session.tracer(redactor.clone())?;
        let mut agent = Agent {
            backend,
            tools,
            ctx,
            approver,
            session,
            tracer,
            redactor,
            opts,
            state: State::default(),
            messages: Vec::new(),
            revision: 0,
            card: None,
            total: Usage::default(),
            condense_requested: None,
        };
        if let Some(cp) = agent.session.load_checkpoint()? {
            agent.state = cp.state;
            agent.revision = cp.revision;
            agent.messages = cp.messages;
            agent.close_interrupted_calls();
            agent.tracer.record(
                "resume",
                json!({"revision": agent.revision, "messages": agent.messages.len()}),
            );
        }
        agent.ctx.capabilities = agent.state.capabilities_granted.clone();
        Ok(agent)
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    /// The current state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The conversation.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Usage over the session so far (this process).
    pub fn total_usage(&self) -> Usage {
        self.total
    }

    /// Grants a capability on the user's behalf (e.g. `--grant net`).
    pub fn grant(&mut self, cap: &str) {
        crate::notes::grant_capability(&mut self.state, cap);
        self.ctx.capabilities = self.state.capabilities_granted.clone();
    }

    /// A killed process can leave tool calls without results; they are
    /// answered as interrupted so the conversation stays well-formed and the
    /// model checks the real state instead of assuming.
    fn close_interrupted_calls(&mut self) {
        let Some(last) = self
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
        else {
            return;
        };
        let calls: Vec<ToolCall> = self.messages[last].tool_calls().cloned().collect();
        let answered: Vec<String> = self.messages[last + 1..]
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                ContentBlock::ToolResult { call_id, .. } => Some(call_id.clone()),
                _ => None,
            })
            .collect();
        let missing: Vec<ContentBlock> = calls
            .iter()
            .filter(|c| !answered.contains(&c.id))
            .map(|c| ContentBlock::ToolResult {
                call_id: c.id.clone(),
                content: serde_json::to_string(&ToolOutcome::err(
                    "interrupted: the session stopped before this call finished; check the current state before retrying",
                ))
                .unwrap_or_default(),
                is_error: true,
            })
            .collect();
        if !missing.is_empty() {
            self.push_results(missing);
        }
    }

    fn push_results(&mut self, blocks: Vec<ContentBlock>) {
        match self.messages.last_mut() {
            Some(m) if m.role == Role::Tool => m.content.extend(blocks),
            _ => self.messages.push(Message {
                role: Role::Tool,
                content: blocks,
            }),
        }
    }

    /// Writes the checkpoint atomically (secrets scrubbed).
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        self.revision += 1;
        let cp = Checkpoint {
            session_id: self.session.id.clone(),
            revision: self.revision,
            updated_ts: now_ts(),
            state: self.state.clone(),
            recent_messages: self.messages.iter().map(chat_message).collect(),
            trace_tail: vec![
                self.tracer
                    .path()
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("trace.jsonl")
                    .to_string(),
            ],
            messages: self.messages.clone(),
        };
        self.session.save_checkpoint(&cp, &self.redactor)
    }

    fn save(&mut self, emit: &Emit<'_>) {
        if let Err(e) = self.checkpoint() {
            emit(Event::Error {
                kind: ErrorKind::Internal,
                message: format!("checkpoint not saved: {e}"),
            });
        }
    }

    async fn system(&mut self, user_input: &str) -> String {
        if self.card.is_none() {
            self.card = Some(ProjectCard::load_or_compute(&self.tools, &self.ctx).await);
        }
        let card = self.card.clone().unwrap_or_default();
        let mut entries = MemoryFile::project(&self.ctx.root)
            .load()
            .unwrap_or_default();
        for extra in &self.opts.extra_memory {
            entries.extend(MemoryFile::new(extra.clone()).load().unwrap_or_default());
        }
        let hits = retrieve(&entries, user_input, 5);
        if !hits.is_empty() {
            self.tracer.record(
                "retrieval",
                json!({"query": user_input.chars().take(200).collect::<String>(), "hits": hits.iter().map(|h| json!({"id": h.entry.id, "score": h.score})).collect::<Vec<_>>()}),
            );
        }
        let text_protocol = self.opts.tool_protocol == ToolProtocol::Text;
        let protocol = if text_protocol {
            let tools: Vec<String> = self
                .tools
                .specs()
                .iter()
                .map(|t| {
                    format!(
                        "- {}: {} args schema: {}",
                        t.name, t.description, t.input_schema
                    )
                })
                .collect();
            format!(
                "{}\n\nTools:\n{}",
                textcalls::INSTRUCTIONS,
                tools.join("\n")
            )
        } else {
            String::new()
        };
        let params = SystemParams {
            rules: self
                .opts
                .role
                .clone()
                .unwrap_or_else(|| crate::context::RULES.to_string()),
            readme: card.readme,
            tree: card.tree,
            languages: card.languages,
            hotfiles: card.hotfiles,
            agents_md: agents_md(&self.ctx.root),
            retrieved: retrieved_block(&hits),
            state: state_text(&self.state),
            text_protocol,
            protocol,
        };
        system_prompt(params).unwrap_or_else(|e| {
            tracing::error!(error = %e, "system prompt failed to render");
            String::new()
        })
    }

    fn request(&self, system: &str) -> ChatRequest {
        let mut req = ChatRequest::new(self.opts.model.clone(), self.messages.clone());
        req.system = Some(system.to_string());
        req.max_tokens = self.opts.max_tokens;
        if self.opts.tool_protocol == ToolProtocol::Native {
            req.tools = self.tools.specs();
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
        let redactor = self.redactor.clone();
        let scrubbed = move |e: Event| emit(redactor.scrub_event(e));
        self.run_turn_inner(input, &scrubbed, cancel).await
    }

    async fn run_turn_inner(
        &mut self,
        input: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        self.ctx.cancel = cancel.child_token();
        self.messages.push(Message::user(input));
        // The input is durable before the model sees it.
        self.save(emit);
        let mut system = self.system(input).await;
        let mut turn_usage = Usage::default();
        for step in 1..=self.opts.max_steps {
            emit(Event::TurnStarted { turn: step });
            match self.maybe_condense(&system, emit, cancel).await {
                Err(end) => return end,
                Ok(true) => system = self.system(input).await,
                Ok(false) => {}
            }
            let request = self.request(&system);
            self.tracer.record(
                "llm_req",
                json!({"step": step, "provider": self.opts.provider, "model": self.opts.model, "messages": request.messages.len(), "tools": request.tools.len(), "approx_tokens": estimate_tokens(&request.messages)}),
            );
            let (response, visible, blocks, failure) = self.stream(request, emit, cancel).await;
            turn_usage.add(&response.usage);
            self.total.add(&response.usage);
            emit(Event::Usage {
                usage: response.usage,
                total: self.total,
            });
            self.tracer.record(
                "llm_done",
                json!({"step": step, "usage": response.usage, "stop_reason": response.stop_reason, "text_chars": visible.len(), "tool_calls": response.tool_calls().len()}),
            );
            // The assistant message keeps its raw text (blocks included) so
            // the model sees its own protocol messages consistently.
            let mut content: Vec<ContentBlock> = Vec::new();
            let raw_text = response.text();
            if !raw_text.is_empty() {
                content.push(ContentBlock::text(raw_text));
            }
            let mut calls: Vec<ToolCall> = response.tool_calls().into_iter().cloned().collect();
            if failure.is_some() {
                calls.clear();
            }
            content.extend(calls.iter().cloned().map(ContentBlock::ToolCall));
            if !content.is_empty() {
                self.messages.push(Message {
                    role: Role::Assistant,
                    content,
                });
            }
            if let Some(err) = failure {
                self.save(emit);
                return if err.is_cancelled() {
                    interrupted(emit, turn_usage)
                } else {
                    let message = self.redactor.scrub(&err.to_string()).into_owned();
                    self.tracer
                        .record("error", json!({"kind": "provider", "message": message}));
                    emit(Event::Error {
                        kind: ErrorKind::Provider,
                        message: message.clone(),
                    });
                    emit(Event::TurnEnd {
                        stop_reason: None,
                        usage: turn_usage,
                    });
                    TurnEnd::ProviderFailed(message)
                };
            }
            let text_calls = self.apply_blocks(&blocks, emit).await;
            if self.opts.tool_protocol == ToolProtocol::Text {
                calls.extend(text_calls);
            }
            self.save(emit);
            if calls.is_empty() {
                if let Err(end) = self.maybe_condense(&system, emit, cancel).await {
                    return end;
                }
                emit(Event::TurnEnd {
                    stop_reason: response.stop_reason,
                    usage: turn_usage,
                });
                return TurnEnd::Done;
            }
            self.tracer.record(
                "tool_plan",
                json!({"step": step, "calls": calls.iter().map(|c| json!({"id": c.id, "tool": c.name})).collect::<Vec<_>>()}),
            );
            for (i, call) in calls.iter().enumerate() {
                if cancel.is_cancelled() {
                    for rest in &calls[i..] {
                        self.record_result(
                            rest,
                            &ToolOutcome::err("interrupted by the user before this call ran"),
                            emit,
                        );
                    }
                    self.save(emit);
                    return interrupted(emit, turn_usage);
                }
                emit(Event::ToolIntent {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    line: intent_line(&call.name, &call.arguments),
                });
                self.tracer.record("tool_start", json!({"id": call.id, "tool": call.name, "args": crate::intent::trace_args(&call.arguments)}));
                let started = std::time::Instant::now();
                let outcome = {
                    let mut env = CallEnv {
                        tools: &self.tools,
                        ctx: &mut self.ctx,
                        approver: &*self.approver,
                        state: &mut self.state,
                        tracer: &self.tracer,
                        emit,
                    };
                    env.run(call).await
                };
                tracing::info!(tool = %call.name, ok = outcome.ok, ms = started.elapsed().as_millis() as u64, "tool call");
                self.tracer.record(
                    "tool_done",
                    json!({"id": call.id, "tool": call.name, "ok": outcome.ok, "error": outcome.error, "ms": started.elapsed().as_millis() as u64}),
                );
                self.record_result(call, &outcome, emit);
                // Each result is durable as soon as it exists.
                self.save(emit);
            }
        }
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
        self.tracer
            .record("step_limit", json!({"max_steps": self.opts.max_steps}));
        TurnEnd::StepLimit
    }

    /// Condenses when the context nears the budget or a NOTES action asked.
    /// `Ok(true)` when messages were condensed (the system prompt changes).
    async fn maybe_condense(
        &mut self,
        system: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnEnd> {
        let requested = self.condense_requested.take();
        let used = estimate_tokens(&self.messages) + system.len() as u64 / 4;
        let budget = self.opts.context_budget;
        let needed = match requested {
            Some(true) => true,
            Some(false) => used > budget / 2,
            None => used > budget / 100 * 85,
        };
        if !needed {
            if requested.is_some() {
                self.tracer.record(
                    "condense",
                    json!({"skipped": true, "tokens": used, "budget": budget}),
                );
            }
            return Ok(false);
        }
        let Some(cut) = split_point(&self.messages, budget / 100 * 30) else {
            return Ok(false);
        };
        let mut prompt = String::new();
        if !self.state.episode_summary.is_empty() {
            prompt.push_str(&format!(
                "Summary so far:\n{}\n\n",
                self.state.episode_summary
            ));
        }
        prompt.push_str(&transcript(&self.messages[..cut]));
        let mut req = ChatRequest::new(self.opts.model.clone(), vec![Message::user(prompt)]);
        req.system = Some(SUMMARY_INSTRUCTIONS.into());
        req.max_tokens = 1024;
        self.tracer.record(
            "llm_req",
            json!({"purpose": "condense", "model": self.opts.model, "messages": 1, "tools": 0}),
        );
        match north_llm::collect(self.backend.stream_chat(req, cancel.clone())).await {
            Ok(resp) => {
                self.total.add(&resp.usage);
                self.tracer.record(
                    "llm_done",
                    json!({"purpose": "condense", "usage": resp.usage}),
                );
                let (summary, _) = crate::blocks::split_blocks(&resp.text());
                self.state.episode_summary = summary.trim().to_string();
                let request = self.messages[..cut]
                    .iter()
                    .rev()
                    .find(|m| crate::condense::is_user_input(m))
                    .map(Message::text_content);
                self.messages.drain(..cut);
                // Providers want a user message first; restate the request
                // the kept messages belong to.
                if self.messages.first().is_some_and(|m| m.role != Role::User) {
                    let note = match request {
                        // Condensed before: the note already restates the request.
                        Some(r) if r.starts_with("[Earlier messages were condensed") => r,
                        Some(r) => format!(
                            "[Earlier messages were condensed into the session summary.] The request being worked on: {r}"
                        ),
                        None => "[Earlier messages were condensed into the session summary.]"
                            .to_string(),
                    };
                    self.messages.insert(0, Message::user(note));
                }
                let after = estimate_tokens(&self.messages);
                self.tracer.record(
                    "condense",
                    json!({"tokens_before": used, "tokens_after": after, "dropped_messages": cut}),
                );
                self.save(emit);
                Ok(true)
            }
            Err(e) if e.is_cancelled() => Err(interrupted(emit, Usage::default())),
            Err(e) => {
                // Not fatal: the turn goes on with the longer context.
                self.tracer.record(
                    "condense",
                    json!({"failed": self.redactor.scrub(&e.to_string())}),
                );
                Ok(false)
            }
        }
    }

    fn record_result(&mut self, call: &ToolCall, outcome: &ToolOutcome, emit: &Emit<'_>) {
        emit(Event::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            ok: outcome.ok,
            summary: summary(&call.name, outcome),
            details: Some(serde_json::to_value(outcome).unwrap_or_default()),
        });
        let block = match self.opts.tool_protocol {
            ToolProtocol::Native => ContentBlock::ToolResult {
                call_id: call.id.clone(),
                content: serde_json::to_string(outcome).unwrap_or_default(),
                is_error: !outcome.ok,
            },
            ToolProtocol::Text => {
                ContentBlock::text(textcalls::result_content(&call.id, &call.name, outcome))
            }
        };
        self.push_results(vec![block]);
    }

    async fn stream(
        &mut self,
        request: ChatRequest,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> (
        north_protocol::ChatResponse,
        String,
        Vec<crate::blocks::Block>,
        Option<LlmError>,
    ) {
        let mut stream = self.backend.stream_chat(request, cancel.clone());
        let mut builder = ResponseBuilder::new();
        let mut filter = BlockFilter::new();
        let mut visible = String::new();
        let mut failure = None;
        let mut deltas = 0u64;
        while let Some(item) = stream.next().await {
            match item {
                Ok(delta) => {
                    deltas += 1;
                    if let StreamDelta::Text { text } = &delta {
                        let shown = filter.feed(text);
                        if !shown.is_empty() {
                            visible.push_str(&shown);
                            emit(Event::AssistantText { text: shown });
                        }
                    }
                    builder.push(&delta);
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let (tail, blocks) = filter.finish();
        if !tail.is_empty() {
            visible.push_str(&tail);
            emit(Event::AssistantText { text: tail });
        }
        self.tracer.record(
            "llm_stream",
            json!({"deltas": deltas, "failed": failure.is_some()}),
        );
        (builder.finish(), visible, blocks, failure)
    }

    /// Applies NOTES blocks and their actions; returns text-protocol calls.
    async fn apply_blocks(
        &mut self,
        blocks: &[crate::blocks::Block],
        emit: &Emit<'_>,
    ) -> Vec<ToolCall> {
        let mut calls = Vec::new();
        let mut actions = Vec::new();
        for block in blocks {
            match block.kind {
                BlockKind::Notes => {
                    let parsed = if block.terminated {
                        NotesPatch::parse(&block.body).map_err(|e| e.to_string())
                    } else {
                        Err(crate::notes::NotesError::Unterminated.to_string())
                    };
                    match parsed {
                        Ok(patch) => {
                            patch.apply(&mut self.state);
                            self.tracer.record("notes_patch", json!({"ok": true, "unknown_keys": patch.unknown_keys, "state": self.state}));
                            actions.extend(patch.actions);
                        }
                        Err(e) => self
                            .tracer
                            .record("notes_patch", json!({"ok": false, "error": e})),
                    }
                }
                BlockKind::ToolCalls => {
                    let parsed = if block.terminated {
                        textcalls::parse(&block.body).map_err(|e| e.to_string())
                    } else {
                        Err(textcalls::TextCallsError::Unterminated.to_string())
                    };
                    match parsed {
                        Ok(c) => calls.extend(c),
                        Err(e) => {
                            self.tracer
                                .record("tool_plan", json!({"ok": false, "error": e}));
                            // Tell the model so it can fix the block.
                            self.push_results(vec![ContentBlock::text(format!(
                                "TOOL_CALLS_JSON rejected, nothing ran: {e}"
                            ))]);
                        }
                    }
                }
            }
        }
        if !actions.is_empty() {
            self.run_actions(actions, emit).await;
        }
        calls
    }

    async fn run_actions(&mut self, actions: Vec<Action>, emit: &Emit<'_>) {
        let mut log = Vec::new();
        for action in actions {
            let result = match &action {
                Action::CondenseNow => {
                    self.condense_requested = Some(true);
                    "scheduled"
                }
                Action::CondenseSmart => {
                    self.condense_requested.get_or_insert(false);
                    "scheduled"
                }
                // A model may ask; only the user grants. A self-grant is a request.
                Action::RequestPermission(cap) | Action::GrantPermission(cap) => {
                    let mut env = CallEnv {
                        tools: &self.tools,
                        ctx: &mut self.ctx,
                        approver: &*self.approver,
                        state: &mut self.state,
                        tracer: &self.tracer,
                        emit,
                    };
                    if env.capability("notes", cap, "requested in NOTES").await {
                        "granted by user"
                    } else {
                        "denied by user"
                    }
                }
                Action::Unknown(_) => "ignored (unknown action)",
            };
            log.push(json!({"action": action.as_protocol(), "result": result}));
        }
        self.tracer.record("actions", json!({"actions": log}));
    }
}
