//! The composer: a multiline text area with input history.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::style::Style;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::style;
use crate::wrap::width;

/// Rows the composer grows to before it scrolls.
pub(crate) const MAX_ROWS: u16 = 8;

/// Multiline input with history of what was sent.
#[derive(Debug)]
pub(crate) struct Composer {
    area: TextArea<'static>,
    history: Vec<String>,
    /// Position while browsing history; `None` when editing a fresh draft.
    browsing: Option<usize>,
    draft: String,
    /// Whether keys go to the composer (not to a prompt).
    focused: bool,
}

fn text_area(text: &str) -> TextArea<'static> {
    let mut area = TextArea::new(text.split('\n').map(str::to_string).collect());
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_cursor_line_style(Style::new());
    area.set_placeholder_text("Ask North to do something · /help for commands");
    area.set_placeholder_style(style::dim());
    area.move_cursor(CursorMove::Bottom);
    area.move_cursor(CursorMove::End);
    area
}

/// The lengths in characters of the graphemes just before and just after
/// character `col` of `line` (0 at either end).
fn graphemes_around(line: &str, col: usize) -> (usize, usize) {
    use unicode_segmentation::UnicodeSegmentation;
    let mut start = 0;
    let mut previous = 0;
    for g in line.graphemes(true) {
        let n = g.chars().count();
        let end = start + n;
        if col == start {
            return (previous, n);
        }
        // Inside a grapheme: its two parts.
        if col < end {
            return (col - start, end - col);
        }
        previous = n;
        start = end;
    }
    (if col == start { previous } else { 0 }, 0)
}

impl Default for Composer {
    fn default() -> Self {
        Composer {
            area: text_area(""),
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
            focused: true,
        }
    }
}

impl Composer {
    /// The text as typed, lines joined with `\n`.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(String::is_empty)
    }

    /// Replaces the text, cursor at the end.
    pub(crate) fn set_text(&mut self, text: &str) {
        self.area = text_area(text);
    }

    /// Takes the text out (clearing the composer) and records it in history.
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.set_text("");
        self.browsing = None;
        self.draft.clear();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Clears the composer but keeps its text in history, so a cleared draft
    /// is one ↑ away.
    pub fn stash(&mut self) {
        let _ = self.take();
    }

    /// Adds `text` to history without touching the composer.
    pub(crate) fn remember(&mut self, text: String) {
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text);
        }
    }

    /// Ctrl+U: deletes from the cursor to the start of the line.
    pub(crate) fn kill_to_line_start(&mut self) {
        self.area.delete_line_by_head();
    }

    /// Ctrl+_: undoes the last edit.
    pub fn undo(&mut self) {
        self.area.undo();
    }

    /// Alt+B: moves back a word.
    pub(crate) fn word_back(&mut self) {
        self.area.move_cursor(CursorMove::WordBack);
    }

    /// Alt+F: moves forward a word.
    pub(crate) fn word_forward(&mut self) {
        self.area.move_cursor(CursorMove::WordForward);
    }

    /// Inserts a line break at the cursor.
    pub fn newline(&mut self) {
        self.area.insert_newline();
    }

    /// Whether the character before the cursor is a backslash: Enter then
    /// continues the line (the shell's habit, and Claude Code's) instead of
    /// sending.
    pub(crate) fn backslash_before_cursor(&self) -> bool {
        let (row, col) = self.cursor();
        self.area
            .lines()
            .get(row)
            .and_then(|line| line.chars().nth(col.checked_sub(1)?))
            == Some('\\')
    }

    /// Replaces the backslash before the cursor with a line break.
    pub(crate) fn continue_line(&mut self) {
        self.area.delete_char();
        self.area.insert_newline();
    }

    /// Inserts text (a paste), line breaks included, without sending.
    pub fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.area.insert_str(text);
    }

    /// Passes an editing key to the text area. A key that moves over or
    /// deletes one character takes a whole grapheme: a letter and its
    /// combining accent, an emoji and its modifiers stay one.
    pub fn input(&mut self, key: KeyEvent) {
        if key.modifiers.is_empty() && key.kind != KeyEventKind::Release {
            let (row, col) = self.cursor();
            let line = self.area.lines().get(row).map_or("", String::as_str);
            let (before, after) = graphemes_around(line, col);
            let jump = |col: usize| {
                CursorMove::Jump(
                    u16::try_from(row).unwrap_or(u16::MAX),
                    u16::try_from(col).unwrap_or(u16::MAX),
                )
            };
            match key.code {
                KeyCode::Left if before > 1 => {
                    return self.area.move_cursor(jump(col - before));
                }
                KeyCode::Right if after > 1 => {
                    return self.area.move_cursor(jump(col + after));
                }
                KeyCode::Backspace if before > 1 => {
                    self.area.move_cursor(jump(col - before));
                    self.area.delete_str(before);
                    return;
                }
                KeyCode::Delete if after > 1 => {
                    self.area.delete_str(after);
                    return;
                }
                _ => {}
            }
        }
        self.area.input(key);
    }

    /// The cursor's (row, column) in the text.
    pub fn cursor(&self) -> (usize, usize) {
        let c = self.area.cursor();
        (c.0, c.1)
    }

    /// Number of text lines.
    pub fn line_count(&self) -> usize {
        self.area.lines().len()
    }

    /// The newest history entry older than `before` (None: the newest of
    /// all) that contains `query`, ignoring case: its index and text.
    pub(crate) fn find(&self, query: &str, before: Option<usize>) -> Option<(usize, &str)> {
        let query = query.to_lowercase();
        let end = before.unwrap_or(self.history.len()).min(self.history.len());
        self.history[..end]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, h)| h.to_lowercase().contains(&query))
            .map(|(i, h)| (i, h.as_str()))
    }

    /// Steps back in history; `false` when there is nothing older.
    pub(crate) fn history_prev(&mut self) -> bool {
        let next = match self.browsing {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(i) => i - 1,
        };
        self.browsing = Some(next);
        let text = self.history[next].clone();
        self.area = text_area(&text);
        true
    }

    /// Steps forward in history, back to the draft at the end.
    pub(crate) fn history_next(&mut self) -> bool {
        let Some(i) = self.browsing else {
            return false;
        };
        if i + 1 < self.history.len() {
            self.browsing = Some(i + 1);
            let text = self.history[i + 1].clone();
            self.area = text_area(&text);
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.draft);
            self.area = text_area(&draft);
        }
        true
    }

    /// Rows needed at `cols` columns (soft-wrapped), at most [`MAX_ROWS`].
    pub fn rows(&self, cols: u16) -> u16 {
        let cols = usize::from(cols).max(1);
        let rows: usize = self
            .area
            .lines()
            .iter()
            .map(|l| (width(l) + 1).div_ceil(cols).max(1))
            .sum();
        (rows as u16).clamp(1, MAX_ROWS)
    }

    /// The widget to render.
    pub(crate) fn widget(&self) -> impl ratatui::widgets::Widget + '_ {
        &self.area
    }

    /// Where the text cursor is on screen once the composer was drawn in
    /// `area`: the terminal's own cursor is put there, so an input
    /// method's candidate window and a screen magnifier follow typing.
    /// `None` while a prompt has the keys or the cursor is out of view.
    pub(crate) fn screen_cursor(&self, area: ratatui::layout::Rect) -> Option<(u16, u16)> {
        if !self.focused {
            return None;
        }
        let at = self.area.screen_cursor();
        let (top, left) = self.area.scroll_offset();
        let row = u16::try_from(at.row).ok()?.checked_sub(top)?;
        let col = u16::try_from(at.col).ok()?.checked_sub(left)?;
        (row < area.height && col < area.width).then_some((area.x + col, area.y + row))
    }

    /// Whether the cursor block is shown (hidden while a prompt has focus).
    pub(crate) fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
        if focused {
            self.area
                .set_cursor_style(Style::new().add_modifier(ratatui::style::Modifier::REVERSED));
        } else {
            self.area.set_cursor_style(Style::new());
        }
    }
}

