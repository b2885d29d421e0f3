//! The content-addressed store: blobs and tree objects under one
//! directory, and the snapshot of a tree — watched or walked whole.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use serde::{Deserialize, Serialize};

use super::live::{Live, LiveSlot};
use super::tree::{TreeItems, join};
use super::watcher;
use super::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_NEW_BYTES, Manifest, SnapshotError};
use crate::edit::content_hash;
use crate::repo::temp_path_for;

/// The last snapshot's name: where the next process's whole walk finds the
/// stats that spare reading unchanged files.
const LAST_FILE: &str = "last";

/// What an older North kept its stats in (removed on sight: it could hold
/// tens of megabytes in a big tree).
const OLD_CACHE_FILE: &str = "statcache.json";

/// The name of a snapshot: the hash of its manifest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SnapshotId(pub String);

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What one snapshot cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Paths listed (files, links, directories).
    pub entries: usize,
    /// Files read and hashed (their stat was not the previous snapshot's,
    /// or an event named them).
    pub hashed: usize,
    /// Bytes newly written to the store (blobs and the manifest).
    pub bytes_written: u64,
    /// Whether the whole tree was walked. After the first snapshot of a
    /// tree in a process, watched directories let a snapshot re-list only
    /// the directories something happened in.
    pub full_walk: bool,
    /// Whether the tree's watcher process took it (see
    /// [`super::watcher`]): it kept its watches since an earlier North
    /// process, so even a new process's first snapshot costs what changed.
    pub by_watcher: bool,
}

/// A content-addressed store of working-tree snapshots (see the module docs).
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
    pub(super) max_file_bytes: u64,
    pub(super) max_new_bytes: u64,
    /// Shared by clones: what the last snapshot of a tree left watched.
    live: Arc<Mutex<LiveSlot>>,
}

