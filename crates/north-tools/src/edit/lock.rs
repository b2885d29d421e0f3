//! The project's apply lock: one apply (or recovery) at a time per project,
//! across processes.
//!
//! An advisory `flock` on `.north/txn/lock` is held for a whole apply —
//! recovery, stale checks, prepare, commit, renames — so two North
//! processes never interleave their writes, and recovery never touches the
//! journal of an apply that is still running: whoever holds the lock knows
//! every journal it finds belongs to a process that died (the kernel drops a
//! dead process's lock).

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::repo::try_lock_exclusive;

/// How long an apply waits for another process's apply to finish.
const WAIT: Duration = Duration::from_secs(30);

/// Held while applying; released on drop (or when the process dies).
#[derive(Debug)]
pub struct ApplyLock {
    _file: File,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file could not be opened.
    #[error("cannot open the apply lock {path}: {source}")]
    Open {
        /// The lock file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another process held it for too long.
    #[error(
        "another North process has been applying edits in this project for over {secs} s; nothing was written. Try again when it is done"
    )]
    Busy {
        /// How long it waited.
        secs: u64,
    },
}

impl ApplyLock {
    /// Takes the lock of the project whose transaction directory is
    /// `txn_dir`, waiting for another apply to finish.
    pub(crate) fn acquire(txn_dir: &Path) -> Result<ApplyLock, LockError> {
        let path = txn_dir.join("lock");
        let open_err = |source| LockError::Open {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(txn_dir).map_err(open_err)?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(open_err)?;
        let deadline = Instant::now() + WAIT;
        let mut pause = Duration::from_millis(2);
        loop {
            if try_lock_exclusive(&file).map_err(open_err)? {
                return Ok(ApplyLock { _file: file });
            }
            if Instant::now() >= deadline {
                return Err(LockError::Busy {
                    secs: WAIT.as_secs(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}
