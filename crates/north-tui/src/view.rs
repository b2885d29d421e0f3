//! The live area under the transcript: the answer being streamed, a prompt
//! or picker, the composer and the status line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::app::{App, Pending};
use crate::approver::PromptKind;
use crate::diff;
use crate::style;
use crate::wrap::{spans_width, wrap_prefixed};

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Heights of the live area's parts.
struct Layout {
    stream: Vec<Line<'static>>,
    stream_h: u16,
    panel: Vec<Line<'static>>,
    composer_h: u16,
}

fn options_lines(p: &Pending, width: usize) -> Vec<Line<'static>> {
    let mut spans = Vec::new();
    let options = p.options();
    // While the reason is typed, the option being answered is the one marked.
    let selected = p
        .awaiting_feedback
        .and_then(|_| {
            options
                .iter()
                .position(|(_, _, c)| matches!(c, crate::prompt::Choice::Feedback(_)))
        })
        .unwrap_or(p.selected);
    for (i, (label, key, _)) in options.iter().enumerate() {
        if i == selected {
            spans.push(Span::styled("▶ ", style::ok()));
            spans.push(Span::styled(format!("{key} {label}"), style::selected()));
        } else {
            spans.push(Span::raw("  "));
            spans.push(Span::styled(format!("{key} {label}"), style::key()));
        }
        spans.push(Span::raw("  "));
    }
    wrap_prefixed(&spans, width, &[Span::raw(" ")], &[Span::raw(" ")])
}

fn hint_lines(text: &str, width: usize) -> Vec<Line<'static>> {
    wrap_prefixed(
        &[Span::styled(text.to_string(), style::dim())],
        width,
        &[Span::raw("  ")],
        &[Span::raw("  ")],
    )
}

/// A command prompt's body: why it asks (dimmed), then `$ command`.
fn command_lines(command: &str, why: Option<&str>, w: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if let Some(why) = why {
        out.extend(wrap_prefixed(
            &[Span::styled(why.to_string(), style::dim())],
            w,
            &[Span::raw("  ")],
            &[Span::raw("  ")],
        ));
    }
    out.extend(wrap_prefixed(
        &[Span::styled(command.to_string(), style::code())],
        w,
        &[Span::styled("  $ ", style::dim())],
        &[Span::raw("    ")],
    ));
    out
}

/// The proxy's question about a host no grant covers.
fn host_prompt_lines(p: &Pending, host: &str, port: u16, w: usize, out: &mut Vec<Line<'static>>) {
    out.push(Line::from(Span::styled(
        "A command connects to a host no grant covers — allow it?",
        style::notice(),
    )));
    out.extend(wrap_prefixed(
        &[
            Span::styled(format!("{host}:{port}"), style::code()),
            Span::styled("  (through North's network proxy)", style::dim()),
        ],
        w,
        &[Span::raw("  ")],
        &[Span::raw("  ")],
    ));
    out.extend(options_lines(p, w));
    out.extend(hint_lines(
            "←/→ choose · enter confirm · y this session · o once · a always here (kept in your state) · n/esc deny",
            w,
        ));
}

