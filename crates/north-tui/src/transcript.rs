//! Transcript items: what the timeline shows, each rendered to final lines
//! once it is complete and then printed above the live area, into the
//! terminal's own scrollback.

use north_protocol::{ApprovalDecision, ApprovalKind};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::diff;
use crate::style;
use crate::wrap::{wrap_prefixed, wrap_text};
use north_protocol::FileDiff;

/// Rendered details longer than this many lines are cut in the expansion.
const DETAILS_MAX_LINES: usize = 200;

/// One entry of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// What the user sent.
    User(String),
    /// A finished piece of the assistant's answer (markdown).
    Assistant(String),
    /// A tool intent line, e.g. "Searching: `foo` in `src/`".
    Intent(String),
    /// A tool result in compact form.
    Result {
        /// Tool name.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
        /// One-line summary.
        summary: String,
        /// Whether a details expansion is available.
        has_details: bool,
    },
    /// The expanded details of a tool result.
    Details {
        /// Tool name.
        tool: String,
        /// Pretty text of the result.
        text: String,
    },
    /// A reviewed diff with its decision.
    Review {
        /// The files.
        files: Vec<FileDiff>,
        /// The decision, once taken.
        decision: Option<ApprovalDecision>,
    },
    /// An approval decision.
    Decision {
        /// What was decided on.
        kind: ApprovalKind,
        /// The command, paths or capability.
        subject: String,
        /// The decision.
        decision: ApprovalDecision,
    },
    /// Output of a slash command or a note from North itself.
    Notice {
        /// Title line.
        title: String,
        /// Body lines.
        body: Vec<Line<'static>>,
    },
    /// An error the user should see.
    Error(String),
    /// A turn was interrupted.
    Interrupted,
}

