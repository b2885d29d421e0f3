//! Atomic file replacement: temp file in the same directory, fsync, rename,
//! permissions preserved, parent directory fsynced.

use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::RepoError;

/// Mode of files that did not exist before.
const NEW_FILE_MODE: u32 = 0o644;

/// Flushes a directory entry list to disk so a rename in it survives a crash.
pub fn fsync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A fresh temp path beside `target` (same directory, so rename is atomic).
/// `tag` distinguishes temp files of one transaction from another's.
pub fn temp_path_for(target: &Path, tag: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Keep the name short enough for NAME_MAX even when the target's is long.
    let short: String = name.chars().take(120).collect();
    target.with_file_name(format!(".{short}.north-{tag}-{n}.tmp"))
}

/// Writes `bytes` to a new file at `temp` with `mode` and fsyncs it.
pub(crate) fn write_synced(temp: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(temp)?;
    file.write_all(bytes)?;
    // Set the final mode explicitly: `mode()` above is filtered by the umask.
    file.set_permissions(Permissions::from_mode(mode))?;
    file.sync_all()
}

/// The permission bits a replacement of `target` should get.
pub(crate) fn mode_for(target: &Path) -> u32 {
    std::fs::metadata(target)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(NEW_FILE_MODE)
}

/// Replaces (or creates) `target` with `bytes` atomically: readers see the old
/// file or the new one, never a mix, also after a crash.
pub fn atomic_write(target: &Path, bytes: &[u8]) -> Result<(), RepoError> {
    let shown = target.display().to_string();
    let parent = match target.parent() {
        // A bare file name lives in the current directory, which is what
        // must be fsynced after the rename (`""` cannot be opened).
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return Err(RepoError::NotAFile(shown)),
    };
    let temp = temp_path_for(target, &std::process::id().to_string());
    let mode = mode_for(target);
    if let Err(e) = write_synced(&temp, bytes, mode) {
        let _ = std::fs::remove_file(&temp);
        return Err(RepoError::io("write", shown, e));
    }
    if let Err(e) = std::fs::rename(&temp, target) {
        let _ = std::fs::remove_file(&temp);
        return Err(RepoError::io("rename into place", shown, e));
    }
    fsync_dir(parent).map_err(|e| RepoError::io("fsync directory of", shown, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_preserves_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.sh");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, Permissions::from_mode(0o750)).unwrap();
        atomic_write(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn atomic_write_creates_with_default_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("new.txt");
        atomic_write(&target, b"x").unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, NEW_FILE_MODE);
    }
}