fn prompt_lines(p: &Pending, width: u16, max_h: u16) -> Vec<Line<'static>> {
    let w = usize::from(width).max(8);
    let mut out = vec![Line::default()];
    match &p.kind {
        PromptKind::Shell { command, why, .. } => {
            out.push(Line::from(Span::styled(
                "Command requested — run it?",
                style::notice(),
            )));
            let why = why.as_ref().map(|why| format!("Asking because {why}"));
            out.extend(command_lines(command, why.as_deref(), w));
            out.extend(options_lines(p, w));
            out.extend(hint_lines(
                "←/→ choose · enter confirm · 1 run once · 2 always (saved to .north/allowlist.json) · 3/esc deny and stop",
                w,
            ));
        }
        PromptKind::PlanReady => {
            out.push(Line::from(Span::styled(
                "Plan ready — carry it out?",
                style::notice(),
            )));
            out.extend(options_lines(p, w));
            out.extend(hint_lines(
                "←/→ choose · enter confirm · 1 go, asking as usual · 2 go, accepting edits · 3/esc keep planning",
                w,
            ));
        }
        PromptKind::Unsandboxed { command, evidence } => {
            out.push(Line::from(Span::styled(
                "The sandbox stopped this command — run it once outside the sandbox?",
                style::notice(),
            )));
            let why = format!("It failed inside the sandbox: {evidence}");
            out.extend(command_lines(command, Some(&why), w));
            out.extend(options_lines(p, w));
            out.extend(hint_lines(
                "←/→ choose · enter confirm · 1 run once without the sandbox (not remembered) · 2/esc keep it sandboxed",
                w,
            ));
        }
        PromptKind::Capability { capability, reason } => {
            let tool = capability.starts_with("tool:");
            out.push(Line::from(Span::styled(
                if tool {
                    "MCP tool call — allow it?"
                } else {
                    "Capability requested — grant it for this session?"
                },
                style::notice(),
            )));
            out.extend(wrap_prefixed(
                &[
                    Span::styled(capability.clone(), style::code()),
                    Span::styled(format!("  ({reason})"), style::dim()),
                ],
                w,
                &[Span::raw("  ")],
                &[Span::raw("  ")],
            ));
            out.extend(options_lines(p, w));
            out.extend(hint_lines(
                if tool {
                    "←/→ choose · enter confirm · y this session · a always (saved to .north/allowlist.json) · n/esc deny"
                } else {
                    "←/→ choose · enter confirm · y grant · n/esc deny"
                },
                w,
            ));
        }
        PromptKind::Host { host, port } => host_prompt_lines(p, host, *port, w, &mut out),
        PromptKind::Edit { files } => edit_prompt_lines(p, files, width, max_h, &mut out),
    }
    out
}

/// The edit review: the files and counts, the diff scrolled to fit
/// `max_h`, the options and where in the diff the view is.
fn edit_prompt_lines(
    p: &Pending,
    files: &[north_protocol::FileDiff],
    width: u16,
    max_h: u16,
    out: &mut Vec<Line<'static>>,
) {
    let w = usize::from(width).max(8);
    let added: usize = files.iter().map(|f| f.added).sum();
    let removed: usize = files.iter().map(|f| f.removed).sum();
    let mut head = vec![Span::styled(
        format!(
            "Review edits · {} file{} ",
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        ),
        style::notice(),
    )];
    head.extend(diff::counts(added, removed));
    head.push(Span::styled(
        " · nothing is written before you accept",
        style::dim(),
    ));
    out.extend(wrap_prefixed(&head, w, &[], &[]));
    let options = options_lines(p, w);
    let (body, headers) = diff::render_review(files, width, p.hunk, &p.refused);
    // Header, options and help surround the scrolled diff.
    let chrome = out.len() + options.len() + 2;
    let room = usize::from(max_h).saturating_sub(chrome).max(3);
    let max_scroll = body.len().saturating_sub(room);
    let wanted = match p.hunk.and_then(|h| headers.get(h)) {
        Some(row) if p.follow_hunk => row.saturating_sub(1),
        _ => p.scroll,
    };
    let scroll = wanted.min(max_scroll);
    p.shown_scroll.set(scroll);
    let shown: Vec<Line<'static>> = body.iter().skip(scroll).take(room).cloned().collect();
    let more_below = body.len() > scroll + shown.len();
    out.extend(shown);
    out.extend(options);
    let position = if body.len() > room {
        format!(
            "lines {}–{} of {}{} · ↑/↓ pgup/pgdn scroll · ",
            scroll + 1,
            scroll + room.min(body.len()),
            body.len(),
            if more_below { " ▼" } else { "" }
        )
    } else {
        String::new()
    };
    let per_hunk = if headers.len() > 1 {
        "]/[ hunk · x refuse hunk · "
    } else {
        ""
    };
    out.extend(hint_lines(
        &format!("{position}{per_hunk}y accept · n/esc reject and stop"),
        w,
    ));
}

