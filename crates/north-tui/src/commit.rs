//! What reaches the terminal's history: the items not printed yet and the
//! streamed answer's lines that became final — the one writer of history —
//! and the whole session for the transcript view.

use ratatui::text::Line;

use crate::app::App;
use crate::transcript::Item;

impl App {
    /// The whole session as lines for the transcript view: every item, each
    /// tool result's full output, and the answer still streaming.
    pub fn transcript_lines(&self, width: u16) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let mut prev = None;
        for (i, item) in self.items.iter().enumerate() {
            out.extend(item.lines_after(prev, width));
            prev = Some(item);
            if let Some(text) = self.full_output.get(&i) {
                // Wrapped, never cut: the view is for reading all of it.
                let gutter = [ratatui::text::Span::styled("    │ ", crate::style::dim())];
                for l in text.lines() {
                    out.extend(crate::wrap::wrap_prefixed(
                        &[ratatui::text::Span::raw(l.replace('\t', "    "))],
                        usize::from(width).max(8),
                        &gutter,
                        &gutter,
                    ));
                }
            }
        }
        if !self.stream.is_blank() {
            out.push(Line::default());
            out.extend(crate::markdown::render(self.stream.text(), width));
        }
        // The view draws a row a line; a web address kept whole is cut.
        out.into_iter()
            .flat_map(|l| crate::wrap::cut_to_rows(l, usize::from(width)))
            .collect()
    }

    /// Lines that became final since the last frame — items not printed
    /// yet, then the streamed answer's complete lines — marked printed.
    /// This is the only way anything reaches the terminal's history.
    pub(crate) fn take_commits(&mut self, width: u16) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let mut prev = if self.fresh_screen || self.committed == 0 {
            None
        } else {
            self.items.get(self.committed - 1)
        };
        for i in self.committed..self.items.len() {
            let item = &self.items[i];
            match (self.partly_printed.remove(&i), item) {
                (Some(printed), Item::Assistant(text)) => {
                    let skip = crate::stream::rows_of_prefix(text, printed, width);
                    lines.extend(crate::markdown::render(text, width).into_iter().skip(skip));
                }
                _ => lines.extend(item.lines_after(prev, width)),
            }
            prev = Some(item);
        }
        let separate = prev.is_some();
        let streamed = self.stream.take_final(width, separate);
        if !lines.is_empty() || !streamed.is_empty() {
            self.fresh_screen = false;
        }
        self.committed = self.items.len();
        lines.extend(streamed);
        lines
    }

    /// Forgets what is on screen (after `/clear`): the next item starts at
    /// the top without a separating blank line.
    pub fn screen_cleared(&mut self) {
        self.fresh_screen = true;
        self.dirty = true;
    }
}
