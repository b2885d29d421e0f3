//! The mount calls the sandbox's layers share.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

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