/// Text for a result's details: the output (or error) of a tool outcome,
/// pretty-printed, strings shown as they are.
pub fn details_text(details: &Value) -> String {
    let body = match details.get("output") {
        Some(Value::Null) | None => details.get("error").unwrap_or(details),
        Some(out) => out,
    };
    match body {
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            // Shell-like outputs read best as their streams.
            let mut text = String::new();
            for key in ["stdout", "output", "content", "text"] {
                if let Some(Value::String(s)) = map.get(key) {
                    text.push_str(s);
                }
            }
            if text.is_empty() {
                serde_json::to_string_pretty(body).unwrap_or_default()
            } else {
                text
            }
        }
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// Whether details deserve an expansion rather than being left out.
pub fn is_large(text: &str) -> bool {
    text.lines().count() > 1 || text.len() > 120
}

fn decision_words(kind: ApprovalKind, decision: ApprovalDecision) -> (&'static str, Style) {
    match (kind, decision) {
        (_, ApprovalDecision::Accept) => ("✓ Accepted edits to", style::ok()),
        (_, ApprovalDecision::Reject) => ("✗ Rejected edits to", style::error()),
        (_, ApprovalDecision::RunOnce) => ("✓ Run this time:", style::ok()),
        (ApprovalKind::Capability, ApprovalDecision::Always) => (
            "✓ Always allowed (saved to .north/allowlist.json):",
            style::ok(),
        ),
        (_, ApprovalDecision::Always) => (
            "✓ Always execute (saved to .north/allowlist.json):",
            style::ok(),
        ),
        (_, ApprovalDecision::AlwaysPrefix) => (
            "✓ Always allowed its prefix (saved to .north/allowlist.json):",
            style::ok(),
        ),
        (ApprovalKind::Capability, ApprovalDecision::Deny) => {
            ("✗ Denied capability", style::error())
        }
        (_, ApprovalDecision::Deny) => ("✗ Denied:", style::error()),
        (_, ApprovalDecision::Grant) => ("✓ Granted capability", style::ok()),
    }
}

impl Item {
    /// Whether a blank line separates this item from the one before.
    fn spaced(&self) -> bool {
        matches!(
            self,
            Item::User(_) | Item::Assistant(_) | Item::Notice { .. } | Item::Review { .. }
        )
    }

    /// The item's lines at `width`, with the spacing it needs after `prev`.
    pub fn lines_after(&self, prev: Option<&Item>, width: u16) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let assistant_continues =
            matches!((prev, self), (Some(Item::Assistant(_)), Item::Assistant(_)));
        if prev.is_some()
            && (self.spaced() || prev.is_some_and(Item::spaced) || assistant_continues)
        {
            out.push(Line::default());
        }
        out.extend(self.lines(width));
        out
    }

    /// The item's lines at `width`.
    pub fn lines(&self, width: u16) -> Vec<Line<'static>> {
        let w = usize::from(width).max(8);
        match self {
            Item::User(text) => {
                let mut out = Vec::new();
                for (i, line) in text.split('\n').enumerate() {
                    let first = if i == 0 {
                        vec![Span::styled("› ", style::user())]
                    } else {
                        vec![Span::raw("  ")]
                    };
                    out.extend(wrap_prefixed(
                        &[Span::styled(line.to_string(), style::user())],
                        w,
                        &first,
                        &[Span::raw("  ")],
                    ));
                }
                out
            }
            Item::Assistant(text) => crate::markdown::render(text, width),
            Item::Intent(line) => wrap_prefixed(
                &inline_code(line, style::intent()),
                w,
                &[Span::styled("• ", style::intent())],
                &[Span::raw("  ")],
            ),
            Item::Result {
                ok,
                summary,
                has_details,
                ..
            } => {
                let (mark, st) = if *ok {
                    ("  ↳ ", style::ok())
                } else {
                    ("  ✗ ", style::error())
                };
                let mut content = inline_code(summary, Style::new());
                if *has_details {
                    content.push(Span::styled("  (details: ctrl+o)", style::dim()));
                }
                wrap_prefixed(&content, w, &[Span::styled(mark, st)], &[Span::raw("    ")])
            }
            Item::Details { tool, text } => {
                let mut out = vec![Line::from(vec![
                    Span::styled("  ┌ details of ", style::dim()),
                    Span::styled(tool.clone(), style::key()),
                ])];
                let lines: Vec<&str> = text.lines().collect();
                for l in lines.iter().take(DETAILS_MAX_LINES) {
                    out.extend(wrap_prefixed(
                        &[Span::raw(l.replace('\t', "    "))],
                        w,
                        &[Span::styled("  │ ", style::dim())],
                        &[Span::styled("  │ ", style::dim())],
                    ));
                }
                if lines.len() > DETAILS_MAX_LINES {
                    out.push(Line::from(Span::styled(
                        format!("  └ … {} more lines", lines.len() - DETAILS_MAX_LINES),
                        style::dim(),
                    )));
                } else {
                    out.push(Line::from(Span::styled("  └", style::dim())));
                }
                out
            }
            Item::Review { files, decision } => {
                let added: usize = files.iter().map(|f| f.added).sum();
                let removed: usize = files.iter().map(|f| f.removed).sum();
                let mut head = vec![Span::styled(
                    format!(
                        "Proposed edits · {} file{} ",
                        files.len(),
                        if files.len() == 1 { "" } else { "s" }
                    ),
                    style::key(),
                )];
                head.extend(diff::counts(added, removed));
                match decision {
                    Some(ApprovalDecision::Accept) => {
                        head.push(Span::styled("  accepted", style::ok()))
                    }
                    Some(ApprovalDecision::Reject) => {
                        head.push(Span::styled("  rejected", style::error()))
                    }
                    _ => {}
                }
                let mut out = vec![Line::from(head)];
                out.extend(diff::render(files, width));
                out
            }
            Item::Decision {
                kind,
                subject,
                decision,
            } => {
                let (words, st) = decision_words(*kind, *decision);
                let mut content = vec![Span::styled(format!("{words} "), st)];
                content.push(Span::styled(subject.clone(), style::code()));
                wrap_prefixed(&content, w, &[Span::raw("  ")], &[Span::raw("    ")])
            }
            Item::Notice { title, body } => {
                let mut out = wrap_text(title, w, style::key());
                for line in body {
                    let spans: Vec<Span<'static>> = line.spans.clone();
                    out.extend(wrap_prefixed(
                        &spans,
                        w,
                        &[Span::raw("  ")],
                        &[Span::raw("    ")],
                    ));
                }
                out
            }
            Item::Error(message) => wrap_prefixed(
                &[Span::styled(message.clone(), style::error())],
                w,
                &[Span::styled("✗ error: ", style::error())],
                &[Span::raw("         ")],
            ),
            Item::Interrupted => vec![Line::from(Span::styled(
                "■ Interrupted — tell North what to do instead, or send a new request.",
                style::notice(),
            ))],
        }
    }
}

/// Splits text on backticks: `code` parts styled as code, the rest `base`.
pub fn inline_code(text: &str, base: Style) -> Vec<Span<'static>> {
    text.split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(i, part)| {
            if i % 2 == 1 {
                Span::styled(part.to_string(), style::code())
            } else {
                Span::styled(part.to_string(), base)
            }
        })
        .collect()
}
