//! Snapshots of a working tree, for undo.
//!
//! A [`SnapshotStore`] keeps file contents content-addressed (sha256) under
//! North's state directory and records each snapshot as a [`Manifest`]: every
//! file, symlink and directory the project walk sees (so `.gitignore` is
//! honoured, `.git/`, `.north/` and secret `.env` files are never copied),
//! with permission bits. It needs no git repository. Files larger than the
//! store's cap are listed as [`Entry::TooLarge`] and never copied.
//!
//! A manifest is stored as one tree object per directory (as git does), so
//! a snapshot after a few edits writes only the trees on their paths.
//! Snapshots are incremental: each file's stat (size, mtime, ctime, inode)
//! is kept beside it in its tree, so the next whole walk lists unchanged
//! files without reading them, and a blob already in the store is never
//! written again. After the first snapshot of a tree in a
//! process its directories are watched (inotify), so a later snapshot
//! re-lists only the directories something happened in and costs what
//! changed, not the size of the tree; a big tree's [`watcher`] process
//! keeps those watches between processes, so a new process's first
//! snapshot costs what changed too. [`restore`] puts chosen paths back
//! as a manifest had them, byte-exact with modes.
//!
//! This module never decides *what* to restore: callers compare manifests
//! (see [`changed_paths`]) and check for hand edits first.

mod live;
mod restore;
mod store;
mod tree;
mod walk;
mod watched;
pub mod watcher;

pub use restore::{RestoreReport, changed_paths, restorable, restore};
pub use store::{SnapshotId, SnapshotStats, SnapshotStore};

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Files above this size are not copied into the store by default.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What one snapshot may add to the store by default: a tree that needs
/// more (data files nobody ignored) gets no snapshot rather than a copy.
pub(crate) const DEFAULT_MAX_NEW_BYTES: u64 = 512 * 1024 * 1024;

/// One path of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A regular file: its content's sha256 and permission bits.
    File {
        /// Content hash (hex sha256), the blob's name in the store.
        hash: String,
        /// Permission bits (`0o755`…).
        mode: u32,
        /// Size in bytes.
        size: u64,
    },
    /// A symbolic link and where it points (never followed).
    Symlink {
        /// The link's target as stored in the link.
        target: String,
    },
    /// A directory and its permission bits.
    Dir {
        /// Permission bits.
        mode: u32,
    },
    /// A file above the store's size cap: seen, not copied, not restorable.
    TooLarge {
        /// Size in bytes.
        size: u64,
        /// Modification time (ns since the epoch), to tell whether it changed.
        mtime_ns: i64,
    },
}

/// A working tree at one moment: relative paths (with `/`) to entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Every path the snapshot saw.
    pub entries: BTreeMap<String, Entry>,
}

/// Why a snapshot or restore failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading or writing failed.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A stored manifest or blob is unreadable or does not match its hash.
    #[error("snapshot store damaged at {path}: {message}")]
    Corrupt {
        /// The damaged object.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The store's folder (or its objects folder) is a link: North keeps
    /// snapshots only in a real directory.
    #[error("{0} is a symbolic link; North keeps snapshots only in a real directory")]
    Linked(PathBuf),
    /// A manifest names a path that would leave the project root.
    #[error("refusing to restore {0:?}: it is not a plain path inside the project")]
    UnsafePath(String),
    /// The tree holds more new content than one snapshot may copy.
    #[error(
        "the project holds more than {limit} bytes of files no .gitignore excludes; add the large ones to .gitignore to get undo"
    )]
    TooLarge {
        /// The limit.
        limit: u64,
    },
}

impl SnapshotError {
    pub(crate) fn io(
        op: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| SnapshotError::Io { op, path, source }
    }
}

#[cfg(test)]
mod tests;
