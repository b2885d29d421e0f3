//! A session as ACP tells it: its modes, its history replayed as updates
//! (to a client that loads or attaches), a prompt's text.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionMode, SessionModeState, SessionUpdate, TextContent,
    ToolCall, ToolCallStatus,
};
use north_protocol::{ContentBlock as NorthBlock, PermissionMode, Role};

use crate::updates::acp_kind;

pub(crate) fn text_block(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t.to_string()))
}

pub(crate) fn mode_state(current: PermissionMode) -> SessionModeState {
    let modes = PermissionMode::ALL
        .iter()
        .map(|m| {
            let name = match m {
                PermissionMode::Ask => "Ask",
                PermissionMode::AcceptEdits => "Accept edits",
                PermissionMode::Plan => "Plan (read-only)",
                PermissionMode::Auto => "Auto (commands sandboxed)",
            };
            SessionMode::new(m.as_str().to_string(), name.to_string())
        })
        .collect();
    SessionModeState::new(current.as_str().to_string(), modes)
}

/// A saved conversation as updates, as `session/load` replays it; each
/// call described by its own tool.
pub(crate) fn replay(
    messages: &[north_protocol::Message],
    tools: &north_tools::Registry,
) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    let mut send = |u: SessionUpdate| updates.push(u);
    for m in messages {
        for block in &m.content {
            match (m.role, block) {
                (Role::User, NorthBlock::Text { text }) => {
                    send(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (Role::Assistant, NorthBlock::Text { text }) => {
                    send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (_, NorthBlock::ToolCall(call)) => {
                    let (kind, line) = tools.describe(&call.name, &call.arguments);
                    send(SessionUpdate::ToolCall(
                        ToolCall::new(call.id.clone(), line)
                            .kind(acp_kind(kind))
                            .status(ToolCallStatus::Completed),
                    ));
                }
                _ => {}
            }
        }
    }
    updates
}

/// The prompt's text: text blocks as they are, links and resources by URI.
pub(crate) fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut out = Vec::new();
    for b in blocks {
        match b {
            ContentBlock::Text(t) => out.push(t.text.clone()),
            ContentBlock::ResourceLink(l) => out.push(format!("@{}", l.uri)),
            _ => {}
        }
    }
    out.join("\n")
}