/// Writes `bytes` to `path` through a temporary file and a rename: a
/// reader (another North process) sees the old file or the whole new one.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = temp_path_for(path, &std::process::id().to_string());
    let written = fs::File::create(&temp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// The watched state of each store this process has open, by directory:
/// every session of a project (`north serve` holds many) shares one set of
/// watches on its tree instead of an inotify instance each.
fn shared_slot(dir: &Path) -> Arc<Mutex<LiveSlot>> {
    static SLOTS: OnceLock<Mutex<HashMap<PathBuf, Weak<Mutex<LiveSlot>>>>> = OnceLock::new();
    let mut slots = SLOTS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    slots.retain(|_, slot| slot.strong_count() > 0);
    if let Some(slot) = slots.get(dir).and_then(Weak::upgrade) {
        return slot;
    }
    let slot = Arc::default();
    slots.insert(dir.to_path_buf(), Arc::downgrade(&slot));
    slot
}

impl SnapshotStore {
    /// The store in `dir` (created if missing).
    pub fn open(dir: &Path) -> Result<SnapshotStore, SnapshotError> {
        let objects = dir.join("objects");
        // A repository can ship `.north/snapshots` (or its `objects`) as a
        // link out of the project: snapshots would be written there.
        for path in [dir, objects.as_path()] {
            if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(SnapshotError::Linked(path.to_path_buf()));
            }
        }
        fs::create_dir_all(&objects).map_err(SnapshotError::io("create", &objects))?;
        Ok(SnapshotStore {
            dir: dir.to_path_buf(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_new_bytes: DEFAULT_MAX_NEW_BYTES,
            live: shared_slot(dir),
        })
    }

    /// Lets go of the watches: the next snapshot walks the tree whole, as
    /// a new process would (benchmarks and tests measure that).
    pub fn forget_watches(&self) {
        let mut slot = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = LiveSlot::default();
    }

    /// Files above `bytes` are listed but not copied (tests use small
    /// limits).
    #[cfg(test)]
    pub(crate) fn with_max_file_bytes(mut self, bytes: u64) -> SnapshotStore {
        self.max_file_bytes = bytes;
        self
    }

    /// One snapshot may add at most `bytes` to the store; past that it
    /// fails with [`SnapshotError::TooLarge`].
    #[cfg(test)]
    pub(crate) fn with_max_new_bytes(mut self, bytes: u64) -> SnapshotStore {
        self.max_new_bytes = bytes;
        self
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn object_path(&self, hash: &str) -> Result<PathBuf, SnapshotError> {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SnapshotError::Corrupt {
                path: self.dir.clone(),
                message: format!("{hash:?} is not an object name"),
            });
        }
        Ok(self.dir.join("objects").join(&hash[..2]).join(&hash[2..]))
    }

    /// Stores `bytes` under their hash unless already there; returns the
    /// hash and how many bytes were written.
    pub(super) fn put(&self, bytes: &[u8]) -> Result<(String, u64), SnapshotError> {
        let hash = content_hash(bytes);
        let path = self.object_path(&hash)?;
        // Anything but a regular file there (a planted link) is replaced:
        // the rename below takes the link's place, it never follows it.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Ok((hash, 0));
        }
        let parent = path.parent().unwrap_or(&self.dir);
        // A fan-out folder planted as a link is replaced, never written
        // through.
        if fs::symlink_metadata(parent).is_ok_and(|m| !m.is_dir()) {
            fs::remove_file(parent).map_err(SnapshotError::io("replace", parent))?;
        }
        fs::create_dir_all(parent).map_err(SnapshotError::io("create", parent))?;
        // Objects are verified when read, so no fsync per object (a first
        // snapshot of a big tree stays fast).
        replace(&path, bytes).map_err(SnapshotError::io("write", &path))?;
        Ok((hash, bytes.len() as u64))
    }

    /// The content stored under `hash`, checked against it.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, SnapshotError> {
        let path = self.object_path(hash)?;
        // A link or a device planted in the store (a repository that ships
        // a `.north/`) is not followed: reading /dev/zero would never end.
        let meta = fs::symlink_metadata(&path).map_err(SnapshotError::io("read", &path))?;
        if !meta.is_file() {
            return Err(SnapshotError::Corrupt {
                path,
                message: "not a regular file".into(),
            });
        }
        let bytes = fs::read(&path).map_err(SnapshotError::io("read", &path))?;
        if content_hash(&bytes) != hash {
            return Err(SnapshotError::Corrupt {
                path,
                message: "content does not match its hash".into(),
            });
        }
        Ok(bytes)
    }

    /// The manifest of snapshot `id`.
    pub fn manifest(&self, id: &SnapshotId) -> Result<Manifest, SnapshotError> {
        let mut manifest = Manifest::default();
        self.read_tree(&id.0, "", &mut manifest, 0)?;
        Ok(manifest)
    }

    /// The names in tree object `hash` as stored, its hash not checked
    /// (only for hints; None when it cannot be read or parsed).
    pub(super) fn tree_items_unchecked(&self, hash: &str) -> Option<TreeItems> {
        /// Larger than any tree North writes (a folder of a million names):
        /// a planted object cannot make a hint cost the machine's memory.
        const MAX_TREE_BYTES: u64 = 256 * 1024 * 1024;
        let path = self.object_path(hash).ok()?;
        let meta = fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_TREE_BYTES {
            return None;
        }
        let bytes = fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The names in tree object `hash`, checked.
    pub(super) fn tree_items(&self, hash: &str) -> Result<TreeItems, SnapshotError> {
        let corrupt = |message: String| SnapshotError::Corrupt {
            path: self.object_path(hash).unwrap_or_default(),
            message,
        };
        let bytes = self.blob(hash)?;
        let tree: TreeItems = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        if let Some(name) = tree
            .keys()
            .find(|n| n.is_empty() || n.contains('/') || *n == "." || *n == "..")
        {
            return Err(corrupt(format!("bad name {name:?} in a tree")));
        }
        Ok(tree)
    }

    fn read_tree(
        &self,
        hash: &str,
        prefix: &str,
        out: &mut Manifest,
        depth: usize,
    ) -> Result<(), SnapshotError> {
        /// Deeper than any real tree: a damaged store cannot loop forever.
        const MAX_DEPTH: usize = 4096;
        if depth > MAX_DEPTH {
            return Err(SnapshotError::Corrupt {
                path: self.object_path(hash).unwrap_or_default(),
                message: "trees nested too deep".into(),
            });
        }
        for (name, item) in self.tree_items(hash)? {
            let path = join(prefix, &name);
            if let Some(child) = &item.tree {
                self.read_tree(child, &path, out, depth + 1)?;
            }
            out.entries.insert(path, item.entry);
        }
        Ok(())
    }

    /// Stores one tree object: its name.
    pub(super) fn put_tree(&self, items: &TreeItems) -> Result<(String, u64), SnapshotError> {
        let json = serde_json::to_vec(items).map_err(|e| SnapshotError::Corrupt {
            path: self.dir.clone(),
            message: e.to_string(),
        })?;
        self.put(&json)
    }

    /// The last snapshot's name, if any (only a hint).
    fn last(&self) -> Option<String> {
        let text = fs::read_to_string(self.dir.join(LAST_FILE)).ok()?;
        let hash = text.trim();
        self.object_path(hash).ok()?;
        Some(hash.to_string())
    }

    /// Remembers `id` as the last snapshot (once: a snapshot of an
    /// unchanged tree writes nothing); a failed write costs the next
    /// process's walk time, never correctness.
    fn set_last(&self, slot: &mut LiveSlot, id: &str) {
        if slot.last.as_deref() == Some(id) {
            return;
        }
        if replace(&self.dir.join(LAST_FILE), id.as_bytes()).is_ok() {
            slot.last = Some(id.to_string());
        }
    }

    /// Snapshots the tree under `root` (see the module docs). The first
    /// snapshot of a tree in a process asks the tree's watcher process
    /// when one runs (a big tree's: see [`super::watcher`]), else walks all
    /// of it (reading only files whose stat changed since the last
    /// snapshot) and watches its directories; later ones re-list only
    /// directories that had events, falling back to the whole walk when
    /// the events cannot say (a queue overflow, a moved directory, a
    /// changed ignore file).
    pub fn snapshot(&self, root: &Path) -> Result<(SnapshotId, SnapshotStats), SnapshotError> {
        let mut slot = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        let watched_here = slot.live.as_ref().is_some_and(|l| l.root == root);
        if !watched_here && let Some(done) = watcher::ask(self, root) {
            return Ok(done);
        }
        self.snapshot_here(&mut slot, root, true)
    }

    /// Snapshots the tree in this process; a whole walk of a big tree
    /// starts its watcher when `may_start_watcher`.
    pub(super) fn snapshot_here(
        &self,
        slot: &mut LiveSlot,
        root: &Path,
        may_start_watcher: bool,
    ) -> Result<(SnapshotId, SnapshotStats), SnapshotError> {
        if let Some(mut live) = slot.live.take().filter(|l| l.root == root)
            && let Some(changes) = live.changes()
        {
            // On an error the watched state may be half updated: dropped,
            // so the next snapshot walks everything again.
            if let Some(done) = self.apply_changes(&mut live, &changes)? {
                self.set_last(slot, &done.0.0);
                slot.live = Some(live);
                return Ok(done);
            }
        }
        let _ = fs::remove_file(self.dir.join(OLD_CACHE_FILE));
        let mut live = if slot.refused { None } else { Live::new(root) };
        let mut stats = SnapshotStats {
            full_walk: true,
            ..SnapshotStats::default()
        };
        let prev = self.last();
        let trees = self.walk(root, "", prev.as_deref(), live.as_mut(), &mut stats)?;
        let id = trees
            .get("")
            .map(|(hash, _)| hash.clone())
            .unwrap_or_default();
        self.set_last(slot, &id);
        if let Some(mut live) = live {
            if live.adopt(trees) {
                slot.live = Some(live);
                if may_start_watcher {
                    watcher::start(self, root, stats.entries);
                }
            } else {
                // Out of watches (or a directory seen twice): whole walks
                // from now on, without trying again each time.
                slot.refused = true;
            }
        }
        Ok((SnapshotId(id), stats))
    }

    /// The watched state, for the watcher process's loop.
    pub(super) fn slot(&self) -> std::sync::MutexGuard<'_, LiveSlot> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `id` names a tree object this store holds (an answer from
    /// a watcher is checked before it is believed).
    pub(super) fn holds(&self, id: &str) -> bool {
        self.object_path(id)
            .is_ok_and(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
    }
}
