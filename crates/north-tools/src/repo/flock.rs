//! Advisory whole-file locks (`flock`) between North processes: the apply
//! lock of a project, the writer lock of a session. The kernel releases a
//! lock when its holder dies, so a crash never leaves one behind.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Tries to take an exclusive lock on `file` without waiting: `Ok(false)`
/// when another open file description holds it.
pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    loop {
        // SAFETY: flock on a descriptor the caller owns; no memory is passed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(err),
        }
    }
}