impl App {
    fn picker_lines(&self) -> Vec<Line<'static>> {
        let Some(picker) = &self.picker else {
            return Vec::new();
        };
        let rewind = picker.kind == crate::app::PickerKind::Rewind;
        let mut out = vec![Line::from(Span::styled(
            if rewind {
                "Rewind to the start of which turn? (its files and the conversation after it go back)"
            } else {
                "Resume which session?"
            },
            style::notice(),
        ))];
        for (i, (id, label)) in picker.sessions.iter().enumerate() {
            let (mark, st) = if i == picker.selected {
                ("▶ ", style::selected())
            } else {
                ("  ", ratatui::style::Style::new())
            };
            out.push(Line::from(vec![
                Span::styled(mark, style::ok()),
                Span::styled(format!("{id}  {}", first_line(label)), st),
                Span::styled(
                    picker
                        .notes
                        .get(i)
                        .filter(|n| !n.is_empty())
                        .map(|n| format!("  ({n})"))
                        .unwrap_or_default(),
                    style::dim(),
                ),
            ]));
        }
        out.push(Line::from(Span::styled(
            if rewind {
                "  ↑/↓ choose · enter rewind (the turn's prompt comes back to the composer) · esc cancel"
            } else {
                "  ↑/↓ choose · enter resume · esc cancel"
            },
            style::dim(),
        )));
        out
    }

    fn layout(&self, width: u16, screen_h: u16) -> Layout {
        let composer_h = self.composer.rows(width.saturating_sub(2)) + 1;
        let fixed = composer_h + 1;
        let room = screen_h.saturating_sub(fixed);
        let panel = match &self.pending {
            _ if !self.forms.is_empty() => self
                .forms
                .front()
                .map(|f| f.lines(width))
                .unwrap_or_default(),
            Some(p) => prompt_lines(p, width, room.saturating_sub(1)),
            None if self.picker.is_some() => self.picker_lines(),
            None if self.popup.is_some() => self.popup_lines(),
            None => self.checklist.lines(width),
        };
        let panel_h = (panel.len() as u16).min(room);
        let mut stream = Vec::new();
        if !self.stream.is_blank() {
            if self.committed > 0 && !self.fresh_screen && !self.stream.started() {
                stream.push(Line::default());
            }
            stream.extend(self.stream.live(width));
        }
        // A running command's newest output, under whatever streamed before.
        if !self.live_output.is_empty() {
            stream.extend(self.live_output.render(usize::from(width)));
        }
        let stream_h = (stream.len() as u16).min(room.saturating_sub(panel_h));
        Layout {
            stream,
            stream_h,
            panel,
            composer_h,
        }
    }

    /// Rows the live area needs at this width (at most `screen_h`).
    pub(crate) fn live_height(&self, width: u16, screen_h: u16) -> u16 {
        self.screen_h.set(screen_h);
        let l = self.layout(width, screen_h);
        let panel_h = l.panel.len() as u16;
        (l.stream_h + panel_h + l.composer_h + 1)
            .min(screen_h)
            .max(1)
    }

    /// The retry hint with its countdown: `retrying 1/3 in 4 s · 529`,
    /// counting down as the clock runs, `now` once it is due.
    fn retry_line(&self, hint: &str) -> String {
        let Some(rest) = hint.strip_prefix("retrying ") else {
            return hint.to_string();
        };
        let (count, reason) = rest.split_once(" · ").unwrap_or((rest, ""));
        let when = match self.retry_due.map(|due| due.saturating_sub(self.elapsed)) {
            Some(left) if !left.is_zero() => format!("in {} s", left.as_secs_f64().ceil()),
            _ => "now".to_string(),
        };
        format!("retrying {count} {when} · {reason}")
    }

    /// The status line's left side: a hint, the working state (with a
    /// retry and type-ahead beside it), or the keys that send.
    fn status_left(&self) -> Vec<Span<'static>> {
        // A retry is part of the working state: it shows beside it.
        let retry = self
            .hint
            .as_ref()
            .filter(|h| self.is_busy() && h.starts_with("retrying "));
        // Type-ahead is part of the working state too: it shows as a count
        // beside the spinner, never in its place.
        let queued_hint = self
            .hint
            .as_deref()
            .is_some_and(|h| h.starts_with("Queued"));
        if let Some(hint) = self
            .hint
            .as_ref()
            .filter(|_| retry.is_none() && !(queued_hint && self.is_busy()))
        {
            vec![Span::styled(format!(" {hint}"), style::notice())]
        } else if self.is_busy() {
            let frame = (self.elapsed.as_millis() / 100) as usize % SPINNER.len();
            let what = if self.pending.is_some() || !self.forms.is_empty() {
                "Waiting for your decision"
            } else if self.interrupting {
                "Interrupting"
            } else {
                "Working"
            };
            let mut spans = vec![
                Span::styled(format!(" {} ", SPINNER[frame]), style::ok()),
                Span::styled(
                    format!(
                        "{what} {}s",
                        match &self.pending {
                            Some(p) => self.elapsed.saturating_sub(p.asked_at).as_secs(),
                            None => self.elapsed.as_secs(),
                        }
                    ),
                    style::key(),
                ),
            ];
            if let Some(retry) = retry {
                spans.push(Span::styled(
                    format!(" · {}", self.retry_line(retry)),
                    style::notice(),
                ));
            }
            if !self.queued.is_empty() {
                spans.push(Span::styled(
                    format!(" · {} queued", self.queued.len()),
                    style::notice(),
                ));
            }
            spans.extend([Span::styled(
                if self.interrupting {
                    " · stopping the turn"
                } else if self.pending.is_some() || !self.forms.is_empty() {
                    // Esc answers the prompt here; Ctrl+C stops the turn.
                    " · ctrl+c stops"
                } else {
                    " · esc interrupts"
                },
                style::dim(),
            )]);
            spans
        } else {
            let newline = if self.keyboard_enhanced {
                "shift+enter"
            } else {
                "ctrl+j"
            };
            vec![Span::styled(
                format!(" enter send · {newline} newline · /help"),
                style::dim(),
            )]
        }
    }

    /// The session as the user's status line command reads it on standard
    /// input: Claude Code's fields (`session_id`, `cwd`, `model`,
    /// `workspace`, `version`, `cost`) and North's (`permission_mode`,
    /// `context_window`, `tokens`, `provider`).
    pub(crate) fn status_json(&self) -> serde_json::Value {
        let u = &self.usage_total;
        let input = u
            .input_tokens
            .saturating_add(u.cache_read_input_tokens)
            .saturating_add(u.cache_creation_input_tokens);
        let window = self.info.context_window.filter(|w| *w > 0);
        let cost = self.info.catalog.map(|m| m.cost(u));
        let root = self.info.root.display().to_string();
        serde_json::json!({
            "hook_event_name": "Status",
            "session_id": self.info.session_id,
            "cwd": root,
            "workspace": {"current_dir": root, "project_dir": root},
            "model": {"id": self.info.model, "display_name": self.info.model},
            "provider": self.info.provider,
            "version": self.info.version,
            "permission_mode": self.info.mode,
            "cost": {"total_cost_usd": cost},
            "context_window": {
                "size": window,
                "used_tokens": self.context_used,
                "used_percentage": window.map(|w| (self.context_used * 100).div_ceil(w).min(100)),
            },
            "tokens": {"input": input, "output": u.output_tokens},
        })
    }

    /// The status line's right side, each part with the rank it is kept
    /// by when the line is too narrow (the lowest goes first).
    fn status_parts(&self, width: u16) -> Vec<(u8, String)> {
        if let Some(line) = self.programmed_status.as_ref().filter(|l| !l.is_empty()) {
            // The user's own line replaces North's parts; a mode other
            // than ask still shows.
            let mut parts = Vec::new();
            if self.info.mode != north_protocol::PermissionMode::Ask {
                parts.push((9, crate::plan::mode_label(self.info.mode).to_string()));
            }
            // Room beside the key hints on the left.
            let room = usize::from(width).saturating_sub(40).max(10);
            parts.push((8, crate::wrap::truncate(line, room)));
            return parts;
        }
        let model = if self.info.provider == self.info.model || self.info.provider.is_empty() {
            self.info.model.clone()
        } else {
            format!("{} · {}", self.info.provider, self.info.model)
        };
        let session = if self.info.session_id.is_empty() {
            "new session".to_string()
        } else {
            format!("session {}", self.info.session_id)
        };
        let u = &self.usage_total;
        let input = u
            .input_tokens
            .saturating_add(u.cache_read_input_tokens)
            .saturating_add(u.cache_creation_input_tokens);
        // Until the provider reports usage, what streamed counts as an
        // estimate, so the number follows the stream.
        let output = u
            .output_tokens
            .saturating_add(self.streamed_bytes.div_ceil(4));
        let tokens = if input.saturating_add(output) == 0 {
            "0 tokens".to_string()
        } else {
            format!("↑{} ↓{} tokens", compact(input), compact(output))
        };
        let context = self
            .info
            .context_window
            .filter(|w| *w > 0 && self.context_used > 0)
            .map(|w| {
                format!(
                    "{}% context",
                    (self.context_used * 100).div_ceil(w).min(100)
                )
            });
        let cost = self
            .info
            .catalog
            .map(|m| m.cost(u))
            .filter(|c| *c > 0.0)
            .map(|c| format!("${c:.2}"));
        // Dropped in this order when the line is too narrow; a mode other
        // than ask is never dropped.
        let mut parts: Vec<(u8, String)> = Vec::new();
        if self.info.mode != north_protocol::PermissionMode::Ask {
            parts.push((9, crate::plan::mode_label(self.info.mode).to_string()));
        }
        parts.extend([(5, model), (1, session), (4, tokens)]);
        parts.extend(context.map(|c| (3, c)));
        parts.extend(cost.map(|c| (2, c)));
        if self.background > 0 {
            parts.push((6, format!("{} in background (/ps)", self.background)));
        }
        // What commands reached is kept longer than the model or tokens.
        if let Some(hosts) = self.hosts_part() {
            parts.push((7, hosts));
        }
        parts
    }

    /// The hosts this turn's commands reached (`✓`) and were refused
    /// (`✗`) through North's proxy: `net ✓ registry.npmjs.org ✗ x.example`.
    fn hosts_part(&self) -> Option<String> {
        if self.turn_hosts.is_empty() {
            return None;
        }
        let side = |allowed: bool, mark: &str| {
            let names: Vec<&str> = self
                .turn_hosts
                .iter()
                .filter(|(_, a)| *a == allowed)
                .map(|(h, _)| h.as_str())
                .collect();
            match names.len() {
                0 => None,
                1 | 2 => Some(format!("{mark} {}", names.join(", "))),
                n => Some(format!("{mark} {}, {} +{}", names[0], names[1], n - 2)),
            }
        };
        let shown: Vec<String> = [side(true, "✓"), side(false, "✗")]
            .into_iter()
            .flatten()
            .collect();
        Some(format!("net {}", shown.join(" ")))
    }

    fn status_line(&self, width: u16) -> Line<'static> {
        let w = usize::from(width);
        let left = self.status_left();
        let mut parts = self.status_parts(width);
        let left_w = spans_width(&left);
        let right = loop {
            let shown: Vec<&str> = parts.iter().map(|(_, p)| p.as_str()).collect();
            let text = format!("{} ", shown.join(" · "));
            if parts.is_empty() || left_w + crate::wrap::width(&text) + 2 <= w {
                break if parts.is_empty() {
                    String::new()
                } else {
                    text
                };
            }
            let least = parts
                .iter()
                .enumerate()
                .min_by_key(|(_, (rank, _))| *rank)
                .map_or(0, |(i, _)| i);
            parts.remove(least);
        };
        let pad = w.saturating_sub(left_w + crate::wrap::width(&right));
        let mut spans = left;
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(right, style::status()));
        Line::from(spans)
    }

    /// Draws the live area into `area` of `buf`; where the composer's
    /// text cursor is, when it has the keys.
    pub fn render(&self, area: Rect, buf: &mut Buffer) -> Option<ratatui::layout::Position> {
        let l = self.layout(area.width, self.screen_h.get().max(area.height));
        let mut y = area.y;
        let bottom = area.bottom();
        let take = |y: &mut u16, h: u16| -> Rect {
            let h = h.min(bottom.saturating_sub(*y));
            let r = Rect::new(area.x, *y, area.width, h);
            *y += h;
            r
        };
        // The tail of the answer being streamed.
        let skip = l.stream.len().saturating_sub(usize::from(l.stream_h));
        let stream: Vec<Line<'static>> = l.stream.into_iter().skip(skip).collect();
        Paragraph::new(stream).render(take(&mut y, l.stream_h), buf);
        // Room left for the panel after composer and status.
        let panel_room = bottom.saturating_sub(y).saturating_sub(l.composer_h + 1);
        let panel_h = (l.panel.len() as u16).min(panel_room);
        Paragraph::new(l.panel).render(take(&mut y, panel_h), buf);
        // Composer: a rule, then the text.
        let rule = take(&mut y, 1);
        let label = if self
            .pending
            .as_ref()
            .is_some_and(|p| p.awaiting_feedback.is_some())
        {
            " why? North gets your words · enter sends · esc goes back "
        } else if !self.forms.is_empty() {
            " fill in the form above "
        } else if self.pending.is_some() {
            " answer the prompt above "
        } else if self.is_busy() {
            " type ahead: sent when the turn ends "
        } else {
            ""
        };
        let mut rule_spans = vec![Span::styled("─".repeat(2), style::dim())];
        rule_spans.push(Span::styled(label, style::dim()));
        let used = 2 + label.chars().count();
        rule_spans.push(Span::styled(
            "─".repeat(usize::from(area.width).saturating_sub(used)),
            style::dim(),
        ));
        Paragraph::new(Line::from(rule_spans)).render(rule, buf);
        let text_h = l.composer_h.saturating_sub(1);
        let text_room = text_h.min(bottom.saturating_sub(y).saturating_sub(1));
        let text = take(&mut y, text_room);
        let mut cursor = None;
        if text.width > 2 {
            Span::styled("› ", style::user())
                .render(Rect::new(text.x, text.y, 2, 1.min(text.height)), buf);
            let inner = Rect::new(text.x + 2, text.y, text.width - 2, text.height);
            self.composer.widget().render(inner, buf);
            cursor = self.composer.screen_cursor(inner);
        }
        let status = Rect::new(
            area.x,
            bottom.saturating_sub(1),
            area.width,
            1.min(area.height),
        );
        Paragraph::new(self.status_line(area.width)).render(status, buf);
        cursor.map(|(x, y)| ratatui::layout::Position::new(x, y))
    }
}

/// `1234` → `1,234`; `45678` → `45.7k`; `1234567` → `1.2M`.
fn compact(n: u64) -> String {
    match n {
        0..=9_999 => thousands(n),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A picker row's label: its first line, and how many more there are.
fn first_line(label: &str) -> String {
    let mut lines = label.lines();
    let first = lines.next().unwrap_or("");
    match lines.count() {
        0 => first.to_string(),
        more => format!("{first} (+{more} line(s))"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
