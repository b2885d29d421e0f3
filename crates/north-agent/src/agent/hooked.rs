//! Where the user's hooks run in a session's life (see [`crate::hooks`]):
//! at its start and end, on each prompt, around each tool call, before a
//! turn ends, before condensing, and while North waits for the user.

use std::sync::Arc;

use north_protocol::{Event, HookEvent, NoticeKind, ToolCall, ToolOutcome, Usage};
use serde_json::{Map, Value, json};

use super::malformed::Planned;
use super::{Agent, Emit, TurnEnd};
use crate::hooks::{HookSession, HookVerdict, Hooks};

/// Why a session ends, as `SessionEnd` hooks are told (Claude Code's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEndReason {
    /// `/clear` or `/new` replaced the session.
    Clear,
    /// The user quit.
    Exit,
    /// Anything else (a headless run finished).
    Other,
}

impl SessionEndReason {
    fn word(self) -> &'static str {
        match self {
            SessionEndReason::Clear => "clear",
            SessionEndReason::Exit => "prompt_input_exit",
            SessionEndReason::Other => "other",
        }
    }
}

fn fields(pairs: impl IntoIterator<Item = (&'static str, Value)>) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

impl Agent {
    /// Runs `hooks` at this session's lifecycle events.
    pub fn set_hooks(&mut self, hooks: Arc<Hooks>) {
        self.hooks = (!hooks.set().is_empty()).then_some(hooks);
    }

    pub(super) fn hook_session(&self) -> HookSession {
        HookSession {
            session_id: self.conv.session.id.clone(),
            transcript_path: self.conv.session.log_path(),
            permission_mode: self.modes.mode,
        }
    }

    async fn fire(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        fields: Map<String, Value>,
        emit: &Emit<'_>,
    ) -> HookVerdict {
        match &self.hooks {
            Some(hooks) => {
                hooks
                    .fire(event, subject, &self.hook_session(), fields, emit)
                    .await
            }
            None => HookVerdict::default(),
        }
    }

    /// `SessionStart`, once per process, before the first prompt: what the
    /// hooks print joins that prompt as context.
    pub(super) async fn session_start_hooks(&mut self, emit: &Emit<'_>) {
        if self.hooks_started || self.hooks.is_none() {
            return;
        }
        self.hooks_started = true;
        let source = match self.start_source {
            Some(source) => source,
            None if self.conv.messages.is_empty() => "startup",
            None => "resume",
        };
        let verdict = self
            .fire(
                HookEvent::SessionStart,
                Some(source),
                fields([("source", json!(source))]),
                emit,
            )
            .await;
        self.hook_context.extend(verdict.context);
    }

    /// `UserPromptSubmit`: `Err(reason)` when a hook blocked the prompt;
    /// otherwise what the hooks add as context is kept for the message.
    pub(super) async fn prompt_hooks(
        &mut self,
        prompt: &str,
        emit: &Emit<'_>,
    ) -> Result<(), String> {
        let verdict = self
            .fire(
                HookEvent::UserPromptSubmit,
                None,
                fields([("prompt", json!(prompt))]),
                emit,
            )
            .await;
        if let Some(reason) = verdict.block.or(verdict.halt) {
            self.hook_context.clear();
            return Err(reason);
        }
        self.hook_context.extend(verdict.context);
        Ok(())
    }

    /// Adds what hooks gave as context to the user's message just taken.
    pub(super) fn take_hook_context(&mut self) {
        for context in std::mem::take(&mut self.hook_context) {
            let (open, close) = crate::hooks::CONTEXT_TAGS;
            self.push_user_text(&format!("{open}\n{context}\n{close}"));
        }
    }

    /// `PreToolUse` for `call`.
    pub(super) async fn pre_tool_hooks(&self, call: &ToolCall, emit: &Emit<'_>) -> HookVerdict {
        match &self.hooks {
            Some(hooks) => {
                hooks
                    .pre_tool_use(
                        &self.hook_session(),
                        &call.name,
                        &call.arguments,
                        &call.id,
                        emit,
                    )
                    .await
            }
            None => HookVerdict::default(),
        }
    }

    /// Records that a `PreToolUse` hook blocked `call`: the model reads
    /// the hook's reason as the call's result.
    pub(super) fn blocked_by_hook(&mut self, call: &ToolCall, reason: &str, emit: &Emit<'_>) {
        let outcome = ToolOutcome::err(format!(
            "a PreToolUse hook blocked this call, so it did not run: {reason}"
        ));
        self.record_result(call, &outcome, emit);
        self.save(emit);
    }

    /// `PostToolUse` after `call` succeeded: a hook's block or exit 2 is
    /// told to the model beside the result (the call already ran).
    pub(super) async fn post_tool_hooks(
        &self,
        call: &ToolCall,
        outcome: &mut ToolOutcome,
        emit: &Emit<'_>,
    ) -> Option<String> {
        let hooks = self.hooks.as_ref()?;
        hooks
            .post_tool_use(
                &self.hook_session(),
                &call.name,
                &call.arguments,
                &call.id,
                outcome,
                emit,
            )
            .await
    }

    /// `Stop`: `Some(reason)` when a hook wants the turn to go on, with the
    /// reason as the model's next instruction.
    pub(super) async fn stop_hooks(&self, active: bool, emit: &Emit<'_>) -> Option<String> {
        // A sub-agent's end is `SubagentStop`, as in Claude Code.
        let event = if self.depth > 0 {
            HookEvent::SubagentStop
        } else {
            HookEvent::Stop
        };
        let verdict = self
            .fire(
                event,
                None,
                fields([("stop_hook_active", json!(active))]),
                emit,
            )
            .await;
        if verdict.halt.is_some() {
            return None;
        }
        verdict.block
    }

    /// `SubagentStart`, before a sub-agent's first step: what the hooks
    /// add as context joins the sub-agent's prompt.
    pub(super) async fn subagent_start_hooks(&self, sub: &mut Agent, name: &str, emit: &Emit<'_>) {
        if self.hooks.is_none() {
            return;
        }
        let verdict = self
            .fire(
                HookEvent::SubagentStart,
                Some(name),
                fields([
                    ("agent_id", json!(sub.session_id())),
                    ("agent_type", json!(name)),
                ]),
                emit,
            )
            .await;
        sub.hook_context.extend(verdict.context);
    }

    /// `WorktreeCreate`, when North made a worktree for a sub-agent:
    /// `Err` with the reason when a hook blocked it.
    pub(super) async fn worktree_create_hooks(
        &self,
        wt: &north_worktree::Worktree,
        emit: &Emit<'_>,
    ) -> Result<(), String> {
        let verdict = self
            .fire(HookEvent::WorktreeCreate, None, wt.hook_fields(), emit)
            .await;
        match verdict.block.or(verdict.halt) {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// `PostCompact`, after the conversation was condensed (`auto` or
    /// `manual`), with the summary it now starts from.
    /// Then `SessionStart` with `source: compact`, as Claude Code fires it:
    /// what those hooks print joins the next message as context.
    pub(super) async fn post_compact_hooks(&mut self, trigger: &str, emit: &Emit<'_>) {
        if self.hooks.is_none() {
            return;
        }
        self.fire(
            HookEvent::PostCompact,
            Some(trigger),
            fields([
                ("trigger", json!(trigger)),
                ("compact_summary", json!(self.conv.state.episode_summary)),
            ]),
            emit,
        )
        .await;
        let verdict = self
            .fire(
                HookEvent::SessionStart,
                Some("compact"),
                fields([("source", json!("compact"))]),
                emit,
            )
            .await;
        self.hook_context.extend(verdict.context);
    }

    /// `PreCompact`, before condensing (`auto` or `manual`).
    pub(super) async fn pre_compact_hooks(
        &self,
        trigger: &str,
        instructions: Option<&str>,
        emit: &Emit<'_>,
    ) {
        self.fire(
            HookEvent::PreCompact,
            Some(trigger),
            fields([
                ("trigger", json!(trigger)),
                ("custom_instructions", json!(instructions.unwrap_or(""))),
            ]),
            emit,
        )
        .await;
    }

    /// Ends a turn whose prompt a `UserPromptSubmit` hook blocked: the
    /// prompt is not kept and nothing is sent.
    pub(super) fn prompt_blocked(&self, reason: &str, emit: &Emit<'_>) -> TurnEnd {
        let message = format!("a UserPromptSubmit hook blocked the prompt: {reason}");
        self.unsent("hook", message, emit)
    }

    /// A hook said `"continue": false`: the calls after it do not run and
    /// the turn ends, saying why.
    pub(super) fn halted(
        &mut self,
        rest: &[Planned],
        reason: &str,
        turn_usage: Usage,
        emit: &Emit<'_>,
    ) -> TurnEnd {
        for p in rest {
            self.record_result(
                &p.call,
                &ToolOutcome::err(format!("not run: a hook stopped the turn ({reason})")),
                emit,
            );
        }
        self.save(emit);
        emit(Event::Notice {
            kind: NoticeKind::HookStopped,
            message: format!("a hook stopped the turn: {reason}"),
        });
        emit(Event::TurnEnd {
            stop_reason: None,
            usage: turn_usage,
        });
        TurnEnd::Done
    }

    /// `SessionEnd`: a front end calls this when it leaves the session.
    /// Background commands of the session are killed with what they started.
    pub async fn end_session(&mut self, reason: SessionEndReason, emit: &Emit<'_>) {
        self.services.ctx.shell.jobs().kill_all();
        self.modes.plain_shell.jobs().kill_all();
        if self.hooks.is_none() {
            return;
        }
        self.fire(
            HookEvent::SessionEnd,
            Some(reason.word()),
            fields([("reason", json!(reason.word()))]),
            emit,
        )
        .await;
    }
}

/// `Notification` while North waits for the user: started beside the
/// prompt (a slow notifier must not hold the question back); what it did
/// is logged.
pub(super) fn notify(hooks: Option<&Arc<Hooks>>, session: &HookSession, message: String) {
    let Some(hooks) = hooks.filter(|h| h.set().has(HookEvent::Notification)) else {
        return;
    };
    let hooks = Arc::clone(hooks);
    let session = session.clone();
    tokio::spawn(async move {
        hooks
            .fire(
                HookEvent::Notification,
                None,
                &session,
                fields([("message", json!(message))]),
                &|_| {},
            )
            .await;
    });
}

/// `call` with a hook's `updatedInput` laid over its arguments; the hook
/// saw `path` also as Claude Code's `file_path`, so that name sets `path`.
pub(super) fn with_input(
    call: &ToolCall,
    mut fields: serde_json::Map<String, serde_json::Value>,
) -> ToolCall {
    let mut arguments = call.arguments.clone();
    if let Some(args) = arguments.as_object_mut() {
        if let Some(path) = fields.remove("file_path") {
            if args.contains_key("path") || !args.contains_key("file_path") {
                args.insert("path".into(), path);
            } else {
                args.insert("file_path".into(), path);
            }
        }
        args.extend(fields);
    }
    ToolCall {
        arguments,
        ..call.clone()
    }
}
