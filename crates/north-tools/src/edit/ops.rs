//! The pure text operations behind the edit tools, and the retry hints they
//! give when an edit does not fit the file.

use serde::{Deserialize, Serialize};

/// How many closest lines an anchor-not-found failure reports.
const MAX_HINTS: usize = 3;
/// How many occurrence lines a count mismatch reports.
const MAX_OCCURRENCE_LINES: usize = 20;
/// Longest line text quoted in a hint.
const HINT_TEXT_CHARS: usize = 160;

/// A line of the file quoted back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineHint {
    /// 1-based line number.
    pub line: usize,
    /// The line's text (shortened when long).
    pub text: String,
}

/// Why an edit could not be applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum EditProblem {
    /// `old` is empty.
    EmptyAnchor,
    /// `old` and `new` are the same text.
    NoChange,
    /// `old` does not occur; `closest` are the most similar lines.
    #[serde(rename_all = "camelCase")]
    AnchorNotFound {
        /// The line of `old` the hints were matched against.
        probe: String,
        /// The closest lines, best first.
        closest: Vec<LineHint>,
        /// Set when the file uses CRLF and the anchor does not fit because of it.
        line_endings: Option<String>,
    },
    /// `old` occurs a different number of times than `expectedOccurrences`.
    #[serde(rename_all = "camelCase")]
    OccurrenceMismatch {
        /// What the model expected.
        expected: u64,
        /// What the file has.
        found: usize,
        /// The 1-based lines where each occurrence starts.
        lines: Vec<usize>,
    },
    /// An insert line is outside `1..=lines+1`.
    #[serde(rename_all = "camelCase")]
    LineOutOfRange {
        /// The requested line.
        line: u64,
        /// The file's current line count (the last valid line is this + 1).
        line_count: usize,
    },
    /// Inserted content is empty.
    EmptyContent,
    /// The file to edit does not exist.
    FileNotFound,
    /// The file to create exists and `overwrite` is false.
    FileExists,
    /// The file cannot be edited as text (binary, not UTF-8, too large, a directory).
    NotEditable {
        /// Why.
        reason: String,
    },
    /// The path was refused by the sandbox.
    PathRefused {
        /// Why.
        reason: String,
    },
    /// Not tried: an earlier edit of the same file in this batch failed.
    #[serde(rename_all = "camelCase")]
    Skipped {
        /// The 1-based number of the failed edit.
        after_edit: usize,
    },
}

impl EditProblem {
    /// A one-paragraph explanation with the hints inline, for the model.
    pub fn describe(&self) -> String {
        match self {
            EditProblem::EmptyAnchor => "`old` is empty; give the exact text to replace".to_owned(),
            EditProblem::NoChange => {
                "`old` and `new` are identical; nothing would change".to_owned()
            }
            EditProblem::AnchorNotFound {
                probe,
                closest,
                line_endings,
            } => {
                let mut s = "`old` was not found (exact match, whitespace included)".to_owned();
                if let Some(note) = line_endings {
                    s.push_str(&format!("; {note}"));
                }
                if closest.is_empty() {
                    s.push_str(
                        "; no similar line found. Read the file and retry with its exact text",
                    );
                } else {
                    s.push_str(&format!(". Closest lines to {:?}:", shorten(probe)));
                    for hint in closest {
                        s.push_str(&format!("\n  {}: {}", hint.line, hint.text));
                    }
                    s.push_str("\nRead those lines and retry with their exact text");
                }
                s
            }
            EditProblem::OccurrenceMismatch {
                expected,
                found,
                lines,
            } => {
                let where_ = lines
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "`old` occurs {found} times, expectedOccurrences is {expected}; occurrences start at lines {where_}. Widen `old` to pick one, or set expectedOccurrences to {found}"
                )
            }
            EditProblem::LineOutOfRange { line, line_count } => format!(
                "line {line} is out of range: the file has {line_count} lines, so `line` must be 1..={} (1 inserts at the top, {} appends)",
                line_count + 1,
                line_count + 1
            ),
            EditProblem::EmptyContent => "`content` is empty; nothing to insert".to_owned(),
            EditProblem::FileNotFound => {
                "the file does not exist; create it with edit_create_file".to_owned()
            }
            EditProblem::FileExists => {
                "the file already exists; set overwrite to true to replace it, or edit it"
                    .to_owned()
            }
            EditProblem::NotEditable { reason } | EditProblem::PathRefused { reason } => {
                reason.clone()
            }
            EditProblem::Skipped { after_edit } => {
                format!("not tried because edit {after_edit} on the same file failed")
            }
        }
    }
}

