//! What a reviewer changed in a proposal before accepting it: hunks refused
//! ([`keep_hunks`]) or files edited by hand ([`with_contents`]).
//!
//! Per-hunk review: a proposal narrowed to the hunks the reviewer kept. A
//! hunk is one `@@` block of a file's diff, numbered from 0 in the order the
//! diff shows them — the grouping the unified diff itself uses (three lines
//! of context), so the numbers a reviewer saw are the numbers applied.

use std::collections::BTreeSet;

use north_protocol::HunkRef;
use similar::{DiffOp, DiffTag, TextDiff};

use super::content_hash;
use super::journal::ApplyError;
use super::proposal::{DIFF_CONTEXT, DIFF_TIMEOUT, FileChange, Proposal};
use crate::sandbox::Sandbox;

/// What is left of a proposal once `refused` hunks are taken out, and the
/// header of each refused hunk (`path @@ -10,3 +10,4 @@`) to tell the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Narrowed {
    /// The kept changes (files whose every hunk was refused are gone).
    pub proposal: Proposal,
    /// The refused hunks, as the diff named them.
    pub refused: Vec<String>,
}

/// `proposal` without the `refused` hunks, computed against the files as
/// they are (refused when one changed since the proposal: nothing was
/// reviewed against what is there now).
pub fn keep_hunks(
    proposal: &Proposal,
    sandbox: &Sandbox,
    refused: &[HunkRef],
) -> Result<Narrowed, ApplyError> {
    let mut files = Vec::new();
    let mut headers = Vec::new();
    for file in &proposal.files {
        let out: BTreeSet<usize> = refused
            .iter()
            .filter(|r| r.path == file.path)
            .map(|r| r.hunk)
            .collect();
        if out.is_empty() {
            files.push(file.clone());
            continue;
        }
        let old = current(sandbox, file)?;
        let (new, named) = without(old.as_deref().unwrap_or(""), &file.new_content, &out);
        headers.extend(named.into_iter().map(|h| format!("{} {h}", file.path)));
        if old.as_deref() == Some(new.as_str()) || (old.is_none() && new.is_empty()) {
            continue;
        }
        files.push(FileChange::new(
            file.path.clone(),
            file.base.clone(),
            old.as_deref(),
            new,
            file.edits,
        ));
    }
    Ok(Narrowed {
        proposal: Proposal::new(files, proposal.stats.edits, proposal.batch),
        refused: headers,
    })
}

/// A proposal as the reviewer edited it, and what they changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Edited {
    /// What is written.
    pub proposal: Proposal,
    /// For each file the reviewer changed, a diff from the proposed content
    /// to theirs (for the model).
    pub changes: Vec<String>,
}

/// `proposal` with each file in `edited` (path, content) written as the
/// reviewer saved it, against the files as they are (refused when one
/// changed since the proposal). A file saved back unchanged stays as
/// proposed; one saved as it was on disk drops out.
pub fn with_contents(
    proposal: &Proposal,
    sandbox: &Sandbox,
    edited: &[(String, String)],
) -> Result<Edited, ApplyError> {
    let mut files = Vec::new();
    let mut changes = Vec::new();
    for file in &proposal.files {
        let Some((_, theirs)) = edited
            .iter()
            .find(|(p, c)| *p == file.path && *c != file.new_content)
        else {
            files.push(file.clone());
            continue;
        };
        let old = current(sandbox, file)?;
        changes.push(super::text_diff(
            &file.path,
            Some(&file.new_content),
            Some(theirs),
        ));
        if old.as_deref() == Some(theirs.as_str()) {
            continue;
        }
        files.push(FileChange::new(
            file.path.clone(),
            file.base.clone(),
            old.as_deref(),
            theirs.clone(),
            file.edits,
        ));
    }
    Ok(Edited {
        proposal: Proposal::new(files, proposal.stats.edits, proposal.batch),
        changes,
    })
}

/// The file's content now, checked against the proposal's base.
fn current(sandbox: &Sandbox, file: &FileChange) -> Result<Option<String>, ApplyError> {
    let stale = || ApplyError::Stale {
        path: file.path.clone(),
    };
    let Some(base) = &file.base else {
        return Ok(None);
    };
    let resolved = sandbox.resolve_for_write(&file.path)?;
    let bytes = std::fs::read(&resolved.abs).map_err(|_| stale())?;
    if &content_hash(&bytes) != base {
        return Err(stale());
    }
    String::from_utf8(bytes).map(Some).map_err(|_| stale())
}

/// `new` with the hunks in `out` put back as they were in `old`, and the
/// `@@` header of each hunk put back.
fn without(old: &str, new: &str, out: &BTreeSet<usize>) -> (String, Vec<String>) {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let groups = diff.grouped_ops(DIFF_CONTEXT);
    // Each change belongs to the hunk whose group holds it.
    let hunk_of = |op: &DiffOp| {
        groups.iter().position(|g| {
            g.iter().any(|o| {
                o.tag() != DiffTag::Equal
                    && o.old_range() == op.old_range()
                    && o.new_range() == op.new_range()
            })
        })
    };
    let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
    let mut text = String::new();
    for op in diff.ops() {
        let keep_old = op.tag() == DiffTag::Equal || hunk_of(op).is_some_and(|h| out.contains(&h));
        let lines = if keep_old {
            &old_lines[op.old_range()]
        } else {
            &new_lines[op.new_range()]
        };
        for line in lines {
            text.push_str(line);
        }
    }
    let named = diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .iter_hunks()
        .enumerate()
        .filter(|(i, _)| out.contains(i))
        .map(|(_, h)| h.header().to_string())
        .collect();
    (text, named)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn refused_hunks_keep_their_old_lines_and_the_rest_is_new() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 3\n", "line three\n")
            .replace("line 25\n", "line twenty-five\n");
        let (kept, named) = without(&old, &new, &BTreeSet::from([1]));
        assert!(
            kept.contains("line three\n") && kept.contains("line 25\n"),
            "{kept}"
        );
        assert_eq!(named, vec!["@@ -22,7 +22,7 @@".to_string()]);
        let (kept, _) = without(&old, &new, &BTreeSet::from([0]));
        assert!(kept.contains("line 3\n") && kept.contains("line twenty-five\n"));
        let (kept, _) = without(&old, &new, &BTreeSet::from([0, 1]));
        assert_eq!(kept, old);
    }
}
