//! Markdown to styled, wrapped terminal lines: headings, paragraphs,
//! emphasis, inline code, fenced code blocks, lists, quotes and rules.
//!
//! Works on partial input too (an unclosed fence renders as code), which is
//! what a streaming answer looks like most of the time.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::style;
use crate::wrap::{wrap_prefixed, wrap_spans};

struct ListState {
    next: Option<u64>,
}

struct Renderer {
    width: usize,
    out: Vec<Line<'static>>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<ListState>,
    /// The marker waiting for the first text of a list item.
    item_marker: Option<String>,
    quote: usize,
    code: Option<(String, String)>,
    heading: Option<HeadingLevel>,
    link: Option<String>,
    need_blank: bool,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn quote_prefix(&self) -> Vec<Span<'static>> {
        if self.quote == 0 {
            Vec::new()
        } else {
            vec![Span::styled("│ ".repeat(self.quote), style::dim())]
        }
    }

    fn indent(&self) -> usize {
        self.lists.len().saturating_sub(1) * 3
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && !self.out.is_empty() {
            let q = self.quote_prefix();
            self.out.push(Line::from(q));
        }
        self.need_blank = false;
    }

    /// Emits the collected inline text as wrapped rows.
    fn flush_inline(&mut self) {
        if self.inline.is_empty() && self.item_marker.is_none() {
            return;
        }
        let content = std::mem::take(&mut self.inline);
        let mut first = self.quote_prefix();
        let mut rest = self.quote_prefix();
        if !self.lists.is_empty() {
            let pad = " ".repeat(self.indent());
            match self.item_marker.take() {
                Some(marker) => {
                    let w = marker.chars().count();
                    first.push(Span::raw(pad.clone()));
                    first.push(Span::styled(marker, style::dim()));
                    rest.push(Span::raw(format!("{pad}{}", " ".repeat(w))));
                }
                None => {
                    let pad = format!("{pad}   ");
                    first.push(Span::raw(pad.clone()));
                    rest.push(Span::raw(pad));
                }
            }
        }
        self.out
            .extend(wrap_prefixed(&content, self.width, &first, &rest));
    }

    fn text(&mut self, text: &str) {
        if let Some((_, body)) = &mut self.code {
            body.push_str(text);
            return;
        }
        let s = self.style();
        self.inline.push(Span::styled(text.to_string(), s));
    }

    fn code_block(&mut self, lang: &str, body: &str) {
        self.blank_if_needed();
        let q = self.quote_prefix();
        let pad = " ".repeat(self.indent() + if self.lists.is_empty() { 0 } else { 3 });
        let label = if lang.is_empty() { "code" } else { lang };
        let mut head = q.clone();
        head.push(Span::raw(pad.clone()));
        head.push(Span::styled(format!("┌ {label}"), style::dim()));
        self.out.push(Line::from(head));
        let body = body.strip_suffix('\n').unwrap_or(body);
        let mut gutter = q.clone();
        gutter.push(Span::raw(pad.clone()));
        gutter.push(Span::styled("│ ", style::dim()));
        let inner = self
            .width
            .saturating_sub(crate::wrap::spans_width(&gutter))
            .max(1);
        for line in body.split('\n') {
            for row in wrap_spans(
                &[Span::styled(line.replace('\t', "    "), style::code())],
                inner,
            ) {
                let mut spans = gutter.clone();
                spans.extend(row);
                self.out.push(Line::from(spans));
            }
        }
        self.need_blank = true;
    }

    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                let s = style::code();
                self.inline.push(Span::styled(t.to_string(), s));
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => self.text(t.trim_end_matches('\n')),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush_inline(),
            Event::Rule => {
                self.flush_inline();
                self.blank_if_needed();
                let w = self.width.min(40);
                self.out
                    .push(Line::from(Span::styled("─".repeat(w), style::dim())));
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if self.item_marker.is_none() => self.blank_if_needed(),
            Tag::Heading { level, .. } => {
                self.blank_if_needed();
                self.heading = Some(level);
                let marks = "#".repeat(level as usize);
                self.inline
                    .push(Span::styled(format!("{marks} "), style::dim()));
                self.push_style(|s| s.patch(style::heading()));
                if level == HeadingLevel::H1 {
                    self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
                }
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.blank_if_needed();
                self.quote += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                if self.lists.is_empty() {
                    self.blank_if_needed();
                }
                self.lists.push(ListState { next: start });
            }
            Tag::Item => {
                self.flush_inline();
                let marker = match self.lists.last_mut() {
                    Some(ListState { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.item_marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
            }
            Tag::Image { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(|s| s);
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::Heading(level) => {
                self.styles.pop();
                if level == HeadingLevel::H1 {
                    self.styles.pop();
                }
                self.heading = None;
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.quote = self.quote.saturating_sub(1);
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, body)) = self.code.take() {
                    if let Some(marker) = self.item_marker.take() {
                        // A list item that opens with a code block still shows its marker.
                        self.inline.clear();
                        self.item_marker = Some(marker);
                        self.flush_inline();
                    }
                    self.code_block(&lang, &body);
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.need_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                self.item_marker = None;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self.inline.iter().map(|s| s.content.as_ref()).collect();
                    if !shown.ends_with(url.as_str()) {
                        self.inline
                            .push(Span::styled(format!(" ({url})"), style::dim()));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Renders markdown `source` into lines at most `width` cells wide.
pub fn render(source: &str, width: u16) -> Vec<Line<'static>> {
    let mut r = Renderer {
        width: usize::from(width).max(8),
        out: Vec::new(),
        inline: Vec::new(),
        styles: Vec::new(),
        lists: Vec::new(),
        item_marker: None,
        quote: 0,
        code: None,
        heading: None,
        link: None,
        need_blank: false,
    };
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for ev in Parser::new_ext(source, opts) {
        r.event(ev);
    }
    // Partial input can end inside an open construct.
    if let Some((lang, body)) = r.code.take() {
        r.code_block(&lang, &body);
    }
    r.flush_inline();
    r.out
}

/// Where a streaming answer can be cut so the part before it is final: the
/// end of the last blank line that is outside a code fence. Everything
/// before the cut renders the same whatever arrives later.
pub fn stable_prefix(text: &str) -> usize {
    let mut in_fence: Option<(char, usize)> = None;
    let mut cut = 0;
    let mut offset = 0;
    let mut prev_blank = false;
    for line in text.split_inclusive('\n') {
        let complete = line.ends_with('\n');
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let body = trimmed.trim_end();
        if indent < 4 {
            for fence in ['`', '~'] {
                let run = body.chars().take_while(|c| *c == fence).count();
                if run >= 3 && complete {
                    match in_fence {
                        None => in_fence = Some((fence, run)),
                        Some((f, n)) if f == fence && run >= n && body.len() == run => {
                            in_fence = None
                        }
                        _ => {}
                    }
                }
            }
        }
        offset += line.len();
        let blank = complete && body.is_empty();
        // A blank line after text, outside a fence, ends a block. Indented
        // continuation lines could still follow, so only cut before text
        // that starts at column 0.
        if blank && in_fence.is_none() && !prev_blank {
            cut = offset;
        }
        prev_blank = blank;
        if !complete {
            break;
        }
    }
    // The text after the cut must begin a new top-level block.
    let rest = &text[cut..];
    if rest.starts_with(' ') || rest.starts_with('\t') {
        return 0;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn renders_blocks_with_blank_lines_between() {
        let lines = render(
            "# Title\n\nSome *text* and `code`.\n\n- one\n- two\n\n1. a\n2. b",
            40,
        );
        assert_eq!(
            plain(&lines),
            vec![
                "# Title",
                "",
                "Some text and code.",
                "",
                "• one",
                "• two",
                "",
                "1. a",
                "2. b"
            ]
        );
    }

    #[test]
    fn code_blocks_keep_their_lines_and_partial_fences_render_as_code() {
        let lines = render("```rust\nfn main() {}\n", 40);
        assert_eq!(plain(&lines), vec!["┌ rust", "│ fn main() {}"]);
    }

    #[test]
    fn the_stable_prefix_ends_at_a_blank_line_outside_fences() {
        assert_eq!(stable_prefix("para one\n\npara two"), 10);
        assert_eq!(stable_prefix("```\na\n\nb\n"), 0);
        assert_eq!(stable_prefix("```\na\n```\n\nnext"), 11);
        assert_eq!(stable_prefix("no break yet"), 0);
        assert_eq!(stable_prefix("- item\n\n  continued"), 0);
    }
}