/// The line ending a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    /// `\n`.
    Lf,
    /// `\r\n` (every line break in the file is CRLF).
    Crlf,
}

impl Eol {
    /// Detects CRLF when every `\n` in `text` is preceded by `\r`.
    pub fn of(text: &str) -> Eol {
        let lf = text.matches('\n').count();
        let crlf = text.matches("\r\n").count();
        if lf > 0 && lf == crlf {
            Eol::Crlf
        } else {
            Eol::Lf
        }
    }

    /// The line break itself.
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::Crlf => "\r\n",
        }
    }

    /// Text written by a model (LF) adapted to this file's line ending: in a
    /// CRLF file, text without any `\r` gets CRLF breaks. Text that already
    /// carries `\r` is taken exactly as given.
    pub(crate) fn adapt(self, text: &str) -> String {
        if self == Eol::Crlf && !text.contains('\r') {
            text.replace('\n', "\r\n")
        } else {
            text.to_owned()
        }
    }
}

/// Number of lines: a final line without a line break counts, an empty file has 0.
pub fn line_count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let breaks = text.matches('\n').count();
    if text.ends_with('\n') {
        breaks
    } else {
        breaks + 1
    }
}

/// Replaces `old` by `new` exactly. With `expected`, the number of
/// occurrences must match; without it every occurrence is replaced.
/// Returns the new text and the number of replacements.
pub fn replace_exact(
    text: &str,
    old: &str,
    new: &str,
    expected: Option<u64>,
) -> Result<(String, usize), EditProblem> {
    if old.is_empty() {
        return Err(EditProblem::EmptyAnchor);
    }
    let eol = Eol::of(text);
    let (old, new) = (eol.adapt(old), eol.adapt(new));
    if old == new {
        return Err(EditProblem::NoChange);
    }
    let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    if starts.is_empty() {
        return Err(not_found(text, &old));
    }
    if let Some(expected) = expected
        && expected != starts.len() as u64
    {
        return Err(EditProblem::OccurrenceMismatch {
            expected,
            found: starts.len(),
            lines: line_numbers(text, &starts),
        });
    }
    Ok((text.replace(old.as_str(), &new), starts.len()))
}

/// Inserts `content` so that its first line becomes line `line` (1-based);
/// `line_count + 1` appends. Content is completed to whole lines; a file
/// without a final line break keeps that style.
pub fn insert_at_line(text: &str, line: u64, content: &str) -> Result<String, EditProblem> {
    if content.is_empty() {
        return Err(EditProblem::EmptyContent);
    }
    let count = line_count(text);
    if line == 0 || line > count as u64 + 1 {
        return Err(EditProblem::LineOutOfRange {
            line,
            line_count: count,
        });
    }
    let eol = Eol::of(text);
    let mut block = eol.adapt(content);
    if !block.ends_with('\n') {
        block.push_str(eol.as_str());
    }
    let line = line as usize;
    if line == count + 1 {
        let mut out = text.to_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            // Close the old last line; the new last line stays unterminated.
            out.push_str(eol.as_str());
            let trimmed = block.strip_suffix(eol.as_str()).unwrap_or(&block);
            out.push_str(trimmed);
        } else {
            out.push_str(&block);
        }
        return Ok(out);
    }
    let offset = line_start(text, line);
    let mut out = String::with_capacity(text.len() + block.len());
    out.push_str(&text[..offset]);
    out.push_str(&block);
    out.push_str(&text[offset..]);
    Ok(out)
}

/// Byte offset where 1-based line `line` starts (must be within the file).
fn line_start(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map(|(i, _)| i + 1)
        .unwrap_or(text.len())
}

