//! `/undo` and `/rewind`: the worker's side (the agent rewinds; this turns
//! its answer into what the timeline shows).

use north_agent::Agent;
use north_agent::undo::{RewindScope, UndoError};
use ratatui::text::{Line, Span};

use crate::approver::UiMsg;
use crate::style;

/// Width diffs of hand-edited files are rendered at.
const DIFF_WIDTH: u16 = 100;

/// What `/undo` or `/rewind` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewindRequest {
    /// The turn to go back to the start of (None: the last one not undone).
    pub turn: Option<u32>,
    /// Code, conversation or both.
    pub scope: RewindScope,
    /// Overwrite files changed by hand since.
    pub force: bool,
}

/// Parses `/rewind`'s arguments: `N [code|conversation|both] [force]`.
pub(crate) fn parse(args: &[&str]) -> Result<RewindRequest, String> {
    let mut req = RewindRequest {
        turn: None,
        scope: RewindScope::Both,
        force: false,
    };
    for a in args {
        match *a {
            "code" => req.scope = RewindScope::Code,
            "conversation" | "chat" => req.scope = RewindScope::Conversation,
            "both" => req.scope = RewindScope::Both,
            "force" => req.force = true,
            n => match n.parse::<u32>() {
                Ok(t) if t > 0 => req.turn = Some(t),
                _ => {
                    return Err(format!(
                        "/rewind: {n:?} is not a turn number, code, conversation, both or force"
                    ));
                }
            },
        }
    }
    Ok(req)
}

fn info(title: impl Into<String>, lines: Vec<Line<'static>>) -> UiMsg {
    UiMsg::Info {
        title: title.into(),
        lines,
    }
}

/// The session's turns, for the `/rewind` picker.
pub(crate) fn list(agent: &Agent) -> UiMsg {
    let turns = agent.turns();
    if turns.is_empty() {
        return info("No turns to rewind in this session yet", Vec::new());
    }
    UiMsg::Turns(
        turns
            .iter()
            .map(|t| {
                let note = match (&t.before, &t.after, t.undone) {
                    (_, _, true) => "code undone",
                    (Some(_), None, _) => "unfinished",
                    _ => "",
                };
                // The whole prompt: the picker shows its first line, the
                // composer gets it back entire.
                let prompt = t.input.clone().unwrap_or_else(|| t.prompt.clone());
                (t.turn, prompt, note.to_string())
            })
            .collect(),
    )
}

/// Carries out `req` on the agent.
pub(crate) fn run(agent: &mut Agent, req: RewindRequest) -> UiMsg {
    match agent.rewind(req.turn, req.scope, req.force) {
        Ok(report) => {
            let mut lines = Vec::new();
            if let Some(files) = &report.files {
                for p in &files.written {
                    lines.push(Line::raw(format!("restored {p}")));
                }
                for p in &files.removed {
                    lines.push(Line::raw(format!("removed  {p}")));
                }
                for (p, why) in &files.skipped {
                    lines.push(Line::from(Span::styled(
                        format!("kept     {p} ({why})"),
                        style::dim(),
                    )));
                }
            }
            if let Some(n) = report.messages_dropped {
                lines.push(Line::raw(format!(
                    "conversation rewound: {n} message(s) dropped; the model no longer sees them"
                )));
            }
            let title = match (&report.files, report.turns.as_slice()) {
                (Some(f), [one]) => format!(
                    "Undid turn {one}: {} restored, {} removed",
                    f.written.len(),
                    f.removed.len()
                ),
                (Some(f), turns) => format!(
                    "Undid turns {turns:?}: {} restored, {} removed",
                    f.written.len(),
                    f.removed.len()
                ),
                (None, _) => "Conversation rewound".to_string(),
            };
            info(title, lines)
        }
        Err(UndoError::Conflicts(conflicts)) => {
            let mut lines = Vec::new();
            for c in &conflicts {
                lines.extend(crate::diff::render(
                    &crate::diff::parse_unified(&c.diff),
                    DIFF_WIDTH,
                ));
            }
            lines.push(Line::from(Span::styled(
                "Nothing was restored. These files changed after North's turn (diff from North's version to yours). Type the same command with `force` to overwrite them.",
                style::dim(),
            )));
            info(
                format!("Undo refused: {} file(s) changed by hand", conflicts.len()),
                lines,
            )
        }
        Err(e) => UiMsg::Failed(e.to_string()),
    }
}
