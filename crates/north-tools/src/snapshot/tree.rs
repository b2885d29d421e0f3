//! The shape a snapshot is stored in: one tree object per directory, its
//! names and entries, and the relative paths that name directories.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use super::Entry;

/// One name in a directory's tree object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct TreeItem {
    pub(super) entry: Entry,
    /// For a directory: the tree object of what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) tree: Option<String>,
    /// For a file: its stat when it was read, so the next whole walk need
    /// not read it again while the stat is the same (None: read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) stat: Option<Stamp>,
}

/// What a file's stat says of its content having changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Stamp {
    /// Modification time, ns since the epoch.
    #[serde(rename = "m")]
    pub(super) mtime_ns: i64,
    /// Status change time, ns since the epoch.
    #[serde(rename = "c")]
    pub(super) ctime_ns: i64,
    /// Inode number.
    #[serde(rename = "i")]
    pub(super) ino: u64,
}

/// What one directory's tree object holds, by name.
pub(super) type TreeItems = BTreeMap<String, TreeItem>;

/// Each directory's tree object and how many names it holds, by path
/// (`""` for the top of what was stored).
pub(super) type Trees = BTreeMap<String, (String, usize)>;

impl Stamp {
    /// The stamp of a file's metadata.
    pub(super) fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            mtime_ns: nanos(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: nanos(meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }
}

// Nanoseconds since the epoch fit an i64 until 2262.
fn nanos(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

/// `name` under directory `dir` (`""`: the root).
pub(super) fn join(dir: &str, name: &str) -> String {
    match (dir.is_empty(), name.is_empty()) {
        (true, _) => name.to_string(),
        (false, true) => dir.to_string(),
        (false, false) => format!("{dir}/{name}"),
    }
}

/// A directory's parent and name (None for the root).
pub(super) fn split(path: &str) -> Option<(&str, &str)> {
    if path.is_empty() {
        return None;
    }
    Some(path.rsplit_once('/').unwrap_or(("", path)))
}

/// How many names deep `path` is (the root: 0).
pub(super) fn depth(path: &str) -> usize {
    if path.is_empty() {
        0
    } else {
        path.matches('/').count() + 1
    }
}
