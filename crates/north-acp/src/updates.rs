//! North events as ACP `session/update`s.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    TextContent, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use north_protocol::Event;

/// The ACP kind of a North tool kind: the tool says what it does, the
/// editor files it accordingly.
pub(crate) fn acp_kind(kind: north_protocol::ToolKind) -> ToolKind {
    use north_protocol::ToolKind as K;
    match kind {
        K::Read => ToolKind::Read,
        K::Search => ToolKind::Search,
        K::Edit => ToolKind::Edit,
        K::Execute => ToolKind::Execute,
        K::Fetch => ToolKind::Fetch,
        K::Other => ToolKind::Other,
    }
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t.to_string()))
}

/// A finished tool call: its status and one line about it.
fn result_update(call_id: String, ok: bool, summary: &str) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id,
        ToolCallUpdateFields::new()
            .status(if ok {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            })
            .content(vec![ToolCallContent::from(text(summary))]),
    ))
}

/// The update an event becomes, if the editor shows it.
pub(crate) fn update_for(event: &Event) -> Option<SessionUpdate> {
    Some(match event {
        Event::AssistantText { text: t } => {
            SessionUpdate::AgentMessageChunk(ContentChunk::new(text(t)))
        }
        Event::Thinking { text: t } => SessionUpdate::AgentThoughtChunk(ContentChunk::new(text(t))),
        Event::ToolIntent {
            call_id,
            line,
            kind,
            ..
        } => SessionUpdate::ToolCall(
            ToolCall::new(call_id.clone(), line.clone())
                .kind(acp_kind(*kind))
                .status(ToolCallStatus::InProgress),
        ),
        Event::ToolResult {
            call_id,
            ok,
            summary,
            ..
        } => result_update(call_id.clone(), *ok, summary),
        Event::Error { message, .. } => SessionUpdate::AgentMessageChunk(ContentChunk::new(text(
            &format!("\n[error: {message}]\n"),
        ))),
        // A sub-agent's tool calls are tool calls of their own, named
        // under the `agent` call they belong to; its words stay inside it
        // (its answer is the `agent` call's result).
        Event::Agent {
            call_id,
            agent,
            event,
        } => match &**event {
            Event::ToolIntent {
                call_id: inner,
                line,
                kind,
                ..
            } => SessionUpdate::ToolCall(
                ToolCall::new(format!("{call_id}/{inner}"), format!("[{agent}] {line}"))
                    .kind(acp_kind(*kind))
                    .status(ToolCallStatus::InProgress),
            ),
            Event::ToolResult {
                call_id: inner,
                ok,
                summary,
                ..
            } => result_update(format!("{call_id}/{inner}"), *ok, summary),
            _ => return None,
        },
        Event::Plan { goals, open_loops } => SessionUpdate::Plan(Plan::new(
            open_loops
                .iter()
                .map(|l| {
                    PlanEntry::new(
                        l.clone(),
                        PlanEntryPriority::Medium,
                        PlanEntryStatus::InProgress,
                    )
                })
                .chain(goals.iter().filter(|g| !open_loops.contains(g)).map(|g| {
                    PlanEntry::new(
                        g.clone(),
                        PlanEntryPriority::Medium,
                        PlanEntryStatus::Pending,
                    )
                }))
                .collect(),
        )),
        Event::Notice { message, .. } => {
            SessionUpdate::AgentMessageChunk(ContentChunk::new(text(&format!("\n[{message}]\n"))))
        }
        // A hook that blocked, failed or was killed is told where it happened.
        Event::Hook {
            event,
            command,
            outcome,
            message,
        } if *outcome != north_protocol::HookOutcome::Ran => {
            let line = north_protocol::hook_line(*event, command, *outcome, message.as_deref())?;
            SessionUpdate::AgentMessageChunk(ContentChunk::new(text(&format!("\n[{line}]\n"))))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_agents_tool_calls_are_tool_calls_under_its_agent_call() {
        let nested = Event::Agent {
            call_id: "a1".into(),
            agent: "reviewer".into(),
            event: Box::new(Event::ToolIntent {
                call_id: "r1".into(),
                tool: "read_file".into(),
                line: "Reading README.md".into(),
                kind: north_protocol::ToolKind::Read,
            }),
        };
        let Some(SessionUpdate::ToolCall(call)) = update_for(&nested) else {
            panic!("not a tool call")
        };
        assert_eq!(call.tool_call_id.to_string(), "a1/r1");
        assert_eq!(call.title, "[reviewer] Reading README.md");
        let words = Event::Agent {
            call_id: "a1".into(),
            agent: "reviewer".into(),
            event: Box::new(Event::AssistantText { text: "x".into() }),
        };
        assert!(update_for(&words).is_none());
    }

    #[test]
    fn the_plan_becomes_a_plan_update_with_open_loops_in_progress() {
        let update = update_for(&Event::Plan {
            goals: vec!["split the lexer".into(), "add tests".into()],
            open_loops: vec!["split the lexer".into()],
        });
        let Some(SessionUpdate::Plan(plan)) = update else {
            panic!("{update:?}");
        };
        let entries: Vec<(String, PlanEntryStatus)> = plan
            .entries
            .iter()
            .map(|e| (e.content.clone(), e.status.clone()))
            .collect();
        assert_eq!(
            entries,
            vec![
                ("split the lexer".to_string(), PlanEntryStatus::InProgress),
                ("add tests".to_string(), PlanEntryStatus::Pending),
            ]
        );
    }
}
