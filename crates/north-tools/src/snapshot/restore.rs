//! Comparing snapshots and putting paths back as a snapshot had them.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::{Entry, Manifest, SnapshotError, SnapshotStore};
use crate::repo::atomic::write_synced;
use crate::repo::{fsync_dir, temp_path_for};

/// The paths whose entries differ between `a` and `b` (present in only
/// one, or changed in content, mode or kind).
pub fn changed_paths(a: &Manifest, b: &Manifest) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (path, entry) in &a.entries {
        if b.entries.get(path) != Some(entry) {
            out.insert(path.clone());
        }
    }
    for path in b.entries.keys() {
        if !a.entries.contains_key(path) {
            out.insert(path.clone());
        }
    }
    out
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Paths written back (files, links, directories).
    pub written: Vec<String>,
    /// Paths removed (they did not exist in the snapshot).
    pub removed: Vec<String>,
    /// Paths left as they are, with why.
    pub skipped: Vec<(String, String)>,
}

/// What is at `path` now, without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Now {
    Missing,
    Dir,
    Other,
}

fn now_at(path: &Path) -> Now {
    match fs::symlink_metadata(path) {
        Err(_) => Now::Missing,
        Ok(m) if m.file_type().is_dir() => Now::Dir,
        Ok(_) => Now::Other,
    }
}

/// Whether undo may put `rel` back: plain relative components only, and
/// nothing under `.git/` or `.north/` (what git runs and North's own
/// state), the same rule as edits.
pub fn restorable(rel: &str) -> bool {
    let path = Path::new(rel);
    !rel.is_empty()
        && path.components().all(|c| matches!(c, Component::Normal(_)))
        && !matches!(
            path.components().next(),
            Some(Component::Normal(first)) if first == ".git" || first == crate::repo::STATE_DIR
        )
}

/// `rel` joined to `root`, refusing what [`restorable`] refuses.
fn inside(root: &Path, rel: &str) -> Result<PathBuf, SnapshotError> {
    if !restorable(rel) {
        return Err(SnapshotError::UnsafePath(rel.to_string()));
    }
    Ok(root.join(rel))
}

/// Refuses to write through a symlinked directory: a command could have
/// replaced `src/` with a link to somewhere outside the project.
fn check_ancestors(root: &Path, rel: &str) -> Result<(), SnapshotError> {
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        dir.push(part);
        if let Ok(m) = fs::symlink_metadata(&dir)
            && !m.file_type().is_dir()
        {
            return Err(SnapshotError::UnsafePath(rel.to_string()));
        }
    }
    Ok(())
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), SnapshotError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(SnapshotError::io("create", parent))?;
    let temp = temp_path_for(path, "undo");
    let done = write_synced(&temp, bytes, mode).and_then(|()| fs::rename(&temp, path));
    if let Err(e) = done {
        let _ = fs::remove_file(&temp);
        return Err(SnapshotError::io("write", path)(e));
    }
    fsync_dir(parent).map_err(SnapshotError::io("sync", parent))
}

/// Puts each of `paths` under `root` back as `target` has it: files
/// byte-exact with their modes, links, directories; a path `target` lacks
/// is removed (a directory only once empty). Every blob is read and
/// checked before anything on disk changes.
pub fn restore(
    store: &SnapshotStore,
    root: &Path,
    target: &Manifest,
    paths: &BTreeSet<String>,
) -> Result<RestoreReport, SnapshotError> {
    let mut report = RestoreReport::default();
    let mut blobs = std::collections::HashMap::new();
    for rel in paths {
        inside(root, rel)?;
        if let Some(Entry::File { hash, .. }) = target.entries.get(rel) {
            blobs.insert(rel.clone(), store.blob(hash)?);
        }
    }
    // Deepest first: what the snapshot lacks, or has as another kind, goes.
    for rel in paths.iter().rev() {
        let path = inside(root, rel)?;
        let now = now_at(&path);
        let wanted = target.entries.get(rel);
        let keep_dir = matches!(wanted, Some(Entry::Dir { .. })) && now == Now::Dir;
        // A file too large to keep cannot be put back: leave what is there.
        let unkept = matches!(wanted, Some(Entry::TooLarge { .. }));
        if now == Now::Missing || keep_dir || unkept {
            continue;
        }
        check_ancestors(root, rel)?;
        if now == Now::Dir {
            if fs::remove_dir(&path).is_err() {
                report.skipped.push((
                    rel.clone(),
                    "directory not empty (holds ignored files)".into(),
                ));
                continue;
            }
        } else {
            fs::remove_file(&path).map_err(SnapshotError::io("remove", &path))?;
        }
        if wanted.is_none() {
            report.removed.push(rel.clone());
        }
    }
    // Shallowest first: directories before what they hold.
    for rel in paths {
        let Some(entry) = target.entries.get(rel) else {
            continue;
        };
        let path = inside(root, rel)?;
        check_ancestors(root, rel)?;
        match entry {
            Entry::Dir { .. } => {
                if now_at(&path) == Now::Missing {
                    fs::create_dir_all(&path).map_err(SnapshotError::io("create", &path))?;
                }
            }
            Entry::File { mode, .. } => {
                let Some(bytes) = blobs.remove(rel) else {
                    continue;
                };
                write_file(&path, &bytes, *mode)?;
            }
            Entry::Symlink { target: to } => {
                // A link is put back only where it stays in the project.
                let from = path.parent().unwrap_or(root);
                let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
                if !crate::sandbox::is_inside(&canonical, from, Path::new(to)) {
                    report.skipped.push((
                        rel.clone(),
                        format!("a link to {to}, outside the project, is not restored"),
                    ));
                    continue;
                }
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent).map_err(SnapshotError::io("create", parent))?;
                }
                std::os::unix::fs::symlink(to, &path)
                    .map_err(SnapshotError::io("create link", &path))?;
            }
            Entry::TooLarge { .. } => {
                report.skipped.push((
                    rel.clone(),
                    "larger than the snapshot size cap, so it was not kept".into(),
                ));
                continue;
            }
        }
        report.written.push(rel.clone());
    }
    // Directory modes last, deepest first: a read-only directory set early
    // would refuse the files written into it.
    for rel in paths.iter().rev() {
        if let Some(Entry::Dir { mode }) = target.entries.get(rel) {
            let path = inside(root, rel)?;
            fs::set_permissions(&path, fs::Permissions::from_mode(*mode))
                .map_err(SnapshotError::io("set the mode of", &path))?;
        }
    }
    Ok(report)
}
