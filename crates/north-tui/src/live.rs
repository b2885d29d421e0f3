//! A running command's output as it arrives: the last few lines of stdout
//! and stderr, in order, for the live area (the full output stays one key
//! away in the result's details).

use std::collections::VecDeque;

use north_protocol::OutputStream;
use ratatui::text::{Line, Span};

use crate::style;

/// Lines of live output shown under the working indicator.
pub(crate) const LIVE_LINES: usize = 6;

/// The tail of a running command's output.
#[derive(Debug, Default)]
pub(crate) struct LiveLines {
    lines: VecDeque<(OutputStream, String)>,
    /// A line still being written, per stream.
    partial: [String; 2],
}

fn slot(stream: OutputStream) -> usize {
    match stream {
        OutputStream::Stdout => 0,
        OutputStream::Stderr => 1,
    }
}

impl LiveLines {
    /// Adds a chunk of `stream`'s output.
    pub fn push(&mut self, stream: OutputStream, text: &str) {
        let text = text.replace("\r\n", "\n");
        let mut parts = text.split('\n').peekable();
        while let Some(part) = parts.next() {
            // A terminal's carriage return overwrites the line (progress bars).
            let part = part.rsplit('\r').next().unwrap_or(part);
            let buf = &mut self.partial[slot(stream)];
            if parts.peek().is_some() {
                buf.push_str(part);
                let line = std::mem::take(buf);
                self.lines.push_back((stream, line));
                while self.lines.len() > LIVE_LINES {
                    self.lines.pop_front();
                }
            } else {
                buf.push_str(part);
            }
        }
    }

    /// Forgets everything (the command ended).
    pub fn clear(&mut self) {
        self.lines.clear();
        self.partial = Default::default();
    }

    /// Whether there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.partial.iter().all(String::is_empty)
    }

    /// The lines to draw, `│` for stdout and a red `┆` for stderr, each cut
    /// to `width` columns.
    pub fn render(&self, width: usize) -> Vec<Line<'static>> {
        let partial = [OutputStream::Stdout, OutputStream::Stderr]
            .into_iter()
            .filter(|s| !self.partial[slot(*s)].is_empty())
            .map(|s| (s, self.partial[slot(s)].clone()));
        let all: Vec<(OutputStream, String)> = self.lines.iter().cloned().chain(partial).collect();
        let skip = all.len().saturating_sub(LIVE_LINES);
        all.into_iter()
            .skip(skip)
            .map(|(stream, text)| {
                let (mark, mark_style) = match stream {
                    OutputStream::Stdout => ("  │ ", style::dim()),
                    OutputStream::Stderr => ("  ┆ ", style::error()),
                };
                let room = width.saturating_sub(4);
                let shown: String = text.replace('\t', "    ").chars().take(room).collect();
                Line::from(vec![
                    Span::styled(mark, mark_style),
                    Span::styled(shown, style::dim()),
                ])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_in_order_and_joins_split_lines() {
        let mut l = LiveLines::default();
        l.push(OutputStream::Stdout, "one\ntw");
        l.push(OutputStream::Stdout, "o\nthree\n");
        l.push(OutputStream::Stderr, "warn\n");
        let text: Vec<String> = l.render(80).iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["  │ one", "  │ two", "  │ three", "  ┆ warn"]);
        for i in 0..10 {
            l.push(OutputStream::Stdout, &format!("n{i}\n"));
        }
        assert_eq!(l.render(80).len(), LIVE_LINES);
        l.push(OutputStream::Stdout, "50%\r100%");
        let last = l.render(80).last().map(|l| l.to_string());
        assert_eq!(last.as_deref(), Some("  │ 100%"));
    }
}
