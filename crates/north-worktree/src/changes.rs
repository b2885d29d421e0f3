//! What a worktree changed since its base, file by file, set against the
//! main tree as it is now: the worktree's version where the main tree did
//! not move, git's three-way merge where both changed, and a conflict
//! (with git's markers, never resolved) where both changed the same lines.

use std::path::Path;

use crate::error::WorktreeError;
use crate::gitrun::Git;
use crate::record::Worktree;

/// How one file of a worktree comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// New in the worktree, absent from the main tree.
    Add,
    /// Changed in the worktree; the main tree still has the base version.
    Modify,
    /// Changed on both sides in different places: git's merge of the two.
    Merged,
    /// Changed on both sides in the same places: the merge with conflict
    /// markers, for the user to resolve.
    Conflict,
    /// Deleted in the worktree; the main tree still has the base version.
    Delete,
    /// Deleted in the worktree but changed in the main tree.
    DeleteConflict,
    /// Not text (or a link): shown, copied only where the main tree did
    /// not change it.
    Binary,
    /// Not text and changed on both sides: never written.
    BinaryConflict,
}

impl ChangeKind {
    /// Whether this change needs the user's resolution (accepting it
    /// writes conflict markers, or it cannot be written at all).
    pub fn is_conflict(self) -> bool {
        matches!(
            self,
            ChangeKind::Conflict | ChangeKind::DeleteConflict | ChangeKind::BinaryConflict
        )
    }

    /// Whether accepting it writes anything.
    pub fn writable(self) -> bool {
        !matches!(
            self,
            ChangeKind::DeleteConflict | ChangeKind::BinaryConflict
        )
    }

    /// The word a review shows.
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Add => "added",
            ChangeKind::Modify => "modified",
            ChangeKind::Merged => "merged with the main tree's changes",
            ChangeKind::Conflict => "CONFLICT (both changed these lines)",
            ChangeKind::Delete => "deleted",
            ChangeKind::DeleteConflict => "CONFLICT (deleted here, changed in the main tree)",
            ChangeKind::Binary => "binary",
            ChangeKind::BinaryConflict => "CONFLICT (binary, changed on both sides)",
        }
    }
}

/// One file a worktree changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Path relative to the repository's top, `/`-separated.
    pub path: String,
    /// How it comes back.
    pub kind: ChangeKind,
    /// The main tree's content now (None: absent).
    pub main: Option<Vec<u8>>,
    /// What the main tree would hold (None: the file goes).
    pub new: Option<Vec<u8>>,
    /// The worktree's version (None: deleted there).
    pub theirs: Option<Vec<u8>>,
    /// Conflicting regions in `new`.
    pub conflicts: usize,
}

impl Change {
    /// Whether both versions are text (a diff can show them).
    pub fn is_text(&self) -> bool {
        [&self.main, &self.new]
            .into_iter()
            .flatten()
            .all(|b| is_text(b))
    }

    /// The unified diff of the main tree's version to the new one.
    pub fn diff(&self) -> String {
        if !self.is_text() {
            return format!("Binary file {} differs\n", self.path);
        }
        let text =
            |b: &Option<Vec<u8>>| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
        north_tools::edit::text_diff(
            &self.path,
            text(&self.main).as_deref(),
            text(&self.new).as_deref(),
        )
    }
}

/// What is left of `wt` to merge, in a few words (`clean`, `2 change(s)
/// to merge, 1 in conflict`, `missing`): what `north worktree list` and
/// `/worktree` show.
pub fn state(wt: &Worktree) -> String {
    if !wt.path.is_dir() {
        return "missing".into();
    }
    match changes(wt) {
        Ok(c) if c.is_empty() => "clean".into(),
        Ok(c) => match c.iter().filter(|c| c.kind.is_conflict()).count() {
            0 => format!("{} change(s) to merge", c.len()),
            n => format!("{} change(s) to merge, {n} in conflict", c.len()),
        },
        Err(e) => format!("unreadable: {e}"),
    }
}

