//! The whole walk: every path under a directory, stored as tree objects as
//! the walk leaves each directory, so memory holds the directories on the
//! current path rather than the tree. A file whose stat (size, times,
//! inode) matches the one the previous snapshot kept beside it is not read
//! again; a file changed within the last two seconds keeps no stat, since
//! a write in the same timestamp tick would not change it.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::live::Live;
use super::tree::{Stamp, TreeItem, TreeItems, Trees, join, split};
use super::{Entry, SnapshotError, SnapshotStats, SnapshotStore};
use crate::repo::walker;

/// Files modified this recently keep no stat: see the module docs.
const RACY_NS: i64 = 2_000_000_000;

/// A directory the walk is inside: what it holds so far, and what the
/// previous snapshot held there.
struct Frame {
    rel: String,
    items: TreeItems,
    prev: TreeItems,
    /// The previous snapshot's tree here: the same items are the same
    /// tree, neither encoded nor hashed again.
    prev_tree: Option<String>,
}

/// Whether a file's stat may be kept, and what a walk compares against.
pub(super) struct Look<'a> {
    /// The previous snapshot's item for the path (None: read it).
    pub(super) prev: Option<&'a TreeItem>,
    /// Stats changed after this (ns since the epoch) are not kept.
    pub(super) racy_after: i64,
}

/// Whether `path` is `dir` or under it.
fn within(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The time before which a stat can be trusted to change with a write.
pub(super) fn racy_after() -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    now - RACY_NS
}

impl SnapshotStore {
    /// Walks `top` — the tree's `prefix` (`""`: the root) — storing a tree
    /// object for each directory as the walk leaves it, and watching each
    /// directory before it is listed when `live` is given. `prev` is the
    /// previous snapshot's tree of `top`, whose stats spare reading files
    /// that did not change. Returns every directory's tree (`prefix`'s is
    /// the snapshot's name).
    pub(super) fn walk(
        &self,
        top: &Path,
        prefix: &str,
        prev: Option<&str>,
        mut live: Option<&mut Live>,
        stats: &mut SnapshotStats,
    ) -> Result<Trees, SnapshotError> {
        let racy_after = racy_after();
        let mut trees = Trees::new();
        let mut stack = vec![self.frame(prefix.to_string(), prev.map(str::to_owned))];
        for item in walker(top).build() {
            // An entry that vanished or cannot be read mid-walk is left out,
            // as if the walk had come a moment later.
            let Ok(item) = item else { continue };
            let Ok(rel) = item.path().strip_prefix(top) else {
                continue;
            };
            let Some(rel) = rel.to_str() else {
                continue;
            };
            let rel = join(prefix, rel);
            let Ok(meta) = fs::symlink_metadata(item.path()) else {
                continue;
            };
            // Watched before the walk reads it: whatever changes after its
            // listing is an event for the next snapshot.
            if meta.is_dir()
                && let Some(live) = live.as_deref_mut()
            {
                live.watch(&rel, item.path(), meta.ino());
            }
            if rel == prefix {
                continue;
            }
            let Some((parent, name)) = split(&rel) else {
                continue;
            };
            // Leave the directories this entry is not in.
            while stack.len() > 1 && stack.last().is_some_and(|f| !within(parent, &f.rel)) {
                self.leave(&mut stack, &mut trees, stats)?;
            }
            // A path whose directory was left out (unreadable, vanished).
            let Some(frame) = stack.last_mut().filter(|f| f.rel == parent) else {
                continue;
            };
            let look = Look {
                prev: frame.prev.get(name),
                racy_after,
            };
            let Some(made) = self.entry_of(item.path(), &meta, &look, stats)? else {
                continue;
            };
            let prev_tree = look.prev.and_then(|p| p.tree.clone());
            let name = name.to_string();
            frame.items.insert(name, made);
            if meta.is_dir() {
                stack.push(self.frame(rel, prev_tree));
            }
        }
        while !stack.is_empty() {
            self.leave(&mut stack, &mut trees, stats)?;
        }
        Ok(trees)
    }

