//! The content-addressed store: blobs and manifests under one directory,
//! and the stat cache that makes repeated snapshots cheap.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::live::{Live, LiveSlot};
use super::tree::{TreeItem, TreeItems, Trees, depth, join, split};
use super::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_NEW_BYTES, Entry, Manifest, SnapshotError};
use crate::edit::content_hash;
use crate::repo::{temp_path_for, walker};

/// Files modified this recently are hashed again next time: a write within
/// the same timestamp tick would not change the stat the cache compares.
const RACY_NS: i64 = 2_000_000_000;

const CACHE_FILE: &str = "statcache.json";

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
    /// Files read and hashed (not answered by the stat cache).
    pub hashed: usize,
    /// Bytes newly written to the store (blobs and the manifest).
    pub bytes_written: u64,
    /// Whether the whole tree was walked. After the first snapshot of a
    /// tree in a process, watched directories let a snapshot re-list only
    /// the directories something happened in.
    pub full_walk: bool,
}

/// What the stat cache remembers of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: u64,
    hash: String,
}

/// The stat cache as one snapshot uses it: what the last full walk saved,
/// and what this one will save.
pub(super) struct StatCache {
    old: BTreeMap<String, Stat>,
    new: BTreeMap<String, Stat>,
    racy_after: i64,
}

impl StatCache {
    /// No cache: every file looked at is read (a directory that just
    /// appeared, a file an event named).
    pub(super) fn none() -> StatCache {
        StatCache {
            old: BTreeMap::new(),
            new: BTreeMap::new(),
            racy_after: i64::MIN,
        }
    }
}

/// A content-addressed store of working-tree snapshots (see the module docs).
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
    max_file_bytes: u64,
    max_new_bytes: u64,
    /// Shared by clones: what the last snapshot of a tree left watched.
    live: Arc<Mutex<LiveSlot>>,
}

