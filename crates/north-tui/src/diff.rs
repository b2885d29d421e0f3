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
                diagnostics: None,
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
        let (summary, mut placed) = problems(f);
        for row in summary {
            out.extend(wrap_spans(&row, width).into_iter().map(Line::from));
        }
        let mut new_line: u32 = 0;
        let mut in_hunk = false;
        for line in f.diff.lines() {
            // The file's own `---`/`+++` lines come before its first hunk;
            // inside one, such a line is content.
            in_hunk |= line.starts_with("@@");
            if !in_hunk && (line.starts_with("--- ") || line.starts_with("+++ ")) {
                continue;
            }
            new_line = next_new_line(line, new_line);
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
            // A problem the change brings in, under the line it is on.
            if line.starts_with('+') {
                placed.retain(|d| {
                    if d.line != new_line {
                        return true;
                    }
                    let row = problem_row("    ", d);
                    out.extend(wrap_spans(&row, width).into_iter().map(Line::from));
                    false
                });
            }
        }
    }
    (out, headers)
}

/// The new file's line number a diff line stands at (`+` and context
/// lines count; a hunk header restarts the count).
fn next_new_line(line: &str, current: u32) -> u32 {
    if let Some(rest) = line.strip_prefix("@@") {
        let start = rest
            .split_whitespace()
            .find_map(|w| w.strip_prefix('+'))
            .and_then(|w| w.split(',').next())
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(1);
        return start.saturating_sub(1);
    }
    if line.starts_with('-') || line.starts_with('\\') {
        current
    } else {
        current + 1
    }
}

/// One problem as a row: `✗ line 3: message`.
fn problem_row(indent: &str, d: &north_protocol::Diagnostic) -> Vec<Span<'static>> {
    let (mark, st) = match d.severity {
        north_protocol::Severity::Error => ("✗", style::error()),
        _ => ("⚠", style::notice()),
    };
    vec![
        Span::raw(indent.to_string()),
        Span::styled(format!("{mark} line {}: ", d.line), st),
        Span::styled(d.message.lines().next().unwrap_or_default().to_string(), st),
    ]
}

/// What a language server said of a file: the summary rows under its
/// header, and the problems to show under the lines they are on.
fn problems(f: &FileDiff) -> (Vec<Vec<Span<'static>>>, Vec<north_protocol::Diagnostic>) {
    let Some(d) = &f.diagnostics else {
        return (Vec::new(), Vec::new());
    };
    let mut rows = Vec::new();
    if !d.checked {
        let why = d.no_answer.as_deref().unwrap_or("no answer");
        rows.push(vec![Span::styled(
            format!("  ? {} language server: {why}", d.server),
            style::dim(),
        )]);
        return (rows, Vec::new());
    }
    let count =
        |sev: north_protocol::Severity| d.introduced.iter().filter(|x| x.severity == sev).count();
    let (errors, warnings) = (
        count(north_protocol::Severity::Error),
        count(north_protocol::Severity::Warning),
    );
    let mut said = Vec::new();
    match (errors, warnings) {
        (0, 0) => {}
        (e, 0) => said.push(format!("introduces {e} error(s)")),
        (0, w) => said.push(format!("introduces {w} warning(s)")),
        (e, w) => said.push(format!("introduces {e} error(s), {w} warning(s)")),
    }
    if !d.resolved.is_empty() {
        said.push(format!("resolves {}", d.resolved.len()));
    }
    let st = if errors > 0 {
        style::error()
    } else {
        style::ok()
    };
    if d.remaining > 0 {
        said.push(format!("{} already there", d.remaining));
    }
    let text = if errors == 0 && warnings == 0 && d.resolved.is_empty() {
        format!(
            "  ✓ {}: no new errors or warnings{}",
            d.server,
            if d.remaining > 0 {
                format!(" ({} already there)", d.remaining)
            } else {
                String::new()
            }
        )
    } else {
        let mark = match (errors, warnings) {
            (0, 0) => "✓",
            (0, _) => "⚠",
            _ => "✗",
        };
        format!("  {mark} {}: {}", d.server, said.join(", "))
    };
    rows.push(vec![Span::styled(text, st)]);
    for r in &d.resolved {
        let mut row = problem_row("    ", r);
        row[1] = Span::styled(format!("✓ resolved line {}: ", r.line), style::ok());
        rows.push(row);
    }
    // Those on lines the diff does not show are listed here.
    let shown = shown_lines(f);
    let (beside, here): (Vec<_>, Vec<_>) = d
        .introduced
        .iter()
        .cloned()
        .partition(|x| shown.contains(&x.line));
    rows.extend(here.iter().map(|x| problem_row("    ", x)));
    (rows, beside)
}

/// The new file's lines that appear as `+` lines in the diff.
fn shown_lines(f: &FileDiff) -> std::collections::BTreeSet<u32> {
    let mut n = 0;
    let mut out = std::collections::BTreeSet::new();
    let mut in_hunk = false;
    for line in f.diff.lines() {
        in_hunk |= line.starts_with("@@");
        if !in_hunk {
            continue;
        }
        n = next_new_line(line, n);
        if line.starts_with('+') {
            out.insert(n);
        }
    }
    out
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