    /// Stores the tree of the directory on top of `stack` and names it in
    /// its parent's.
    fn leave(
        &self,
        stack: &mut Vec<Frame>,
        trees: &mut Trees,
        stats: &mut SnapshotStats,
    ) -> Result<(), SnapshotError> {
        let Some(frame) = stack.pop() else {
            return Ok(());
        };
        let hash = match frame.prev_tree {
            Some(tree) if frame.items == frame.prev => tree,
            _ => {
                let (hash, written) = self.put_tree(&frame.items)?;
                stats.bytes_written += written;
                hash
            }
        };
        stats.entries += frame.items.len();
        if let Some(parent) = stack.last_mut()
            && let Some((_, name)) = split(&frame.rel)
            && let Some(item) = parent.items.get_mut(name)
        {
            item.tree = Some(hash.clone());
        }
        trees.insert(frame.rel, (hash, frame.items.len()));
        Ok(())
    }

    /// Entering directory `rel`, whose tree the previous snapshot named
    /// `prev_tree`. Its items are only a hint, so a tree that cannot be
    /// read is no items (every file there is read again); it is read
    /// without checking its hash: a damaged object costs reading files
    /// again, never a wrong entry (each is compared with the file's stat),
    /// and a whole walk reads thousands of them.
    fn frame(&self, rel: String, prev_tree: Option<String>) -> Frame {
        let prev = prev_tree
            .as_deref()
            .and_then(|t| self.tree_items_unchecked(t))
            .unwrap_or_default();
        Frame {
            rel,
            items: TreeItems::new(),
            prev,
            prev_tree,
        }
    }

    /// What `abs` is, as a snapshot keeps it; a file whose stat differs
    /// from `look.prev`'s is read and stored. None: gone, unreadable, or a
    /// kind nothing keeps (sockets, fifos, devices).
    pub(super) fn entry_of(
        &self,
        abs: &Path,
        meta: &fs::Metadata,
        look: &Look<'_>,
        stats: &mut SnapshotStats,
    ) -> Result<Option<TreeItem>, SnapshotError> {
        let item = |entry: Entry, stat: Option<Stamp>| {
            Ok(Some(TreeItem {
                entry,
                tree: None,
                stat,
            }))
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let Ok(target) = fs::read_link(abs) else {
                return Ok(None);
            };
            let target = target.to_string_lossy().into_owned();
            return item(Entry::Symlink { target }, None);
        }
        let mode = meta.permissions().mode() & 0o7777;
        if kind.is_dir() {
            return item(Entry::Dir { mode }, None);
        }
        if !kind.is_file() {
            return Ok(None);
        }
        let size = meta.len();
        let stamp = Stamp::of(meta);
        if size > self.max_file_bytes {
            let mtime_ns = stamp.mtime_ns;
            return item(Entry::TooLarge { size, mtime_ns }, None);
        }
        let same = look.prev.filter(|p| {
            p.stat.as_ref() == Some(&stamp)
                && matches!(p.entry, Entry::File { size: s, .. } if s == size)
        });
        let hash = match same {
            Some(TreeItem {
                entry: Entry::File { hash, .. },
                ..
            }) => hash.clone(),
            _ => {
                let Ok(bytes) = fs::read(abs) else {
                    return Ok(None);
                };
                stats.hashed += 1;
                let (hash, written) = self.put(&bytes)?;
                stats.bytes_written += written;
                if stats.bytes_written > self.max_new_bytes {
                    return Err(SnapshotError::TooLarge {
                        limit: self.max_new_bytes,
                    });
                }
                hash
            }
        };
        let settled = stamp.mtime_ns < look.racy_after && stamp.ctime_ns < look.racy_after;
        item(Entry::File { hash, mode, size }, settled.then_some(stamp))
    }
}