// Nanoseconds since the epoch fit an i64 until 2262.
fn mtime_ns(meta: &fs::Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

fn ctime_ns(meta: &fs::Metadata) -> i64 {
    meta.ctime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.ctime_nsec())
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

impl SnapshotStore {
    /// The store in `dir` (created if missing).
    pub fn open(dir: &Path) -> Result<SnapshotStore, SnapshotError> {
        let objects = dir.join("objects");
        fs::create_dir_all(&objects).map_err(SnapshotError::io("create", &objects))?;
        Ok(SnapshotStore {
            dir: dir.to_path_buf(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_new_bytes: DEFAULT_MAX_NEW_BYTES,
            live: Arc::default(),
        })
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
        if path.exists() {
            return Ok((hash, 0));
        }
        let parent = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(parent).map_err(SnapshotError::io("create", parent))?;
        // Temp then rename: another North process writing the same object
        // at once leaves one whole copy. Objects are verified when read, so
        // no fsync per object (a first snapshot of a big tree stays fast).
        let temp = temp_path_for(&path, &std::process::id().to_string());
        let written = fs::File::create(&temp)
            .and_then(|mut f| f.write_all(bytes))
            .and_then(|()| fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(SnapshotError::io("write", &path)(e));
        }
        Ok((hash, bytes.len() as u64))
    }

    /// The content stored under `hash`, checked against it.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, SnapshotError> {
        let path = self.object_path(hash)?;
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

    /// Stores `manifest` — every path under `top` (`""`: the whole tree) —
    /// as one tree object per directory (as git does), so a snapshot after
    /// a few edits writes only the trees on their paths. Returns the bytes
    /// written and each directory's tree (`top`'s is the snapshot's name).
    pub(super) fn put_trees(
        &self,
        manifest: &Manifest,
        top: &str,
    ) -> Result<(u64, Trees), SnapshotError> {
        let mut dirs: BTreeMap<String, TreeItems> = BTreeMap::new();
        dirs.insert(top.to_string(), BTreeMap::new());
        for (path, entry) in &manifest.entries {
            let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
            dirs.entry(parent.to_string()).or_default().insert(
                name.to_string(),
                TreeItem {
                    entry: entry.clone(),
                    tree: None,
                },
            );
            if matches!(entry, Entry::Dir { .. }) {
                dirs.entry(path.clone()).or_default();
            }
        }
        let mut order: Vec<String> = dirs.keys().cloned().collect();
        // Children before parents: deepest first.
        order.sort_by_key(|d| std::cmp::Reverse(depth(d)));
        let mut written = 0;
        let mut trees = Trees::new();
        for dir in order {
            let items = dirs.remove(&dir).unwrap_or_default();
            let (hash, n) = self.put_tree(&items)?;
            written += n;
            if dir != top
                && let Some((parent, name)) = split(&dir)
                && let Some(item) = dirs.get_mut(parent).and_then(|p| p.get_mut(name))
            {
                item.tree = Some(hash.clone());
            }
            trees.insert(dir, (hash, items.len()));
        }
        Ok((written, trees))
    }

    fn load_cache(&self) -> StatCache {
        let old = fs::read(self.dir.join(CACHE_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        StatCache {
            old,
            new: BTreeMap::new(),
            racy_after: now_ns() - RACY_NS,
        }
    }

    /// The cache is only a hint (every entry is checked against the file's
    /// stat), so a failed write costs speed, never correctness.
    fn save_cache(&self, cache: &StatCache) {
        if cache.new == cache.old {
            return;
        }
        let path = self.dir.join(CACHE_FILE);
        if let Ok(bytes) = serde_json::to_vec(&cache.new) {
            let temp = temp_path_for(&path, &std::process::id().to_string());
            if fs::write(&temp, bytes)
                .and_then(|()| fs::rename(&temp, &path))
                .is_err()
            {
                let _ = fs::remove_file(&temp);
            }
        }
    }

    /// Snapshots the tree under `root` (see the module docs). The first
    /// snapshot of a tree in a process walks all of it and watches its
    /// directories; later ones re-list only directories that had events,
    /// falling back to the whole walk when the events cannot say (a queue
    /// overflow, a moved directory, a changed ignore file).
    pub fn snapshot(&self, root: &Path) -> Result<(SnapshotId, SnapshotStats), SnapshotError> {
        let mut slot = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(mut live) = slot.live.take().filter(|l| l.root == root)
            && let Some(changes) = live.changes()
        {
            // On an error the watched state may be half updated: dropped,
            // so the next snapshot walks everything again.
            if let Some(done) = self.apply_changes(&mut live, &changes)? {
                slot.live = Some(live);
                return Ok(done);
            }
        }
        let mut live = if slot.refused { None } else { Live::new(root) };
        let mut cache = self.load_cache();
        let mut stats = SnapshotStats {
            full_walk: true,
            ..SnapshotStats::default()
        };
        let manifest = self.walk(root, "", &mut cache, live.as_mut(), &mut stats)?;
        stats.entries = manifest.entries.len();
        let (written, trees) = self.put_trees(&manifest, "")?;
        stats.bytes_written += written;
        let id = trees
            .get("")
            .map(|(hash, _)| hash.clone())
            .unwrap_or_default();
        self.save_cache(&cache);
        if let Some(mut live) = live {
            if live.adopt(trees) {
                slot.live = Some(live);
            } else {
                // Out of watches (or a directory seen twice): whole walks
                // from now on, without trying again each time.
                slot.refused = true;
            }
        }
        Ok((SnapshotId(id), stats))
    }

    /// Walks `top` — the tree's `prefix` (`""`: the root) — listing every
    /// path under it with `prefix`, and watching each directory first
    /// when `live` is given.
    pub(super) fn walk(
        &self,
        top: &Path,
        prefix: &str,
        cache: &mut StatCache,
        mut live: Option<&mut Live>,
        stats: &mut SnapshotStats,
    ) -> Result<Manifest, SnapshotError> {
        let mut manifest = Manifest::default();
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
            if let Some(entry) = self.entry_of(item.path(), &meta, &rel, cache, stats)? {
                manifest.entries.insert(rel, entry);
            }
        }
        Ok(manifest)
    }

    /// What `abs` (at `rel`) is, as a snapshot keeps it; a file the cache
    /// does not answer is read and stored. None: gone, unreadable, or a
    /// kind nothing keeps (sockets, fifos, devices).
    pub(super) fn entry_of(
        &self,
        abs: &Path,
        meta: &fs::Metadata,
        rel: &str,
        cache: &mut StatCache,
        stats: &mut SnapshotStats,
    ) -> Result<Option<Entry>, SnapshotError> {
        let kind = meta.file_type();
        if kind.is_symlink() {
            let Ok(target) = fs::read_link(abs) else {
                return Ok(None);
            };
            return Ok(Some(Entry::Symlink {
                target: target.to_string_lossy().into_owned(),
            }));
        }
        let mode = meta.permissions().mode() & 0o7777;
        if kind.is_dir() {
            return Ok(Some(Entry::Dir { mode }));
        }
        if !kind.is_file() {
            return Ok(None);
        }
        let size = meta.len();
        if size > self.max_file_bytes {
            return Ok(Some(Entry::TooLarge {
                size,
                mtime_ns: mtime_ns(meta),
            }));
        }
        let stat = Stat {
            size,
            mtime_ns: mtime_ns(meta),
            ctime_ns: ctime_ns(meta),
            ino: meta.ino(),
            hash: String::new(),
        };
        let cached = cache.old.get(rel).filter(|c| {
            c.size == stat.size
                && c.mtime_ns == stat.mtime_ns
                && c.ctime_ns == stat.ctime_ns
                && c.ino == stat.ino
        });
        let hash = match cached {
            Some(c) => c.hash.clone(),
            None => {
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
        if stat.mtime_ns < cache.racy_after && stat.ctime_ns < cache.racy_after {
            cache.new.insert(
                rel.to_string(),
                Stat {
                    hash: hash.clone(),
                    ..stat
                },
            );
        }
        Ok(Some(Entry::File { hash, mode, size }))
    }
}
