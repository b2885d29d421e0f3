//! The conversation history and its durability: results appended in
//! order, interrupted calls closed on resume, the checkpoint after every step.

use north_protocol::{
    ChatMessage, Checkpoint, ContentBlock, ErrorKind, Event, Message, ModelRef, Role, ToolCall,
    ToolOutcome,
};

use super::{Agent, Emit};
use crate::config::ToolProtocol;
use crate::intent::summary;
use crate::store::{StoreError, now_ts};
use crate::textcalls;

fn chat_message(m: &Message) -> ChatMessage {
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
            // Reasoning is for the model that wrote it, not the plain transcript.
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::Reasoning { .. } => {}
        }
    }
    ChatMessage {
        role: m.role,
        content,
    }
}

impl Agent {
    /// A killed process can leave tool calls without results; they are
    /// answered as interrupted so the conversation stays well-formed and the
    /// model checks the real state instead of assuming.
    pub(super) fn close_interrupted_calls(&mut self) {
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

    pub(super) fn push_results(&mut self, blocks: Vec<ContentBlock>) {
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
            model: Some(ModelRef {
                provider: self.opts.provider.clone(),
                model: self.opts.model.clone(),
            }),
        };
        self.session.save_checkpoint(&cp, &self.redactor)
    }

    pub(super) fn save(&mut self, emit: &Emit<'_>) {
        if let Err(e) = self.checkpoint() {
            emit(Event::Error {
                kind: ErrorKind::Internal,
                message: format!("checkpoint not saved: {e}"),
            });
        }
    }

    pub(super) fn record_result(
        &mut self,
        call: &ToolCall,
        outcome: &ToolOutcome,
        emit: &Emit<'_>,
    ) {
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
}
