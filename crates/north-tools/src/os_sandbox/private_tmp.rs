//! A private temp dir: a fresh tmpfs over the system temp dir in the
//! sandbox's mount namespace, so a command cannot see or touch what other
//! processes keep there (another session's shell scripts, a tmux socket,
//! other users' files) and leaves nothing behind in it.
//!
//! What the command needs from the real temp dir — the project when it
//! lives there, the directories the user made writable, the shell's own
//! working directory — is opened before the tmpfs covers it and bound back
//! at the same path.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Covers `tmp` with an empty tmpfs and binds each of `keep` that lies
/// under it back in place.
pub(super) fn cover(tmp: &Path, keep: &[PathBuf]) -> Result<(), String> {
    let mut held: Vec<(PathBuf, OwnedFd, bool)> = Vec::new();
    for path in keep
        .iter()
        .filter(|p| p.starts_with(tmp) && p.as_path() != tmp)
    {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let fd = open_path(path)?;
        held.push((path.clone(), fd, meta.is_dir()));
    }
    super::mounts::mount_new(
        c"tmpfs",
        tmp,
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(c"mode=1777"),
    )?;
    for (path, fd, is_dir) in &held {
        if *is_dir {
            std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let source = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        super::mounts::mount(Some(&source), path, libc::MS_BIND | libc::MS_REC)?;
    }
    Ok(())
}

fn open_path(path: &Path) -> Result<OwnedFd, String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)
        .map(OwnedFd::from)
        .map_err(|e| format!("{}: {e}", path.display()))
}
