//! Word wrapping of styled lines to an exact width.
//!
//! Transcript items are wrapped here rather than by a widget because lines
//! printed above the live area must have a known height before they are
//! written into the terminal's scrollback.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Display width of a string in terminal cells.
pub fn width(s: &str) -> usize {
    char_widths(s).map(|(_, w)| w).sum()
}

/// Each character of `s` with the cells it takes: a character followed by
/// VS16 (U+FE0F, emoji presentation: `⚠️`) takes two, as terminals and
/// ratatui draw it; the selector itself takes none.
fn char_widths(s: &str) -> impl Iterator<Item = (char, usize)> + '_ {
    let mut chars = s.chars().peekable();
    std::iter::from_fn(move || {
        let c = chars.next()?;
        let mut w = c.width().unwrap_or(0);
        if w == 1 && chars.peek() == Some(&'\u{FE0F}') {
            w = 2;
        }
        Some((c, w))
    })
}

/// Display width of a sequence of spans.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

fn to_spans(cells: &[(char, Style, usize)]) -> Vec<Span<'static>> {
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style: Option<Style> = None;
    for &(c, s, _) in cells {
        if style != Some(s) {
            if let Some(prev) = style
                && !text.is_empty()
            {
                out.push(Span::styled(std::mem::take(&mut text), prev));
            }
            style = Some(s);
        }
        text.push(c);
    }
    if let Some(s) = style
        && !text.is_empty()
    {
        out.push(Span::styled(text, s));
    }
    out
}

/// Breaks `spans` (one logical line, no newlines) into rows of at most
/// `width` cells, at spaces where possible and inside a word only when the
/// word alone is wider than a row — but never inside a web address: one
/// wider than a row is a row of its own, wider than `width`.
pub(crate) fn wrap_spans(spans: &[Span<'_>], width: usize) -> Vec<Vec<Span<'static>>> {
    let width = width.max(1);
    let mut rows: Vec<Vec<(char, Style, usize)>> = Vec::new();
    let mut cur: Vec<(char, Style, usize)> = Vec::new();
    let mut cur_w = 0usize;
    for span in spans {
        for (c, w) in char_widths(&span.content) {
            let (c, w) = if c == '\t' { (' ', 1) } else { (c, w) };
            if cur_w + w > width && !cur.is_empty() {
                if c == ' ' {
                    // A space at the break point is swallowed by the break.
                    rows.push(std::mem::take(&mut cur));
                    cur_w = 0;
                    continue;
                }
                // A web address that starts the row is kept whole, wider
                // than the row: the terminal wraps it, so it stays one
                // line to select, to open and to find in scrollback.
                let word_start = cur
                    .iter()
                    .rposition(|(ch, _, _)| *ch == ' ')
                    .map_or(0, |sp| sp + 1);
                if cur[..word_start].iter().all(|(ch, _, _)| *ch == ' ') {
                    let word: String = cur[word_start..].iter().map(|(ch, _, _)| ch).collect();
                    if crate::links::starts_url(&word) {
                        cur.push((c, span.style, w));
                        cur_w += w;
                        continue;
                    }
                }
                match cur.iter().rposition(|(ch, _, _)| *ch == ' ') {
                    Some(sp) if sp > 0 => {
                        let rest = cur.split_off(sp + 1);
                        cur.pop();
                        rows.push(std::mem::replace(&mut cur, rest));
                    }
                    _ => rows.push(std::mem::take(&mut cur)),
                }
                cur_w = cur.iter().map(|(_, _, w)| w).sum();
            }
            cur.push((c, span.style, w));
            cur_w += w;
        }
    }
    rows.push(cur);
    rows.iter().map(|r| to_spans(r)).collect()
}

/// `line` cut into rows of `width` cells, for a view with no terminal to
/// wrap it (the transcript view): a web address [`wrap_spans`] kept whole
/// shows over the rows it needs.
pub(crate) fn cut_to_rows(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    if spans_width(&line.spans) <= width {
        return vec![line];
    }
    let mut rows = Vec::new();
    let mut cur: Vec<(char, Style, usize)> = Vec::new();
    let mut cur_w = 0;
    for span in &line.spans {
        for (c, w) in char_widths(&span.content) {
            if cur_w + w > width && !cur.is_empty() {
                rows.push(Line::from(to_spans(&std::mem::take(&mut cur))));
                cur_w = 0;
            }
            cur.push((c, line.style.patch(span.style), w));
            cur_w += w;
        }
    }
    if !cur.is_empty() {
        rows.push(Line::from(to_spans(&cur)));
    }
    rows
}

/// Wraps `content` to `width` with a prefix on the first row and another on
/// the following rows (a bullet and its hanging indent, a quote bar).
pub(crate) fn wrap_prefixed(
    content: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let prefix_w = spans_width(first).max(spans_width(rest));
    let inner = width.saturating_sub(prefix_w).max(1);
    wrap_spans(content, inner)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let mut spans: Vec<Span<'static>> = if i == 0 {
                first.to_vec()
            } else {
                rest.to_vec()
            };
            spans.extend(row);
            Line::from(spans)
        })
        .collect()
}

