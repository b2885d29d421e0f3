//! Diffs for review: one file after another, each with a header naming the
//! file and its line counts, hunks coloured line by line.

use north_protocol::FileDiff;
use ratatui::text::{Line, Span};

use crate::style;
use crate::wrap::wrap_spans;

/// Splits unified diff text (as in the `diff` event) into files.
pub(crate) fn parse_unified(text: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if let Some(from) = line.strip_prefix("--- ")
            && let Some(to) = lines.peek().and_then(|l| l.strip_prefix("+++ "))
        {
            let path = to.trim_end().trim_start_matches("b/").to_string();
            let created = from.trim_end() == "/dev/null";
            let mut diff = line.to_string();
            if let Some(next) = lines.next() {
                diff.push_str(next);
            }
            files.push(FileDiff {
                path,
                diff,
                added: 0,
                removed: 0,
                created,
            });
            continue;
        }
        if let Some(f) = files.last_mut() {
            if line.starts_with('+') {
                f.added += 1;
            } else if line.starts_with('-') {
                f.removed += 1;
            }
            f.diff.push_str(line);
        }
    }
    files
}

/// `+3 −1` style counts.
pub fn counts(added: usize, removed: usize) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("+{added}"), style::added()),
        Span::raw(" "),
        Span::styled(format!("−{removed}"), style::removed()),
    ]
}

/// Header line of one file.
pub(crate) fn file_header(f: &FileDiff) -> Line<'static> {
    let mut spans = vec![
        Span::styled("▌ ", style::dim()),
        Span::styled(f.path.clone(), style::file()),
        Span::raw("  "),
    ];
    spans.extend(counts(f.added, f.removed));
    if f.created {
        spans.push(Span::styled("  (new file)", style::notice()));
    }
    Line::from(spans)
}

/// All files as coloured lines at `width`, headers included; the `---` and
/// `+++` lines are replaced by the file header.
pub fn render(files: &[FileDiff], width: u16) -> Vec<Line<'static>> {
    render_review(files, width, None, &std::collections::BTreeSet::new()).0
}

/// As [`render`], for a per-hunk review: the hunk under the cursor
/// (`current`, counting every file's hunks in order) is marked, refused
/// ones are marked and dimmed. Also returns the row of each hunk's header.
pub(crate) fn render_review(
    files: &[FileDiff],
    width: u16,
    current: Option<usize>,
    refused: &std::collections::BTreeSet<usize>,
) -> (Vec<Line<'static>>, Vec<usize>) {
    let width = usize::from(width).max(8);
    let mut out = Vec::new();
    let mut headers = Vec::new();
    let mut hunk: Option<usize> = None;
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            out.push(Line::default());
        }
        out.push(file_header(f));
        for line in f.diff.lines() {
            if line.starts_with("--- ") || line.starts_with("+++ ") {
                continue;
            }
            let mut text = line.replace('\t', "    ");
            if line.starts_with("@@") {
                let h = hunk.map_or(0, |h| h + 1);
                hunk = Some(h);
                headers.push(out.len());
                if current == Some(h) {
                    text = format!("▶ {text}");
                }
                if refused.contains(&h) {
                    text.push_str("  ✗ refused");
                }
            }
            let out_of_it = hunk.is_some_and(|h| refused.contains(&h));
            let st = if out_of_it {
                style::dim()
            } else if line.starts_with("@@") {
                style::hunk()
            } else if line.starts_with('+') {
                style::added()
            } else if line.starts_with('-') {
                style::removed()
            } else if line.starts_with('\\') {
                style::dim()
            } else {
                ratatui::style::Style::new()
            };
            for row in wrap_spans(&[Span::styled(text, st)], width) {
                out.push(Line::from(row));
            }
        }
    }
    (out, headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_text_splits_into_files_with_counts() {
        let text = "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-old\n+new\n--- /dev/null\n+++ b/y.rs\n@@ -0,0 +1 @@\n+hi\n";
        let files = parse_unified(text);
        assert_eq!(files.len(), 2);
        assert_eq!(
            (files[0].path.as_str(), files[0].added, files[0].removed),
            ("x.rs", 1, 1)
        );
        assert!(files[1].created);
        assert_eq!(files[1].path, "y.rs");
    }
}
