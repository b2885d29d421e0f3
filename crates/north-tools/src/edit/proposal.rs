//! Proposals: what a set of edits would do, for review before anything is written.

use std::collections::BTreeMap;
use std::time::Duration;

use north_protocol::FileDiff;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

/// Longest diff (in characters) sent to the model per file; the full diff
/// stays in the proposal for the user's review.
const MODEL_DIFF_CHARS: usize = 12_000;
/// Diffing gives up refining after this long on pathological inputs.
pub(super) const DIFF_TIMEOUT: Duration = Duration::from_secs(5);
/// Lines of context around each hunk of a diff.
pub(super) const DIFF_CONTEXT: usize = 3;

/// One file's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// sha256 of the file when the proposal was made; `None` if it did not exist.
    /// Apply refuses the whole proposal if the file no longer matches.
    pub base: Option<String>,
    /// The file's full new content.
    pub new_content: String,
    /// Unified diff from the old content (`/dev/null` for a new file).
    pub diff: String,
    /// Lines added.
    pub lines_added: usize,
    /// Lines removed.
    pub lines_removed: usize,
    /// How many edits of the batch touched this file.
    pub edits: usize,
}

impl FileChange {
    /// Builds a change and its diff.
    pub fn new(
        path: String,
        base: Option<String>,
        old: Option<&str>,
        new: String,
        edits: usize,
    ) -> Self {
        let (diff, lines_added, lines_removed) = unified_diff(&path, old, &new);
        FileChange {
            path,
            base,
            new_content: new,
            diff,
            lines_added,
            lines_removed,
            edits,
        }
    }

    /// Whether the file is new.
    pub fn creates(&self) -> bool {
        self.base.is_none()
    }
}

/// Totals over a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Files changed.
    pub files: usize,
    /// Files created.
    pub files_created: usize,
    /// Edits in the request.
    pub edits: usize,
    /// Lines added over all files.
    pub lines_added: usize,
    /// Lines removed over all files.
    pub lines_removed: usize,
}

/// What a write tool would do: the new content of each file, pinned to the
/// content it was computed from, with diffs for review. Serializable so an
/// agent can keep it in a session until the user decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    /// Changed files in the order the edits first touched them.
    pub files: Vec<FileChange>,
    /// Totals.
    pub stats: Stats,
    /// Whether it came from a batch (`diffsByFile`) or a single edit (`diff`).
    pub batch: bool,
}

impl Proposal {
    /// A proposal over `files` made from `edits` edits.
    pub fn new(files: Vec<FileChange>, edits: usize, batch: bool) -> Self {
        let stats = Stats {
            files: files.len(),
            files_created: files.iter().filter(|f| f.creates()).count(),
            edits,
            lines_added: files.iter().map(|f| f.lines_added).sum(),
            lines_removed: files.iter().map(|f| f.lines_removed).sum(),
        };
        Proposal {
            files,
            stats,
            batch,
        }
    }

    /// The files as a reviewer sees them (diff and counts, no content).
    pub fn file_diffs(&self) -> Vec<FileDiff> {
        self.files
            .iter()
            .map(|f| FileDiff {
                path: f.path.clone(),
                diff: f.diff.clone(),
                added: f.lines_added,
                removed: f.lines_removed,
                created: f.creates(),
                diagnostics: None,
            })
            .collect()
    }

    /// The whole diff, file after file, as a user reviews it.
    pub fn full_diff(&self) -> String {
        self.files.iter().map(|f| f.diff.as_str()).collect()
    }

    /// What the model sees: `{diff, canApply, stats}` for a single edit,
    /// `{diffsByFile, canApply, stats}` for a batch; long diffs are cut.
    pub fn to_model_json(&self) -> Value {
        let stats = serde_json::to_value(self.stats).unwrap_or(Value::Null);
        if self.batch {
            let by_file: BTreeMap<&str, String> = self
                .files
                .iter()
                .map(|f| (f.path.as_str(), cut_diff(&f.diff)))
                .collect();
            json!({ "diffsByFile": by_file, "canApply": true, "stats": stats })
        } else {
            let diff = self
                .files
                .first()
                .map(|f| cut_diff(&f.diff))
                .unwrap_or_default();
            json!({ "diff": diff, "canApply": true, "stats": stats })
        }
    }
}

fn cut_diff(diff: &str) -> String {
    if diff.len() <= MODEL_DIFF_CHARS {
        return diff.to_owned();
    }
    let mut end = MODEL_DIFF_CHARS;
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    let cut = match diff[..end].rfind('\n') {
        Some(i) => i + 1,
        None => end,
    };
    let omitted = diff[cut..].lines().count();
    format!("{}… [diff truncated: {omitted} more lines]\n", &diff[..cut])
}

/// A unified diff of `path` from `old` to `new` (None: the file is absent
/// on that side), for showing a user what changed.
pub fn text_diff(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    let (mut text, _, _) = unified_diff(path, old, new.unwrap_or(""));
    if new.is_none() {
        text = text.replacen(&format!("+++ b/{path}"), "+++ /dev/null", 1);
    }
    text
}

/// A unified diff with 3 lines of context, plus added and removed line counts.
fn unified_diff(path: &str, old: Option<&str>, new: &str) -> (String, usize, usize) {
    let old_text = old.unwrap_or("");
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old_text, new);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let from = match old {
        Some(_) => format!("a/{path}"),
        None => "/dev/null".to_owned(),
    };
    let to = format!("b/{path}");
    let mut text = diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .header(&from, &to)
        .to_string();
    if text.is_empty() {
        // An empty new file has no hunks; still show that it appears.
        text = format!("--- {from}\n+++ {to}\n");
    }
    (text, added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_diffs_are_cut_for_the_model() {
        let diff: String = (0..5000).map(|i| format!("+line {i}\n")).collect();
        let cut = cut_diff(&diff);
        assert!(cut.len() < MODEL_DIFF_CHARS + 100);
        assert!(cut.contains("more lines]"));
    }
}
