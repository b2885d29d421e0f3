//! The edit pipeline (spec §7): edits are validated against the current
//! files and turned into a [`Proposal`] (unified diffs by file, stats) without
//! writing anything; [`apply`] writes a reviewed proposal atomically across
//! all of its files, refusing files that changed since the proposal.

mod apply;
mod hunks;
mod journal;
mod lock;
mod ops;
mod proposal;
mod recover;

use std::collections::HashMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::repo::{self, MAX_TEXT_FILE_BYTES, RepoError};
use crate::sandbox::Sandbox;

pub use apply::{Applied, AppliedFile, apply};
pub use hunks::{Edited, Narrowed, keep_hunks, with_contents};
pub use journal::{ApplyError, Fate, Fates, RecoveryProblem};
pub use lock::{ApplyLock, LockError};
pub use ops::{
    EditProblem, Eol, LineHint, closest_lines, insert_at_line, line_count, replace_exact,
};
pub use proposal::{FileChange, Proposal, Stats, text_diff};
pub use recover::{Recovery, SettledApply, recover};

/// Arguments of `edit_replace_exact`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceExactArgs {
    /// File path relative to the project root.
    pub path: String,
    /// Exact text to replace, whitespace included.
    pub old: String,
    /// Replacement text.
    pub new: String,
    /// If set, `old` must occur exactly this many times; if left out, all occurrences are replaced.
    #[serde(rename = "expectedOccurrences", default)]
    pub expected_occurrences: Option<u64>,
}

/// Arguments of `edit_insert_at_line`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsertAtLineArgs {
    /// File path relative to the project root.
    pub path: String,
    /// 1-based line the content's first line becomes; line count + 1 appends.
    pub line: u64,
    /// Lines to insert.
    pub content: String,
}

/// Arguments of `edit_create_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateFileArgs {
    /// File path relative to the project root; missing directories are created.
    pub path: String,
    /// Full file content.
    pub content: String,
    /// Replace the file if it exists (default false).
    #[serde(default)]
    pub overwrite: bool,
}

/// The edit tools a batch may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum BatchTool {
    /// `edit_replace_exact`.
    #[serde(rename = "edit_replace_exact")]
    ReplaceExact,
    /// `edit_insert_at_line`.
    #[serde(rename = "edit_insert_at_line")]
    InsertAtLine,
    /// `edit_create_file`.
    #[serde(rename = "edit_create_file")]
    CreateFile,
}

impl JsonSchema for BatchTool {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BatchTool".into()
    }

    // A plain enum keeps the schema small (derived variants carry docs).
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["edit_replace_exact", "edit_insert_at_line", "edit_create_file"]
        })
    }
}

/// One edit of a batch, as the model sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchEdit {
    /// Which edit tool.
    #[serde(rename = "toolName")]
    pub tool_name: BatchTool,
    /// That tool's arguments object.
    pub args: Value,
}

/// Arguments of `edit_apply_batch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchArgs {
    /// Edits applied in order; edits to one file see the previous ones.
    pub edits: Vec<BatchEdit>,
}

/// One validated edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EditOp {
    /// Replace exact text.
    ReplaceExact(ReplaceExactArgs),
    /// Insert lines at a line.
    InsertAtLine(InsertAtLineArgs),
    /// Create (or overwrite) a file.
    CreateFile(CreateFileArgs),
}

impl EditOp {
    /// The tool name this edit belongs to.
    pub fn tool_name(&self) -> &'static str {
        match self {
            EditOp::ReplaceExact(_) => "edit_replace_exact",
            EditOp::InsertAtLine(_) => "edit_insert_at_line",
            EditOp::CreateFile(_) => "edit_create_file",
        }
    }

    /// The path the edit targets, as given.
    pub fn path(&self) -> &str {
        match self {
            EditOp::ReplaceExact(a) => &a.path,
            EditOp::InsertAtLine(a) => &a.path,
            EditOp::CreateFile(a) => &a.path,
        }
    }
}

/// Why one edit of a proposal failed, with hints for a retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditFailure {
    /// 1-based position of the edit in the batch (1 for single edits).
    pub edit: usize,
    /// The edit's tool.
    pub tool: String,
    /// The path as given.
    pub path: String,
    /// What went wrong, with structured hints.
    #[serde(flatten)]
    pub problem: EditProblem,
    /// The same as a sentence for the model.
    pub message: String,
}

