//! The transcript view: the whole session — every message, tool line and
//! the full output of every tool — in a full-screen, scrollable, searchable
//! pager, since collapsed results are not in the terminal's scrollback.
//!
//! Pure state and drawing; the loop in `run.rs` shows it on the terminal's
//! alternate screen (like `less`) and returns to the inline view after.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::style;

/// What a key did to the pager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagerOutcome {
    /// Still open.
    Open,
    /// Closed by the user.
    Closed,
}

/// The transcript view's state.
#[derive(Debug)]
pub struct Pager {
    lines: Vec<Line<'static>>,
    plain: Vec<String>,
    /// First line shown.
    top: usize,
    /// Typing a search (after `/`).
    typing: Option<String>,
    /// The last search and the line of its current match.
    search: Option<(String, Option<usize>)>,
}

impl Pager {
    /// A pager over `lines`, showing the end (the newest) first.
    pub fn new(lines: Vec<Line<'static>>) -> Self {
        let plain = lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect();
        Pager {
            lines,
            plain,
            top: usize::MAX,
            typing: None,
            search: None,
        }
    }

    /// Follows the live transcript: new lines replace the old; a view at
    /// the end stays at the end, one scrolled up stays where it is.
    pub fn update(&mut self, lines: Vec<Line<'static>>, height: u16) {
        let at_end = self.top >= self.max_top(height);
        let fresh = Pager::new(lines);
        self.lines = fresh.lines;
        self.plain = fresh.plain;
        if at_end {
            self.top = usize::MAX;
        }
    }

    /// Lines matching `query` (case-insensitive).
    fn matches(&self, query: &str) -> Vec<usize> {
        let q = query.to_lowercase();
        (0..self.plain.len())
            .filter(|&i| self.plain[i].to_lowercase().contains(&q))
            .collect()
    }

    fn page(height: u16) -> usize {
        usize::from(height.saturating_sub(1)).max(1)
    }

    fn max_top(&self, height: u16) -> usize {
        self.lines.len().saturating_sub(Self::page(height))
    }

    /// Handles a key; `height` is the screen's.
    pub fn key(&mut self, key: KeyEvent, height: u16) -> PagerOutcome {
        let page = Self::page(height);
        self.top = self.top.min(self.max_top(height));
        if let Some(query) = &mut self.typing {
            match key.code {
                KeyCode::Enter => {
                    let q = std::mem::take(query);
                    self.typing = None;
                    if !q.is_empty() {
                        self.search = Some((q, None));
                        self.next_match(true, height);
                    }
                }
                KeyCode::Esc => self.typing = None,
                KeyCode::Backspace => {
                    query.pop();
                }
                KeyCode::Char(c) => query.push(c),
                _ => {}
            }
            return PagerOutcome::Open;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return PagerOutcome::Closed,
            KeyCode::Char('t') if ctrl => return PagerOutcome::Closed,
            KeyCode::Char('c') if ctrl => return PagerOutcome::Closed,
            KeyCode::Up | KeyCode::Char('k') => self.top = self.top.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.top += 1,
            KeyCode::PageUp | KeyCode::Char('b') => self.top = self.top.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => self.top += page,
            KeyCode::Home | KeyCode::Char('g') => self.top = 0,
            KeyCode::End | KeyCode::Char('G') => self.top = usize::MAX,
            KeyCode::Char('/') => self.typing = Some(String::new()),
            KeyCode::Char('n') => self.next_match(true, height),
            KeyCode::Char('N') => self.next_match(false, height),
            _ => {}
        }
        self.top = self.top.min(self.max_top(height));
        PagerOutcome::Open
    }

    /// Moves to the next (or previous) line containing the search, wrapping.
    fn next_match(&mut self, forward: bool, height: u16) {
        let Some((query, current)) = &self.search else {
            return;
        };
        let q = query.to_lowercase();
        let n = self.plain.len();
        if n == 0 {
            return;
        }
        let start = current.unwrap_or(if forward { n - 1 } else { 0 });
        let found = (1..=n)
            .map(|i| {
                if forward {
                    (start + i) % n
                } else {
                    (start + n - i) % n
                }
            })
            .find(|&i| self.plain[i].to_lowercase().contains(&q));
        if let Some(line) = found {
            self.search = Some((query.clone(), Some(line)));
            self.top = line.saturating_sub(2).min(self.max_top(height));
        } else {
            self.search = Some((query.clone(), None));
        }
    }

    /// Draws the pager into `buf` over `area`: the lines, then a status line.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let page = Self::page(area.height);
        self.top = self.top.min(self.max_top(area.height));
        let matched = self.search.as_ref().and_then(|(_, m)| *m);
        for (row, i) in (self.top..self.lines.len()).take(page).enumerate() {
            let y = area.y + row as u16;
            let mut line = self.lines[i].clone();
            if Some(i) == matched {
                line = line.patch_style(Style::new().add_modifier(Modifier::REVERSED));
            }
            line.render(Rect::new(area.x, y, area.width, 1), buf);
        }
        let status = match (&self.typing, &self.search) {
            (Some(q), _) => format!(" /{q}"),
            (None, Some((q, None))) => format!(" “{q}” not found · q closes"),
            (None, Some((q, Some(line)))) => {
                let all = self.matches(q);
                let at = all.iter().position(|l| l == line).map_or(0, |i| i + 1);
                format!(
                    " “{q}” · {at} of {} · n next · N previous · q closes",
                    all.len()
                )
            }
            (None, None) => {
                let end = (self.top + page).min(self.lines.len());
                format!(
                    " Transcript · lines {}–{end} of {} · ↑↓ PgUp PgDn g G scroll · / search · q closes",
                    (self.top + 1).min(end),
                    self.lines.len()
                )
            }
        };
        Line::from(Span::styled(status, style::key())).render(
            Rect::new(
                area.x,
                area.y + area.height.saturating_sub(1),
                area.width,
                1,
            ),
            buf,
        );
    }
}
