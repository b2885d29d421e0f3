//! Writing back what the user accepted of a worktree's changes: text
//! through North's atomic edit apply (every file or none, refused if the
//! main tree changed since the review), then binary files and deletions,
//! each checked against the version the user reviewed.

use std::path::Path;

use north_tools::Sandbox;
use north_tools::edit::{FileChange, Proposal, content_hash};

use crate::changes::{Change, ChangeKind};
use crate::error::{WorktreeError, io};
use crate::record::{MergedFile, Registry, Worktree};

/// What [`apply`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Files written (created or changed).
    pub written: Vec<String>,
    /// Files deleted.
    pub deleted: Vec<String>,
    /// Accepted changes that were not written, with why.
    pub skipped: Vec<(String, String)>,
}

/// The text changes of `changes` as one edit proposal against the main
/// tree (what a session's diff review shows), and the changes a proposal
/// cannot carry (deletions, binary files, unresolvable conflicts).
pub fn as_proposal(changes: &[Change]) -> (Proposal, Vec<&Change>) {
    let mut files = Vec::new();
    let mut rest = Vec::new();
    for c in changes {
        match (&c.new, c.is_text()) {
            (Some(new), true) => {
                let old = c
                    .main
                    .as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned());
                files.push(FileChange::new(
                    c.path.clone(),
                    c.main.as_deref().map(content_hash),
                    old.as_deref(),
                    String::from_utf8_lossy(new).into_owned(),
                    1,
                ));
            }
            _ => rest.push(c),
        }
    }
    let n = files.len();
    (Proposal::new(files, n, true), rest)
}

/// Writes the `accepted` changes of `wt` into its repository's main tree
/// and notes the merge in `registry`.
pub fn apply(
    wt: &Worktree,
    accepted: &[Change],
    registry: &Registry,
) -> Result<Applied, WorktreeError> {
    let sandbox = Sandbox::new(&wt.repo)?;
    let mut applied = Applied::default();
    let writable: Vec<Change> = accepted
        .iter()
        .filter(|c| {
            let ok = c.kind.writable();
            if !ok {
                applied
                    .skipped
                    .push((c.path.clone(), c.kind.label().to_string()));
            }
            ok
        })
        .cloned()
        .collect();
    let (proposal, rest) = as_proposal(&writable);
    if !proposal.files.is_empty() {
        north_tools::edit::apply(&proposal, &sandbox)?;
        applied
            .written
            .extend(proposal.files.iter().map(|f| f.path.clone()));
    }
    for c in rest {
        let target = sandbox.resolve_for_write(&c.path)?.abs;
        if !unchanged_since_review(&target, c.main.as_deref()) {
            applied.skipped.push((
                c.path.clone(),
                "changed in the main tree since the review".into(),
            ));
            continue;
        }
        match (&c.new, c.kind) {
            (None, ChangeKind::Delete) => {
                std::fs::remove_file(&target).map_err(io("delete", &target))?;
                applied.deleted.push(c.path.clone());
            }
            (Some(bytes), _) => {
                write_atomically(&target, bytes)?;
                applied.written.push(c.path.clone());
            }
            (None, _) => {}
        }
    }
    note_merged(wt, accepted, registry)?;
    Ok(applied)
}

/// Notes in `registry` what of `changes` reached the main tree (its file
/// no longer what the review saw), however it was written (here, or
/// through a session's own edit review, hunks refused or not), so the next
/// merge of each starts from the worktree's version of now.
pub fn note_merged(
    wt: &Worktree,
    changes: &[Change],
    registry: &Registry,
) -> Result<(), WorktreeError> {
    let mut merged = registry.at_path(&wt.path).unwrap_or_else(|| wt.clone());
    let git = crate::gitrun::Git::open(&wt.repo)?;
    for c in changes {
        let Some(theirs) = &c.theirs else { continue };
        let now = std::fs::read(wt.repo.join(&c.path)).ok();
        if now.is_none() || now == c.main {
            continue;
        }
        let file = MergedFile {
            main: content_hash(now.as_deref().unwrap_or_default()),
            theirs: git.store(&wt.repo, theirs)?,
        };
        merged.merged_files.insert(c.path.clone(), file);
    }
    merged.merged = Some(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    );
    registry.save(&merged)
}

/// Whether `path` still holds `reviewed` (None: absent).
fn unchanged_since_review(path: &Path, reviewed: Option<&[u8]>) -> bool {
    match (std::fs::symlink_metadata(path), reviewed) {
        (Err(_), None) => true,
        (Ok(m), Some(bytes)) if m.is_file() => std::fs::read(path).is_ok_and(|now| now == bytes),
        _ => false,
    }
}

/// Writes `bytes` to `path` through a temp file beside it and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WorktreeError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.north-merge-{:04x}",
        path.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        fastrand::u16(..)
    ));
    std::fs::write(&tmp, bytes).map_err(io("write", &tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io("write", path)(e)
    })?;
    Ok(())
}
