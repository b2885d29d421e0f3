//! Protocol blocks in the model's text: NOTES patches and their actions,
//! and text-protocol tool calls.

use north_protocol::{ContentBlock, Event, NoticeKind, ToolCall, TraceKind};
use serde_json::json;

use super::{Agent, Emit};
use north_config::ToolProtocol;
use north_protocol::blocks::BlockKind;
use north_protocol::notes::{Action, NotesPatch};
use north_protocol::textcalls;

/// The text-protocol calls of a response.
#[derive(Debug, Default)]
pub(super) struct TextCalls {
    /// Calls from well-formed blocks.
    pub calls: Vec<ToolCall>,
    /// Blocks rejected (the model was told why; nothing in them ran).
    pub rejected: usize,
}

impl Agent {
    /// Applies NOTES blocks and their actions; returns text-protocol calls.
    pub(super) async fn apply_blocks(
        &mut self,
        blocks: &[north_protocol::blocks::Block],
        emit: &Emit<'_>,
    ) -> TextCalls {
        let mut calls = Vec::new();
        let mut rejected = 0;
        let mut actions = Vec::new();
        for block in blocks {
            match block.kind {
                BlockKind::Notes => actions.extend(self.apply_notes(block, emit)),
                BlockKind::ToolCalls => {
                    let parsed = if block.terminated {
                        textcalls::parse(&block.body).map_err(|e| e.to_string())
                    } else {
                        Err(textcalls::TextCallsError::Unterminated.to_string())
                    };
                    match parsed {
                        Ok(c) => calls.extend(c),
                        Err(e) => {
                            self.services
                                .tracer
                                .record(TraceKind::ToolPlan, json!({"ok": false, "error": e}));
                            // Tell the model so it can fix the block, and the user.
                            self.push_results(vec![ContentBlock::text(format!(
                                "TOOL_CALLS_JSON rejected, nothing ran: {e}. Send the block again: {}, then {}.",
                                "<<<TOOL_CALLS_JSON>>> and a JSON array of {\"id\", \"tool\", \"args\"} objects",
                                north_protocol::blocks::TOOL_CALLS.1
                            ))]);
                            if self.opts.tool_protocol == ToolProtocol::Text {
                                rejected += 1;
                                emit(Event::Notice {
                                    kind: NoticeKind::MalformedToolCall,
                                    message: format!(
                                        "the model's tool-call block was rejected ({e}); it was told, nothing ran"
                                    ),
                                });
                            }
                        }
                    }
                }
            }
        }
        if !actions.is_empty() {
            self.run_actions(actions, emit).await;
        }
        TextCalls { calls, rejected }
    }

    /// A NOTES block applied to the session state (a change of plan shown);
    /// a malformed one answered with why. Returns the actions it asked for.
    fn apply_notes(
        &mut self,
        block: &north_protocol::blocks::Block,
        emit: &Emit<'_>,
    ) -> Vec<Action> {
        let parsed = if block.terminated {
            NotesPatch::parse(&block.body).map_err(|e| e.to_string())
        } else {
            Err(north_protocol::notes::NotesError::Unterminated.to_string())
        };
        match parsed {
            Ok(patch) => {
                let before = (
                    self.conv.state.goals.clone(),
                    self.conv.state.open_loops.clone(),
                );
                patch.apply(&mut self.conv.state);
                if before
                    != (
                        self.conv.state.goals.clone(),
                        self.conv.state.open_loops.clone(),
                    )
                {
                    emit(Event::Plan {
                        goals: self.conv.state.goals.clone(),
                        open_loops: self.conv.state.open_loops.clone(),
                    });
                }
                self.services.tracer.record(
                    TraceKind::NotesPatch,
                    json!({"ok": true, "unknown_keys": patch.unknown_keys, "state": self.conv.state}),
                );
                patch.actions
            }
            Err(e) => {
                self.services
                    .tracer
                    .record(TraceKind::NotesPatch, json!({"ok": false, "error": e}));
                // The model believes its notes were saved; the
                // next request tells it they were not, and why.
                self.push_results(vec![ContentBlock::text(format!(
                    "NOTES_JSON rejected, your notes were not changed: {e}. Send the patch again as one JSON object between {} and {}.",
                    north_protocol::blocks::NOTES.0,
                    north_protocol::blocks::NOTES.1
                ))]);
                emit(Event::Notice {
                    kind: NoticeKind::MalformedNotes,
                    message: format!(
                        "the model's NOTES block was rejected ({e}); its notes are unchanged and it was told"
                    ),
                });
                Vec::new()
            }
        }
    }

    async fn run_actions(&mut self, actions: Vec<Action>, emit: &Emit<'_>) {
        let mut log = Vec::new();
        for action in actions {
            let result = match &action {
                Action::CondenseNow => {
                    self.conv.condense_requested = Some(true);
                    "scheduled"
                }
                Action::CondenseSmart => {
                    self.conv.condense_requested.get_or_insert(false);
                    "scheduled"
                }
                // A model may ask; only the user grants. A self-grant is a request.
                Action::RequestPermission(cap) | Action::GrantPermission(cap) => {
                    let mut env = self.call_env(emit);
                    if env.capability("notes", cap, "requested in NOTES").await {
                        "granted by user"
                    } else {
                        "denied by user"
                    }
                }
                Action::EmptyCapability(_) => "ignored (empty capability)",
                Action::Unknown(_) => "ignored (unknown action)",
            };
            log.push(json!({"action": action.as_protocol(), "result": result}));
        }
        self.services
            .tracer
            .record(TraceKind::Actions, json!({"actions": log}));
    }
}
