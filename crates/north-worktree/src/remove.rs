//! Removing a worktree North made: its directory (links inside are removed
//! as links, never followed), its bookkeeping in `.git/worktrees`, its
//! branch, and North's record — refused while it holds work that did not
//! come back, unless the user says to discard it.

use std::path::{Path, PathBuf};

use crate::error::{WorktreeError, io};
use crate::record::{Registry, Worktree};

/// What [`remove`] took away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The worktree's directory.
    pub path: PathBuf,
    /// Its branch.
    pub branch: String,
}

/// Removes `wt`, which must be in `registry`. Without `force`, a worktree
/// whose changes are not all in the main tree is kept.
pub fn remove(wt: &Worktree, registry: &Registry, force: bool) -> Result<Removed, WorktreeError> {
    removable(wt, registry, force)?;
    delete_tree(&wt.path)?;
    delete_tree(&wt.admin)?;
    for dir in ["refs/heads", "logs/refs/heads"] {
        let file = wt.git_dir.join(dir).join(&wt.branch);
        if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&file).map_err(io("delete", &file))?;
        }
    }
    drop_packed_ref(&wt.git_dir, &format!("refs/heads/{}", wt.branch))?;
    registry.forget(wt)?;
    tracing::info!(name = %wt.name, "worktree removed");
    Ok(Removed {
        path: wt.path.clone(),
        branch: wt.branch.clone(),
    })
}

/// Whether `wt` may be removed: North's own, and (without `force`) with
/// nothing that did not come back — its changes, or, its directory gone,
/// commits on its branch since its base that were never merged.
pub fn removable(wt: &Worktree, registry: &Registry, force: bool) -> Result<(), WorktreeError> {
    if registry.at_path(&wt.path).as_ref() != Some(wt) {
        return Err(WorktreeError::NotOwned(wt.name.clone()));
    }
    if force {
        return Ok(());
    }
    let pending = if wt.path.is_dir() {
        crate::changes::changes(wt)?.len()
    } else {
        let git = crate::gitrun::Git::open(&wt.repo)?;
        let tip = git.commit(&wt.repo, &format!("refs/heads/{}", wt.branch));
        usize::from(tip.is_some_and(|t| t != wt.base) && wt.merged.is_none())
    };
    if pending > 0 {
        return Err(WorktreeError::Unmerged {
            name: wt.name.clone(),
            count: pending,
        });
    }
    Ok(())
}

/// Takes `name` out of the repository's `packed-refs` (git's maintenance
/// may have packed the branch), under git's own lock: the file is data,
/// so North edits it itself rather than run git with the repository's
/// configuration.
fn drop_packed_ref(git_dir: &Path, name: &str) -> Result<(), WorktreeError> {
    let packed = git_dir.join("packed-refs");
    let Ok(text) = std::fs::read_to_string(&packed) else {
        return Ok(());
    };
    let mut kept = String::new();
    let mut dropped = false;
    let mut skipping_peel = false;
    for line in text.lines() {
        if skipping_peel && line.starts_with('^') {
            continue;
        }
        skipping_peel = false;
        if line.split_once(' ').is_some_and(|(_, r)| r == name) {
            dropped = true;
            skipping_peel = true;
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    if !dropped {
        return Ok(());
    }
    let lock = git_dir.join("packed-refs.lock");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(io("lock", &lock))?;
    let written = std::io::Write::write_all(&mut file, kept.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&lock, &packed));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&lock);
        return Err(io("write", &packed)(e));
    }
    Ok(())
}

/// Deletes `path`: a link is removed as a link; a directory with
/// everything in it, links inside removed, never followed.
fn delete_tree(path: &Path) -> Result<(), WorktreeError> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).map_err(io("delete", path)),
        Ok(_) => std::fs::remove_file(path).map_err(io("delete", path)),
    }
}
