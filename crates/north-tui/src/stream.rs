//! The answer being streamed: which of its lines are final (printed into
//! history as soon as their source line is complete) and which are still
//! changing (drawn in the live area).
//!
//! The text is kept as the current markdown block (everything before the
//! last blank line outside a fence is a finished block and leaves as a
//! whole). Within the block, a source line is final once its newline has
//! arrived: the renderer keeps source line breaks, so the rows of a
//! complete prefix stay the rows of every longer text. Tables are the
//! exception (their columns widen with later rows): a block holding one
//! is printed when it ends.

use ratatui::text::Line;

use crate::markdown::{render, stable_prefix};

/// A finished block of the answer and how much of it is already printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// The block's markdown, without trailing blank lines.
    pub text: String,
    /// Bytes of `text` whose rows were printed while it streamed.
    pub printed: usize,
}

/// The streaming answer.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    /// The current, unfinished block.
    text: String,
    /// Bytes of `text` (a whole number of lines) already printed.
    printed: usize,
}

/// Rows of `text[..bytes]` at `width` (0 for nothing).
pub(crate) fn rows_of_prefix(text: &str, bytes: usize, width: u16) -> usize {
    let bytes = bytes.min(text.len());
    if bytes == 0 || !text.is_char_boundary(bytes) {
        return 0;
    }
    render(&text[..bytes], width).len()
}

impl Stream {
    /// Adds streamed text; returns the blocks it finished.
    pub fn push(&mut self, delta: &str) -> Option<Block> {
        self.text.push_str(delta);
        let cut = stable_prefix(&self.text);
        if cut == 0 {
            return None;
        }
        let head: String = self.text.drain(..cut).collect();
        let printed = self.printed.min(cut);
        self.printed = self.printed.saturating_sub(cut);
        block(head, printed)
    }

    /// Ends the answer: the rest is a finished block.
    pub fn finish(&mut self) -> Option<Block> {
        let text = std::mem::take(&mut self.text);
        let printed = std::mem::take(&mut self.printed);
        block(text, printed)
    }

    /// The unfinished block's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether nothing is streaming.
    pub(crate) fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// Whether some of the unfinished block is printed already.
    pub fn started(&self) -> bool {
        self.printed > 0
    }

    /// How the part after `printed` can be rendered on its own, so a long
    /// block costs the same per frame as a short one: a plain paragraph's
    /// lines render alone (source breaks are kept); an open code fence's
    /// lines render after its opening line, whose row is dropped. `None`:
    /// the whole block must be rendered.
    fn tail_context(&self) -> Option<(&str, usize)> {
        if self.printed == 0 {
            return None;
        }
        let done = &self.text[..self.printed];
        let first = done.lines().next()?;
        let opener = first.trim_start();
        if opener.starts_with("```") || opener.starts_with("~~~") {
            let fence = &opener[..3];
            let closed = done.lines().skip(1).any(|l| l.trim() == fence);
            return (!closed).then(|| (&self.text[..first.len() + 1], 1));
        }
        let plain = self.text.lines().all(|l| {
            let t = l.trim_start();
            let indented = l.starts_with("    ") || l.starts_with('\t');
            let numbered = t
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            !(indented
                || numbered
                || t.starts_with(['#', '>', '|', '-', '*', '+', '=', '`', '~', '<'])
                || t.is_empty())
        });
        plain.then_some(("", 0))
    }

    /// Rows of `text[printed..end]` as they appear in the whole block.
    fn rows_after_printed(&self, end: usize, width: u16) -> Vec<Line<'static>> {
        match self.tail_context() {
            Some((head, drop)) => {
                let mut source = head.to_string();
                source.push_str(&self.text[self.printed..end]);
                render(&source, width).into_iter().skip(drop).collect()
            }
            None => {
                let before = rows_of_prefix(&self.text, self.printed, width);
                render(&self.text[..end], width)
                    .into_iter()
                    .skip(before)
                    .collect()
            }
        }
    }

    /// The rows that became final since the last call, marked printed.
    /// `separate` puts a blank row before the block's first printed row.
    pub(crate) fn take_final(&mut self, width: u16, separate: bool) -> Vec<Line<'static>> {
        let complete = self.text.rfind('\n').map_or(0, |i| i + 1);
        if complete <= self.printed || self.text[..complete].trim().is_empty() {
            return Vec::new();
        }
        if self.text[..complete]
            .lines()
            .any(|l| l.trim_start().starts_with('|'))
        {
            return Vec::new();
        }
        let rows = self.rows_after_printed(complete, width);
        let mut out = Vec::new();
        if self.printed == 0 && separate {
            out.push(Line::default());
        }
        out.extend(rows);
        self.printed = complete;
        out
    }

    /// The rows not printed yet, for the live area.
    pub fn live(&self, width: u16) -> Vec<Line<'static>> {
        if self.is_blank() {
            return Vec::new();
        }
        self.rows_after_printed(self.text.len(), width)
    }
}

fn block(text: String, printed: usize) -> Option<Block> {
    let text = text.trim_end().to_string();
    if text.trim().is_empty() {
        return None;
    }
    let printed = printed.min(text.len());
    Some(Block { text, printed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn complete_lines_are_final_and_printed_once() {
        let mut s = Stream::default();
        assert_eq!(s.push("one\ntw"), None);
        assert_eq!(plain(&s.take_final(40, true)), ["", "one"]);
        assert_eq!(plain(&s.live(40)), ["tw"]);
        assert!(s.take_final(40, true).is_empty());
        assert_eq!(s.push("o\nthree"), None);
        assert_eq!(plain(&s.take_final(40, true)), ["two"]);
        let done = s.push("\n\nnext").unwrap();
        assert_eq!(done.text, "one\ntwo\nthree");
        assert_eq!(done.printed, "one\ntwo\n".len());
        assert_eq!(plain(&s.live(40)), ["next"]);
    }

    #[test]
    fn a_tail_rendered_alone_matches_the_whole_block() {
        let cases = [
            "one line\nanother **bold** line\nand a third that is long enough to wrap at forty columns wide\nlast",
            "```rust\nfn a() {}\nlet x = 1;\nfn b() {}\n",
            "- item\n  more\n- next\nend",
        ];
        for text in cases {
            for cut in text.match_indices('\n').map(|(i, _)| i + 1) {
                let mut s = Stream::default();
                s.push(&text[..cut]);
                let _ = s.take_final(40, false);
                s.push(&text[cut..]);
                let whole = render(text, 40);
                let before = rows_of_prefix(text, s.printed, 40);
                let tail: Vec<String> = s.live(40).iter().map(|l| l.to_string()).collect();
                let expected: Vec<String> = whole[before..].iter().map(|l| l.to_string()).collect();
                assert_eq!(tail, expected, "{text:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn code_lines_are_final_as_they_arrive_and_tables_wait() {
        let mut s = Stream::default();
        s.push("```rust\nfn a() {}\n");
        assert_eq!(plain(&s.take_final(40, false)), ["┌ rust", "fn a() {}"]);
        s.push("fn b() {}\n```\n");
        assert_eq!(plain(&s.take_final(40, false)), ["fn b() {}"]);
        let mut t = Stream::default();
        t.push("| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(t.take_final(40, false).is_empty());
        assert_eq!(t.finish().unwrap().printed, 0);
    }
}
