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
        /// A failed command's last lines of output, stderr marked `true`.
        tail: Vec<(bool, String)>,
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
        /// The words the user refused with, if any.
        reason: Option<String>,
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
pub(crate) fn details_text(details: &Value) -> String {
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
            // A command's stderr is part of what it printed.
            if let Some(Value::String(err)) = map.get("stderr")
                && !err.trim().is_empty()
            {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(err);
            }
            if text.is_empty() {
                readable(body, 0)
            } else {
                text
            }
        }
        other => readable(other, 0),
    }
}

/// A JSON value as lines a person reads: `key: value`, one array element
/// per line, nesting by indentation — not JSON syntax.
fn readable(value: &Value, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some("—".into()),
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    };
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match scalar(v) {
                Some(s) => format!("{pad}{k}: {s}"),
                None => format!("{pad}{k}:\n{}", readable(v, depth + 1)),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Array(items) => items
            .iter()
            .map(|v| match (scalar(v), v) {
                (Some(s), _) => format!("{pad}{s}"),
                // An element of plain fields reads best on one line.
                (None, Value::Object(map)) if map.values().all(|f| scalar(f).is_some()) => format!(
                    "{pad}{}",
                    map.iter()
                        .filter_map(|(k, f)| scalar(f).map(|s| format!("{k}: {s}")))
                        .collect::<Vec<_>>()
                        .join(" · ")
                ),
                _ => readable(v, depth + 1),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => format!("{pad}{}", scalar(other).unwrap_or_default()),
    }
}

impl Item {
    /// A tool result as the timeline shows it: a command that failed is
    /// not ok and carries its last lines of output; `show_output` (a
    /// command the user ran) carries them whether it failed or not.
    pub fn result(
        tool: String,
        ok: bool,
        summary: String,
        outcome: Option<&Value>,
        has_details: bool,
        show_output: bool,
    ) -> Item {
        let failure = command_failure(outcome);
        let failed = failure.is_some();
        let tail = match failure {
            Some(tail) => tail,
            None if show_output => command_output(outcome),
            // A command that passed shows its last few lines, as a terminal
            // would (the whole is in the transcript view).
            None => {
                let mut tail = command_output(outcome);
                tail.drain(..tail.len().saturating_sub(PASSED_TAIL_LINES));
                tail
            }
        };
        Item::Result {
            tool,
            ok: ok && !failed,
            summary,
            has_details,
            tail,
        }
    }
}

/// Lines of a failed command's output shown under its result.
const TAIL_LINES: usize = 8;

/// Lines of a passing command's output shown under its result.
const PASSED_TAIL_LINES: usize = 4;

/// Whether a tool outcome (`{ok, output, error}`) is a command that failed
/// — a non-zero exit code or a timeout — and if so the last lines of its
/// output, stdout's then stderr's (stderr marked `true`), at most
/// [`TAIL_LINES`], stderr's kept first when there are more.
fn command_failure(outcome: Option<&Value>) -> Option<Vec<(bool, String)>> {
    let out = outcome?.get("output")?;
    let result = north_protocol::ShellResult::read(out)?;
    let failed = result.exit_code.is_some_and(|c| c != 0) || result.timed_out;
    failed.then(|| tail_of(out))
}

/// The last lines of a command's output, as [`command_failure`] shows them,
/// whether it failed or not (for a command the user ran).
fn command_output(outcome: Option<&Value>) -> Vec<(bool, String)> {
    outcome
        .and_then(|o| o.get("output"))
        .filter(|out| north_protocol::ShellResult::read(out).is_some())
        .map(tail_of)
        .unwrap_or_default()
}

fn tail_of(out: &Value) -> Vec<(bool, String)> {
    let lines = |key: &str| -> Vec<String> {
        out.get(key)
            .and_then(Value::as_str)
            .map(|t| {
                t.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (stdout, stderr) = (lines("stdout"), lines("stderr"));
    let err_n = stderr.len().min(TAIL_LINES);
    let out_n = stdout.len().min(TAIL_LINES - err_n);
    let mut tail: Vec<(bool, String)> = stdout[stdout.len() - out_n..]
        .iter()
        .map(|l| (false, l.clone()))
        .collect();
    tail.extend(
        stderr[stderr.len() - err_n..]
            .iter()
            .map(|l| (true, l.clone())),
    );
    tail
}

/// Whether details deserve an expansion rather than being left out.
pub(crate) fn is_large(text: &str) -> bool {
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
    pub(crate) fn lines_after(&self, prev: Option<&Item>, width: u16) -> Vec<Line<'static>> {
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
            Item::User(text) => user_lines(text, w),
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
                tail,
                ..
            } => result_lines(*ok, summary, *has_details, tail, w),
            Item::Review { files, decision } => review_lines(files, *decision, width),
            Item::Decision {
                kind,
                subject,
                decision,
                reason,
            } => {
                let (words, st) = decision_words(*kind, *decision);
                let mut content = vec![Span::styled(format!("{words} "), st)];
                content.push(Span::styled(subject.clone(), style::code()));
                let mut out = wrap_prefixed(&content, w, &[Span::raw("  ")], &[Span::raw("    ")]);
                if let Some(reason) = reason {
                    out.extend(wrap_prefixed(
                        &[Span::styled(reason.clone(), style::user())],
                        w,
                        &[Span::styled("    why: ", style::dim())],
                        &[Span::raw("         ")],
                    ));
                }
                out
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

/// The user's message, each line under the `›` mark.
fn user_lines(text: &str, w: usize) -> Vec<Line<'static>> {
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

/// A tool's result: its mark and summary, and the last lines of a
/// command's output under a gutter (stderr's dashed).
fn result_lines(
    ok: bool,
    summary: &str,
    has_details: bool,
    tail: &[(bool, String)],
    w: usize,
) -> Vec<Line<'static>> {
    let (mark, st) = if ok {
        ("  ↳ ", style::ok())
    } else {
        ("  ✗ ", style::error())
    };
    let mut content = inline_code(summary, if ok { Style::new() } else { style::error() });
    if has_details {
        content.push(Span::styled("  (details: ctrl+o)", style::dim()));
    }
    let mut out = wrap_prefixed(&content, w, &[Span::styled(mark, st)], &[Span::raw("    ")]);
    for (stderr, line) in tail {
        let (gutter, text_style) = if *stderr {
            ("    ┆ ", style::error())
        } else {
            ("    │ ", style::dim())
        };
        out.extend(wrap_prefixed(
            &[Span::styled(line.replace('\t', "    "), text_style)],
            w,
            &[Span::styled(gutter, text_style)],
            &[Span::styled(gutter, text_style)],
        ));
    }
    out
}

/// Proposed edits: the files and counts, the decision, and the diff.
fn review_lines(
    files: &[FileDiff],
    decision: Option<ApprovalDecision>,
    width: u16,
) -> Vec<Line<'static>> {
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
        Some(ApprovalDecision::Accept) => head.push(Span::styled("  accepted", style::ok())),
        Some(ApprovalDecision::Reject) => head.push(Span::styled("  rejected", style::error())),
        _ => {}
    }
    let mut out = vec![Line::from(head)];
    out.extend(diff::render(files, width));
    out
}

/// Splits text on backticks: `code` parts styled as code, the rest `base`.
pub(crate) fn inline_code(text: &str, base: Style) -> Vec<Span<'static>> {
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