/// A Ctrl+R search through history (see the `search` module).
#[derive(Debug, Default)]
pub(crate) struct HistorySearch {
    pub(crate) query: String,
    /// The history entry shown (None: no match yet).
    pub(crate) at: Option<usize>,
    /// The draft the search started from, put back on Esc.
    pub(crate) draft: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn press(c: &mut Composer, code: KeyCode) {
        c.input(KeyEvent::new(code, KeyModifiers::NONE));
    }

    #[test]
    fn arrows_and_deletion_take_a_letter_with_its_combining_accent() {
        // "e" + U+0301 is one letter on screen: é.
        let mut c = Composer::default();
        c.insert("cafe\u{301}s");
        press(&mut c, KeyCode::Left);
        assert_eq!(c.cursor(), (0, 5));
        press(&mut c, KeyCode::Left);
        assert_eq!(c.cursor(), (0, 3), "one step over é");
        press(&mut c, KeyCode::Right);
        assert_eq!(c.cursor(), (0, 5));
        press(&mut c, KeyCode::Backspace);
        assert_eq!(c.text(), "cafs");
        c.insert("e\u{301}");
        press(&mut c, KeyCode::Left);
        press(&mut c, KeyCode::Delete);
        assert_eq!(c.text(), "cafs");
        // Plain letters and line joins are as before.
        press(&mut c, KeyCode::Backspace);
        assert_eq!(c.text(), "cas");
    }

    #[test]
    fn an_emoji_with_its_modifiers_is_one_step() {
        let mut c = Composer::default();
        c.insert("a👍🏽b");
        press(&mut c, KeyCode::Left);
        press(&mut c, KeyCode::Left);
        assert_eq!(c.cursor(), (0, 1));
        assert_eq!(
            graphemes_around("a👍🏽b", 2),
            (1, 1),
            "inside: its two halves"
        );
        assert_eq!(graphemes_around("", 0), (0, 0));
    }
}