/// Whether `bytes` is text North can diff and edit.
pub(crate) fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// Whether a component of `rel` under `root` (the file itself included)
/// is a link.
pub(crate) fn through_link(root: &Path, rel: &str) -> bool {
    let mut at = root.to_path_buf();
    rel.split('/').filter(|c| !c.is_empty()).any(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// What a file under `root` holds, links never followed: `Err(())` for a
/// link or something not a file, `Ok(None)` when absent.
fn read(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, ()> {
    if through_link(root, rel) {
        return Err(());
    }
    let path = root.join(rel);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => std::fs::read(&path).map(Some).map_err(|_| ()),
        Ok(_) => Err(()),
        Err(_) => Ok(None),
    }
}

/// The paths a worktree changed since its base: tracked changes
/// (committed or not) and untracked files git does not ignore.
fn changed_paths(git: &Git, wt: &Worktree) -> Result<Vec<String>, WorktreeError> {
    let index = wt.admin.join("index");
    let diff = git.in_tree(
        "diff",
        &wt.path,
        &index,
        // Never into a nested repository a command made: git would run
        // its config, outside the sandbox.
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--ignore-submodules=all",
            &wt.base,
            "--",
        ],
    )?;
    let others = git.in_tree(
        "ls-files",
        &wt.path,
        &index,
        &["ls-files", "-z", "--others", "--exclude-standard"],
    )?;
    let mut paths: Vec<String> = diff
        .split(|b| *b == 0)
        .chain(others.split(|b| *b == 0))
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !p.starts_with(north_tools::repo::STATE_DIR) && p != ".git")
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// What `wt` changed, set against its repository's main tree now. Files
/// whose main-tree version already equals the worktree's are left out.
pub fn changes(wt: &Worktree) -> Result<Vec<Change>, WorktreeError> {
    let git = Git::open(&wt.repo)?;
    let mut out = Vec::new();
    for path in changed_paths(&git, wt)? {
        let base = git.blob(&wt.repo, &wt.base, &path);
        let theirs = read(&wt.path, &path);
        let main = read(&wt.repo, &path);
        let (Ok(theirs), Ok(main)) = (theirs, main) else {
            // A link or a directory on either side: shown, never written.
            out.push(Change {
                kind: ChangeKind::BinaryConflict,
                main: None,
                new: None,
                theirs: None,
                conflicts: 1,
                path,
            });
            continue;
        };
        if main == theirs {
            continue;
        }
        out.extend(classify(&git, wt, path, base, main, theirs)?);
    }
    Ok(out)
}

/// One file's change, given its base, main-tree and worktree versions.
fn classify(
    git: &Git,
    wt: &Worktree,
    path: String,
    base: Option<Vec<u8>>,
    main: Option<Vec<u8>>,
    theirs: Option<Vec<u8>>,
) -> Result<Option<Change>, WorktreeError> {
    // Once a merge of this file was accepted, the worktree's version of
    // then is what both sides changed from (as after a merge commit): what
    // was merged, or resolved by hand since, does not come back.
    let base = match wt.merged_files.get(&path) {
        Some(m) => git.blob(&wt.repo, &m.theirs, "").or(base),
        None => base,
    };
    let untouched = main == base;
    let text = [&base, &main, &theirs]
        .into_iter()
        .flatten()
        .all(|b| is_text(b));
    let change = |kind, new, conflicts| Change {
        path: path.clone(),
        kind,
        main: main.clone(),
        new,
        theirs: theirs.clone(),
        conflicts,
    };
    Ok(Some(match (&theirs, untouched) {
        (None, true) => change(ChangeKind::Delete, None, 0),
        (None, false) => change(ChangeKind::DeleteConflict, None, 1),
        (Some(_), true) if !text => change(ChangeKind::Binary, theirs.clone(), 0),
        (Some(_), false) if !text => change(ChangeKind::BinaryConflict, None, 1),
        (Some(_), true) if main.is_none() => change(ChangeKind::Add, theirs.clone(), 0),
        (Some(_), true) => change(ChangeKind::Modify, theirs.clone(), 0),
        (Some(t), false) => {
            let ours = main.as_deref().unwrap_or_default();
            let label = format!("worktree {}", wt.name);
            let (merged, conflicts) = git.merge_file(
                ("main tree", ours),
                base.as_deref().unwrap_or_default(),
                (&label, t),
            )?;
            // The main tree already holds everything the worktree did.
            if Some(&merged) == main.as_ref() {
                return Ok(None);
            }
            let kind = if conflicts == 0 {
                ChangeKind::Merged
            } else {
                ChangeKind::Conflict
            };
            change(kind, Some(merged), conflicts)
        }
    }))
}