/// 1-based line numbers of byte offsets (sorted ascending).
fn line_numbers(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut pos = 0;
    for &start in starts.iter().take(MAX_OCCURRENCE_LINES) {
        line += text[pos..start].matches('\n').count();
        pos = start;
        out.push(line);
    }
    out
}

fn not_found(text: &str, old: &str) -> EditProblem {
    // The most distinctive line of the anchor finds the best neighbours.
    let probe = old
        .lines()
        .map(str::trim)
        .max_by_key(|l| l.len())
        .unwrap_or_default()
        .to_owned();
    let line_endings = if Eol::of(text) == Eol::Crlf && old.contains('\n') && !old.contains("\r\n")
    {
        Some("the file uses CRLF line endings and `old` mixes them".to_owned())
    } else if Eol::of(text) == Eol::Lf && old.contains('\r') {
        Some("`old` contains `\\r` but the file uses LF line endings".to_owned())
    } else {
        None
    };
    EditProblem::AnchorNotFound {
        closest: closest_lines(text, &probe),
        probe,
        line_endings,
    }
}

/// The lines of `text` most similar to `probe`, best first.
pub fn closest_lines(text: &str, probe: &str) -> Vec<LineHint> {
    if probe.is_empty() {
        return Vec::new();
    }
    let probe_grams = bigrams(probe);
    let mut scored: Vec<(f64, usize, &str)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                return None;
            }
            let score = if trimmed == probe {
                1.0
            } else {
                dice(&probe_grams, &bigrams(trimmed))
            };
            (score >= 0.5).then_some((score, i + 1, line))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_HINTS)
        .map(|(_, line, text)| LineHint {
            line,
            text: shorten(text.trim_end_matches('\r')),
        })
        .collect()
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    let mut grams: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    grams.sort_unstable();
    grams
}

/// Sørensen–Dice coefficient over sorted bigram multisets.
fn dice(a: &[(char, char)], b: &[(char, char)]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= HINT_TEXT_CHARS {
        return s.to_owned();
    }
    let cut: String = s.chars().take(HINT_TEXT_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn line_counts() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("a\n\n"), 2);
    }

    #[test]
    fn insert_positions() {
        let t = "a\nb\n";
        assert_eq!(insert_at_line(t, 1, "x").unwrap(), "x\na\nb\n");
        assert_eq!(insert_at_line(t, 2, "x\n").unwrap(), "a\nx\nb\n");
        assert_eq!(insert_at_line(t, 3, "x").unwrap(), "a\nb\nx\n");
        assert!(matches!(
            insert_at_line(t, 0, "x"),
            Err(EditProblem::LineOutOfRange { .. })
        ));
        assert!(matches!(
            insert_at_line(t, 4, "x"),
            Err(EditProblem::LineOutOfRange { .. })
        ));
        assert_eq!(insert_at_line("a\nb", 3, "x").unwrap(), "a\nb\nx");
        assert_eq!(insert_at_line("", 1, "x").unwrap(), "x\n");
        assert_eq!(
            insert_at_line("a\r\nb\r\n", 2, "x\ny").unwrap(),
            "a\r\nx\r\ny\r\nb\r\n"
        );
    }

    #[test]
    fn replace_counts_and_hints() {
        assert_eq!(
            replace_exact("a b a", "a", "c", None).unwrap(),
            ("c b c".into(), 2)
        );
        let err = replace_exact("x\nfoo\nfoo\n", "foo", "bar", Some(1)).unwrap_err();
        assert_eq!(
            err,
            EditProblem::OccurrenceMismatch {
                expected: 1,
                found: 2,
                lines: vec![2, 3]
            }
        );
        let err =
            replace_exact("fn main() {\n    run(1);\n}\n", "  run(2);", "x", None).unwrap_err();
        match err {
            EditProblem::AnchorNotFound { closest, .. } => assert_eq!(closest[0].line, 2),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            replace_exact("a", "", "b", None),
            Err(EditProblem::EmptyAnchor)
        );
        assert_eq!(
            replace_exact("a\r\nb\r\n", "a\nb", "c\nd", None).unwrap().0,
            "c\r\nd\r\n"
        );
    }
}
