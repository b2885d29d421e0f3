//! The private files of one shell run: the command, its stderr and the
//! wrapper the shell sources, each created new and readable by this user
//! only, and read back within bounds.

use std::io::Read;
use std::path::Path;

use super::ShellError;
use super::output::HeadTail;

/// The private files of one run: the command, its stderr, the wrapper.
pub(super) struct RunFiles {
    pub(super) cmd: std::path::PathBuf,
    pub(super) err: std::path::PathBuf,
    pub(super) run: std::path::PathBuf,
}

/// What `path` gained since byte `seen` (at most the newest 64 KiB of it).
/// Creates `path` with `content`: a new regular file (`O_EXCL`, never
/// following a link), mode 0600.
pub(super) fn create_private(path: &Path, content: &[u8]) -> Result<(), ShellError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(ShellError::Io)?;
    file.write_all(content).map_err(ShellError::Io)
}

/// Opens a file North created, refusing anything but a regular file (a
/// FIFO would block North, a link could point anywhere).
pub(super) fn open_own(path: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

pub(super) fn read_from(path: &Path, seen: &mut u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    const MAX: u64 = 64 * 1024;
    let Some(mut file) = open_own(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len <= *seen {
        return Vec::new();
    }
    let from = (*seen).max(len.saturating_sub(MAX));
    *seen = len;
    let mut out = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_ok() {
        let _ = file.take(len - from).read_to_end(&mut out);
    }
    out
}

/// Reads a file keeping at most `limit` bytes (head and tail).
pub(super) fn read_bounded(path: &Path, limit: usize) -> (String, bool) {
    use std::io::{Seek, SeekFrom};
    let Some(mut file) = open_own(path) else {
        return (String::new(), false);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut capture = HeadTail::new(limit);
    if len <= limit as u64 {
        let mut all = Vec::new();
        let _ = file.read_to_end(&mut all);
        capture.push(&all);
        return capture.finish();
    }
    let head_len = limit / 2;
    let tail_len = limit - head_len;
    let mut head = vec![0u8; head_len];
    let mut tail = vec![0u8; tail_len];
    let ok = file.read_exact(&mut head).is_ok()
        && file.seek(SeekFrom::End(-(tail_len as i64))).is_ok()
        && file.read_exact(&mut tail).is_ok();
    if !ok {
        return (String::new(), false);
    }
    capture.push(&head);
    // Account for the bytes in between without reading them.
    capture.skip(len - limit as u64);
    capture.push(&tail);
    capture.finish()
}