/// Wraps plain text with one style; newlines start new rows.
pub(crate) fn wrap_text(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    text.split('\n')
        .flat_map(|l| {
            wrap_spans(&[Span::styled(l.to_string(), style)], width)
                .into_iter()
                .map(Line::from)
        })
        .collect()
}

/// Cuts a string to `max` cells, ending with `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for (c, cw) in char_widths(s) {
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emoji_with_vs16_takes_two_cells_as_ratatui_draws_it() {
        use unicode_width::UnicodeWidthStr;
        for s in ["⚠️ risk", "ok ✔️", "⚠ plain", "✅ done"] {
            assert_eq!(width(s), UnicodeWidthStr::width(s), "{s}");
        }
        assert_eq!(width("⚠️"), 2);
        let rows = wrap_spans(&[Span::raw("⚠️⚠️⚠️")], 4);
        assert_eq!(rows.len(), 2, "two per row of four cells");
    }

    fn plain(rows: Vec<Vec<Span<'static>>>) -> Vec<String> {
        rows.into_iter()
            .map(|r| r.iter().map(|s| s.content.to_string()).collect())
            .collect()
    }

    #[test]
    fn wraps_at_spaces_and_splits_long_words() {
        let spans = [Span::raw("the quick brown fox jumps")];
        assert_eq!(
            plain(wrap_spans(&spans, 10)),
            vec!["the quick", "brown fox", "jumps"]
        );
        let spans = [Span::raw("abcdefghijkl mn")];
        assert_eq!(
            plain(wrap_spans(&spans, 5)),
            vec!["abcde", "fghij", "kl mn"]
        );
    }

    #[test]
    fn keeps_styles_across_breaks_and_counts_wide_characters() {
        let spans = [Span::raw("ab "), Span::styled("cd ef", Style::new().bold())];
        let rows = wrap_spans(&spans, 5);
        assert_eq!(plain(rows.clone()), vec!["ab cd", "ef"]);
        assert_eq!(rows[1][0].style, Style::new().bold());
        assert_eq!(
            plain(wrap_spans(&[Span::raw("日本語です")], 4)),
            vec!["日本", "語で", "す"]
        );
    }

    #[test]
    fn a_web_address_wider_than_a_row_is_never_broken() {
        let url = "https://example.com/a/very/long/path?with=query";
        let spans = [Span::raw(format!("see {url} and (also {url}) here"))];
        assert_eq!(
            plain(wrap_spans(&spans, 12)),
            vec![
                "see".to_string(),
                url.to_string(),
                "and (also".to_string(),
                format!("{url})"),
                "here".to_string()
            ]
        );
        // Other long words still break.
        assert_eq!(
            plain(wrap_spans(&[Span::raw("abcdefgh")], 4)),
            vec!["abcd", "efgh"]
        );
    }

    #[test]
    fn a_line_wider_than_the_view_is_cut_into_rows_keeping_styles() {
        let line = Line::from(vec![
            Span::raw("ab"),
            Span::styled("cdefg", Style::new().bold()),
        ]);
        let rows = cut_to_rows(line, 3);
        let text: Vec<String> = rows.iter().map(ToString::to_string).collect();
        assert_eq!(text, vec!["abc", "def", "g"]);
        assert_eq!(rows[2].spans[0].style, Style::new().bold());
    }

    #[test]
    fn empty_input_is_one_empty_row() {
        assert_eq!(plain(wrap_spans(&[], 10)), vec![""]);
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
