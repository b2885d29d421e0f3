//! The conversation history and its durability: results appended in
//! order, interrupted calls closed on resume, the session log synced after
//! every step and result, and the compact snapshot at the end of a turn.

use north_protocol::{
    Checkpoint, ContentBlock, ErrorKind, Event, Message, ModelRef, Role, ToolCall, ToolOutcome,
};

use super::{Agent, Emit};
use crate::store::{StoreError, now_ts};
use north_config::ToolProtocol;
use north_protocol::textcalls;

impl Agent {
    /// A killed process can leave tool calls without results; they are
    /// answered as interrupted so the conversation stays well-formed and the
    /// model checks the real state instead of assuming.
    pub(super) fn close_interrupted_calls(&mut self) {
        let Some(last) = self
            .conv
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
        else {
            return;
        };
        let calls: Vec<ToolCall> = self.conv.messages[last].tool_calls().cloned().collect();
        let answered: Vec<String> = self.conv.messages[last + 1..]
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

    /// Adds the user's text: to the last message when that is the user's
    /// own text (a `!command` note before the next request), so roles keep
    /// alternating as every provider requires.
    pub(super) fn push_user_text(&mut self, text: &str) {
        // Whatever reaches the model is scrubbed like the display: an
        // attached file, an MCP resource or a command's output may hold a key.
        let text = self.services.redactor.scrub(text).into_owned();
        let text = text.as_str();
        match self.conv.messages.last_mut() {
            Some(m)
                if m.role == Role::User
                    && m.content
                        .iter()
                        .all(|b| matches!(b, ContentBlock::Text { .. })) =>
            {
                m.content.push(ContentBlock::text(text));
                self.touched(self.conv.messages.len() - 1);
            }
            _ => self.conv.messages.push(Message::user(text)),
        }
    }

    pub(super) fn push_results(&mut self, blocks: Vec<ContentBlock>) {
        match self.conv.messages.last_mut() {
            Some(m) if m.role == Role::Tool => {
                m.content.extend(blocks);
                // The last message changed in place.
                self.touched(self.conv.messages.len() - 1);
            }
            _ => self.conv.messages.push(Message {
                role: Role::Tool,
                content: blocks,
            }),
        }
    }

    /// Notes that messages from `index` on changed in place, so the next
    /// sync writes them again.
    pub(super) fn touched(&mut self, index: usize) {
        self.conv.clean = self.conv.clean.min(index);
    }

    fn model_ref(&self) -> ModelRef {
        ModelRef {
            provider: self.opts.provider.clone(),
            model: self.opts.model.clone(),
        }
    }

    /// Makes the session durable: appends what changed to the session log
    /// and syncs it to disk (secrets scrubbed). Called before every model
    /// request and after every tool result.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        self.conv.revision += 1;
        let model = self.model_ref();
        self.conv.log.note_usage(self.conv.total);
        self.conv.log.sync(
            self.conv.revision,
            &self.conv.messages,
            self.conv.clean,
            &self.conv.state,
            &model,
        )?;
        self.conv.clean = self.conv.messages.len();
        Ok(())
    }

    /// Writes the compact snapshot (`checkpoint.json`) when the log has grown
    /// by at least the snapshot's own size since the last one: snapshots
    /// then never cost more than the log itself, however many turns.
    pub(super) fn snapshot(&mut self, emit: &Emit<'_>) {
        let grown = self.conv.log.bytes_written() - self.conv.snapshot_at;
        if self.conv.snapshot_at > 0 && grown < self.conv.snapshot_bytes {
            return;
        }
        let cp = Checkpoint {
            session_id: self.conv.session.id.clone(),
            revision: self.conv.revision,
            updated_ts: now_ts(),
            state: self.conv.state.clone(),
            recent_messages: Vec::new(),
            trace_tail: vec![
                self.services
                    .tracer
                    .path()
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("trace.jsonl")
                    .to_string(),
            ],
            messages: self.conv.messages.clone(),
            model: Some(self.model_ref()),
            usage: Some(self.conv.total),
        };
        match self
            .conv
            .session
            .save_checkpoint(&cp, &self.services.redactor)
        {
            Ok(()) => {
                self.conv.snapshot_at = self.conv.log.bytes_written().max(1);
                self.conv.snapshot_bytes =
                    std::fs::metadata(self.conv.session.checkpoint_path()).map_or(0, |m| m.len());
            }
            Err(e) => emit(Event::Error {
                kind: ErrorKind::Internal,
                message: format!("session snapshot not saved: {e}"),
            }),
        }
    }

    pub(super) fn save(&mut self, emit: &Emit<'_>) {
        if let Err(e) = self.checkpoint() {
            emit(Event::Error {
                kind: ErrorKind::Internal,
                message: format!("session not saved: {e}"),
            });
        }
    }

    pub(super) fn record_result(
        &mut self,
        call: &ToolCall,
        outcome: &ToolOutcome,
        emit: &Emit<'_>,
    ) {
        // A subdirectory's instruction files come with the first result
        // that touched a file there.
        let outcome = &self.with_nested_instructions(call, outcome);
        // The model never receives North's keys: a file it reads or a
        // command's output may hold one.
        let outcome = &self.services.redactor.scrub_outcome(outcome);
        // A picture a tool read follows its result as an image block.
        let (outcome, image) = super::images::split_image(outcome);
        let outcome = &outcome;
        emit(Event::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            ok: outcome.ok,
            summary: self.summarize(&call.name, outcome),
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
        self.push_results(block_and(block, image));
    }
}

impl Agent {
    /// `outcome` with the instruction files of the directories `call`
    /// touched for the first time (`AGENTS.md`, `CLAUDE.md`, `GEMINI.md`
    /// there), under `instructions`.
    fn with_nested_instructions(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> ToolOutcome {
        let path = ["path", "file_path", "dir"]
            .iter()
            .find_map(|k| call.arguments.get(*k).and_then(serde_json::Value::as_str));
        let (Some(path), true) = (path, outcome.ok) else {
            return outcome.clone();
        };
        let root = self.services.ctx.root.clone();
        let found =
            crate::instructions::nested(&root, std::path::Path::new(path), &mut self.nested_seen);
        if found.is_empty() {
            return outcome.clone();
        }
        let mut out = outcome.clone();
        if let Some(map) = out.output.as_object_mut() {
            map.insert(
                "instructions".into(),
                serde_json::json!(format!(
                    "Instructions for this part of the project (follow them here):\n\n{}",
                    crate::instructions::render_nested(&found)
                )),
            );
        }
        out
    }
}

/// A result block, and the image it brought if any.
fn block_and(block: ContentBlock, image: Option<ContentBlock>) -> Vec<ContentBlock> {
    let mut blocks = vec![block];
    blocks.extend(image);
    blocks
}
