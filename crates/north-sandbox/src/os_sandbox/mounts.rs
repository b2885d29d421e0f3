//! The mount calls the sandbox's layers share.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub(super) fn last_error() -> String {
    std::io::Error::last_os_error().to_string()
}

pub(super) fn cpath(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|e| e.to_string())
}

pub(super) fn mount(
    source: Option<&Path>,
    target: &Path,
    flags: libc::c_ulong,
) -> Result<(), String> {
    let target_c = cpath(target)?;
    let source_c = source.map(cpath).transpose()?;
    // SAFETY: the pointers come from live CStrings (or are null, which
    // mount(2) accepts for the source of a remount and the fs type).
    let rc = unsafe {
        libc::mount(
            source_c.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            target_c.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{}: {}", target.display(), last_error()))
    }
}

/// Mounts a new filesystem of type `fstype` (a `tmpfs`, a `proc`) at
/// `target`, with `data` as its options.
pub(super) fn mount_new(
    fstype: &CStr,
    target: &Path,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> Result<(), String> {
    let target_c = cpath(target)?;
    // SAFETY: the pointers come from live C strings (or are null, which
    // mount(2) accepts for the options).
    let rc = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target_c.as_ptr(),
            fstype.as_ptr(),
            flags,
            data.map_or(std::ptr::null(), |d| d.as_ptr().cast()),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{}: {}", target.display(), last_error()))
    }
}

/// Covers `dir` with an empty tmpfs (`options`, extra mount `flags`) and
/// binds each of `keep` that lies under it back at the same path; returns
/// the paths bound back. Each kept path is opened before the cover, so
/// what is bound back is the real one, not a name the cover could shadow.
pub(super) fn cover(
    dir: &Path,
    keep: &[PathBuf],
    options: &CStr,
    flags: libc::c_ulong,
) -> Result<Vec<PathBuf>, String> {
    let mut held: Vec<(PathBuf, OwnedFd, bool)> = Vec::new();
    for path in keep
        .iter()
        .filter(|p| p.starts_with(dir) && p.as_path() != dir)
    {
        // Outermost first; a path inside one already kept comes along.
        if held.iter().any(|(h, _, _)| path.starts_with(h)) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let fd = open_path(path)?;
        held.retain(|(h, _, _)| !h.starts_with(path));
        held.push((path.clone(), fd, meta.is_dir()));
    }
    mount_new(
        c"tmpfs",
        dir,
        libc::MS_NOSUID | libc::MS_NODEV | flags,
        Some(options),
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
        mount(Some(&source), path, libc::MS_BIND | libc::MS_REC)?;
    }
    Ok(held.into_iter().map(|(p, _, _)| p).collect())
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
