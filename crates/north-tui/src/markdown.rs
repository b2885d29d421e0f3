//! Markdown to styled, wrapped terminal lines: headings (styled by level,
//! without their `#`), paragraphs, emphasis, inline code, fenced code with
//! syntax highlighting, lists and task lists, quotes, links (text, then the
//! URL), tables laid out in columns, and rules.
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
    /// A table being read: rows of cells of styled text.
    table: Option<Table>,
}

/// A table's rows as they arrive; laid out when it ends (or when a streamed
/// answer stops inside it).
#[derive(Default)]
struct Table {
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
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
        let st = self.style();
        if let Some(cell) = self.table_cell() {
            cell.push(Span::styled(text.to_string(), st));
            return;
        }
        let s = self.style();
        self.inline.push(Span::styled(text.to_string(), s));
    }

    /// The cell of the table being read, if text belongs to one.
    fn table_cell(&mut self) -> Option<&mut Vec<Span<'static>>> {
        self.table.as_mut()?.rows.last_mut()?.last_mut()
    }

    /// Lays a table out in columns: each as wide as its content where the
    /// width allows, the widest narrowed first when it does not, cells
    /// wrapping within their column.
    fn layout_table(&mut self, table: Table) {
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let q = self.quote_prefix();
        let avail = self
            .width
            .saturating_sub(crate::wrap::spans_width(&q))
            .saturating_sub(3 * cols + 1)
            .max(cols);
        let mut widths = vec![1usize; cols];
        for row in &table.rows {
            for (c, cell) in row.iter().enumerate() {
                widths[c] = widths[c].max(crate::wrap::spans_width(cell));
            }
        }
        while widths.iter().sum::<usize>() > avail {
            let (i, w) = widths
                .iter()
                .copied()
                .enumerate()
                .max_by_key(|(_, w)| *w)
                .unwrap_or((0, 1));
            if w <= 3 {
                break;
            }
            widths[i] = w - 1;
        }
        let border = |l: &str, m: &str, r: &str| {
            let mut spans = q.clone();
            let inner: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
            spans.push(Span::styled(
                format!("{l}{}{r}", inner.join(m)),
                style::dim(),
            ));
            Line::from(spans)
        };
        self.out.push(border("┌", "┬", "┐"));
        for (r, row) in table.rows.iter().enumerate() {
            let header = r < table.header_rows;
            let wrapped: Vec<Vec<Vec<Span<'static>>>> = (0..cols)
                .map(|c| {
                    let cell = row.get(c).cloned().unwrap_or_default();
                    let cell: Vec<Span<'static>> = if header {
                        cell.into_iter()
                            .map(|s| {
                                let st = s.style.add_modifier(Modifier::BOLD);
                                s.style(st)
                            })
                            .collect()
                    } else {
                        cell
                    };
                    wrap_spans(&cell, widths[c].max(1))
                })
                .collect();
            let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
            for k in 0..height {
                let mut spans = q.clone();
                spans.push(Span::styled("│", style::dim()));
                for (c, lines) in wrapped.iter().enumerate() {
                    let part = lines.get(k).cloned().unwrap_or_default();
                    let w = crate::wrap::spans_width(&part);
                    spans.push(Span::raw(" "));
                    spans.extend(part);
                    spans.push(Span::raw(" ".repeat(widths[c].saturating_sub(w) + 1)));
                    spans.push(Span::styled("│", style::dim()));
                }
                self.out.push(Line::from(spans));
            }
            if header && r + 1 == table.header_rows {
                self.out.push(border("├", "┼", "┤"));
            }
        }
        self.out.push(border("└", "┴", "┘"));
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
        // No gutter: code copied from the terminal is the code.
        let mut gutter = q.clone();
        gutter.push(Span::raw(pad.clone()));
        let inner = self
            .width
            .saturating_sub(crate::wrap::spans_width(&gutter))
            .max(1);
        let mut highlighter = crate::highlight::Highlighter::for_language(lang);
        // A fence just opened has no line yet (not one empty line): its rows
        // stay a prefix of the rows it will have.
        let lines = if body.is_empty() {
            None
        } else {
            Some(body.split('\n'))
        };
        for line in lines.into_iter().flatten() {
            let line = line.replace('\t', "    ");
            let spans = match &mut highlighter {
                Some(h) => h.line(&line),
                None => vec![Span::styled(line, style::code())],
            };
            for row in wrap_spans(&spans, inner) {
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
                let span = Span::styled(t.to_string(), style::code());
                match self.table_cell() {
                    Some(cell) => cell.push(span),
                    None => self.inline.push(span),
                }
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => self.text(t.trim_end_matches('\n')),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            // A line break in the source stays one: models break lines on
            // purpose, and a streamed line is final once its newline came
            // (the renderer is then prefix-stable line by line).
            Event::SoftBreak => self.flush_inline(),
            Event::HardBreak => self.flush_inline(),
            Event::Rule => {
                self.flush_inline();
                self.blank_if_needed();
                let w = self.width.min(40);
                self.out
                    .push(Line::from(Span::styled("─".repeat(w), style::dim())));
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let (mark, st) = if done {
                    ("☑ ", style::ok())
                } else {
                    ("☐ ", style::dim())
                };
                self.inline.push(Span::styled(mark, st));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if self.item_marker.is_none() => self.blank_if_needed(),
            Tag::Heading { level, .. } => {
                self.blank_if_needed();
                self.heading = Some(level);
                // Styled by level, without the `#` marks of the source.
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
            Tag::Table(_) => {
                self.flush_inline();
                self.blank_if_needed();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(Vec::new());
                }
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
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.layout_table(table);
                }
                self.need_blank = true;
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
        table: None,
    };
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_TABLES;
    for ev in Parser::new_ext(source, opts) {
        r.event(ev);
    }
    // Partial input can end inside an open construct.
    if let Some(table) = r.table.take() {
        r.layout_table(table);
    }
    if let Some((lang, body)) = r.code.take() {
        r.code_block(&lang, &body);
    }
    r.flush_inline();
    r.out
}

/// Where a streaming answer can be cut so the part before it is final: the
/// end of the last blank line that is outside a code fence. Everything
/// before the cut renders the same whatever arrives later.
pub(crate) fn stable_prefix(text: &str) -> usize {
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
                "Title",
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
        // No gutter: the code copies as it is.
        assert_eq!(plain(&lines), vec!["┌ rust", "fn main() {}"]);
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
