//! The hooks around one tool call — `PreToolUse` before it, `PostToolUse`
//! after it — in one place for every front end: the agent's turn loop and
//! the front ends that call tools themselves (`north tool`, `north mcp
//! serve`, through [`HookGate`]).

use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{Event, HookEvent, ToolOutcome};
use serde_json::{Map, Value, json};

use super::{HookSession, HookVerdict, Hooks, hook_tool_input};

fn fields(name: &str, args: &Value, id: &str) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("tool_name".into(), json!(name));
    out.insert("tool_input".into(), hook_tool_input(args));
    out.insert("tool_use_id".into(), json!(id));
    out
}

impl Hooks {
    /// `PreToolUse` for a call of `name` with `args`.
    pub(crate) async fn pre_tool_use(
        &self,
        session: &HookSession,
        name: &str,
        args: &Value,
        id: &str,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> HookVerdict {
        self.fire(
            HookEvent::PreToolUse,
            Some(name),
            session,
            fields(name, args, id),
            emit,
        )
        .await
    }

    /// `PostToolUse` after a call that succeeded (`PostToolUseFailure`
    /// after one that failed): what a hook says (a block, an exit 2,
    /// context) is put beside the result as `hook_feedback` (the call
    /// already ran). Returns a hook's request to stop (`continue: false`).
    pub(crate) async fn post_tool_use(
        &self,
        session: &HookSession,
        name: &str,
        args: &Value,
        id: &str,
        outcome: &mut ToolOutcome,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> Option<String> {
        let mut input = fields(name, args, id);
        // A failed call is `PostToolUseFailure`, with its error.
        let event = if outcome.ok {
            input.insert("tool_response".into(), outcome.output.clone());
            HookEvent::PostToolUse
        } else {
            input.insert(
                "error".into(),
                json!(outcome.error.clone().unwrap_or_default()),
            );
            input.insert("is_interrupt".into(), json!(false));
            HookEvent::PostToolUseFailure
        };
        let verdict = self.fire(event, Some(name), session, input, emit).await;
        let feedback: Vec<String> = verdict.block.into_iter().chain(verdict.context).collect();
        if !feedback.is_empty() {
            let note = json!(feedback.join("\n"));
            match outcome.output.as_object_mut() {
                Some(out) => {
                    out.insert("hook_feedback".into(), note);
                }
                None => {
                    outcome.output = json!({"result": outcome.output, "hook_feedback": note});
                }
            }
        }
        verdict.halt
    }
}

/// The hooks as a [`north_tools::CallGate`] for a front end that calls
/// tools itself: a `PreToolUse` block or stop refuses the call.
#[derive(Debug, Clone)]
pub struct HookGate {
    hooks: Arc<Hooks>,
    session: HookSession,
}

impl HookGate {
    /// A gate running `hooks` with `session` as what they are told.
    pub fn new(hooks: Arc<Hooks>, session: HookSession) -> Self {
        HookGate { hooks, session }
    }
}

impl north_tools::CallGate for HookGate {
    fn before<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let verdict = self
                .hooks
                .pre_tool_use(&self.session, name, args, id, &|_| {})
                .await;
            match verdict.block.or(verdict.halt) {
                Some(reason) => Err(reason),
                None => Ok(()),
            }
        })
    }

    fn after<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        id: &'a str,
        outcome: &'a mut ToolOutcome,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let _ = self
                .hooks
                .post_tool_use(&self.session, name, args, id, outcome, &|_| {})
                .await;
        })
    }
}