impl EditFailure {
    fn new(edit: usize, op: &EditOp, problem: EditProblem) -> Self {
        let message = format!(
            "edit {edit} ({} on {}): {}",
            op.tool_name(),
            op.path(),
            problem.describe()
        );
        EditFailure {
            edit,
            tool: op.tool_name().to_owned(),
            path: op.path().to_owned(),
            problem,
            message,
        }
    }
}

/// The sha256 of file content, hex encoded: how a proposal pins the base it was made against.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A file as the proposal sees it while edits accumulate.
struct Work {
    rel: String,
    base: Option<String>,
    original: Option<String>,
    current: Option<String>,
    edits: usize,
    failed_at: Option<usize>,
}

/// Validates `ops` in order against the files under `sandbox` and returns the
/// proposal, or every failure found (later edits of a failed file are skipped).
/// Nothing is written.
pub fn propose(
    sandbox: &Sandbox,
    ops: &[EditOp],
    batch: bool,
) -> Result<Proposal, Vec<EditFailure>> {
    let mut files: Vec<Work> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut failures = Vec::new();

    for (i, op) in ops.iter().enumerate() {
        let n = i + 1;
        let resolved = match sandbox.resolve_for_write(op.path()) {
            Ok(r) => r,
            Err(e) => {
                let reason = e.to_string();
                failures.push(EditFailure::new(n, op, EditProblem::PathRefused { reason }));
                continue;
            }
        };
        let idx = match index.get(&resolved.abs) {
            Some(&idx) => idx,
            None => match load(&resolved.abs, &resolved.rel) {
                Ok(work) => {
                    files.push(work);
                    index.insert(resolved.abs.clone(), files.len() - 1);
                    files.len() - 1
                }
                Err(problem) => {
                    failures.push(EditFailure::new(n, op, problem));
                    continue;
                }
            },
        };
        let work = &mut files[idx];
        if let Some(after_edit) = work.failed_at {
            failures.push(EditFailure::new(n, op, EditProblem::Skipped { after_edit }));
            continue;
        }
        match apply_op(op, work.current.as_deref()) {
            Ok(text) => {
                work.current = Some(text);
                work.edits += 1;
            }
            Err(problem) => {
                work.failed_at = Some(n);
                failures.push(EditFailure::new(n, op, problem));
            }
        }
    }
    if !failures.is_empty() {
        return Err(failures);
    }
    let changes = files
        .into_iter()
        .filter_map(|w| {
            let new = w.current?;
            if w.original.as_deref() == Some(new.as_str()) {
                return None;
            }
            Some(FileChange::new(
                w.rel,
                w.base,
                w.original.as_deref(),
                new,
                w.edits,
            ))
        })
        .collect();
    Ok(Proposal::new(changes, ops.len(), batch))
}

fn apply_op(op: &EditOp, current: Option<&str>) -> Result<String, EditProblem> {
    match op {
        EditOp::ReplaceExact(a) => {
            let text = current.ok_or(EditProblem::FileNotFound)?;
            replace_exact(text, &a.old, &a.new, a.expected_occurrences).map(|(t, _)| t)
        }
        EditOp::InsertAtLine(a) => {
            let text = current.ok_or(EditProblem::FileNotFound)?;
            insert_at_line(text, a.line, &a.content)
        }
        EditOp::CreateFile(a) => match current {
            Some(_) if !a.overwrite => Err(EditProblem::FileExists),
            _ => Ok(a.content.clone()),
        },
    }
}

fn load(abs: &std::path::Path, rel: &str) -> Result<Work, EditProblem> {
    let not_editable = |e: RepoError| EditProblem::NotEditable {
        reason: e.to_string(),
    };
    let meta = match std::fs::metadata(abs) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Work {
                rel: rel.to_owned(),
                base: None,
                original: None,
                current: None,
                edits: 0,
                failed_at: None,
            });
        }
        Err(e) => return Err(not_editable(RepoError::io("read", rel, e))),
    };
    if !meta.is_file() {
        return Err(not_editable(RepoError::NotAFile(rel.to_owned())));
    }
    if meta.len() > MAX_TEXT_FILE_BYTES {
        return Err(not_editable(RepoError::TooLarge {
            path: rel.to_owned(),
            size: meta.len(),
            max: MAX_TEXT_FILE_BYTES,
        }));
    }
    let bytes = std::fs::read(abs).map_err(|e| not_editable(RepoError::io("read", rel, e)))?;
    let base = content_hash(&bytes);
    let text = repo::text_from_bytes(bytes, rel).map_err(not_editable)?;
    Ok(Work {
        rel: rel.to_owned(),
        base: Some(base),
        original: Some(text.clone()),
        current: Some(text),
        edits: 0,
        failed_at: None,
    })
}
