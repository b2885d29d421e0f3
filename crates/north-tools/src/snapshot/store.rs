//! The content-addressed store: blobs and manifests under one directory,
//! and the stat cache that makes repeated snapshots cheap.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

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

/// One name in a directory's tree object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct TreeItem {
    entry: Entry,
    /// For a directory: the tree object of what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tree: Option<String>,
}

/// A content-addressed store of working-tree snapshots (see the module docs).
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
    max_file_bytes: u64,
    max_new_bytes: u64,
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
    fn put(&self, bytes: &[u8]) -> Result<(String, u64), SnapshotError> {
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

    fn read_tree(
        &self,
        hash: &str,
        prefix: &str,
        out: &mut Manifest,
        depth: usize,
    ) -> Result<(), SnapshotError> {
        /// Deeper than any real tree: a damaged store cannot loop forever.
        const MAX_DEPTH: usize = 4096;
        let corrupt = |message: String| SnapshotError::Corrupt {
            path: self.object_path(hash).unwrap_or_default(),
            message,
        };
        if depth > MAX_DEPTH {
            return Err(corrupt("trees nested too deep".into()));
        }
        let bytes = self.blob(hash)?;
        let tree: BTreeMap<String, TreeItem> =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        for (name, item) in tree {
            if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                return Err(corrupt(format!("bad name {name:?} in a tree")));
            }
            let path = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if let Some(child) = &item.tree {
                self.read_tree(child, &path, out, depth + 1)?;
            }
            out.entries.insert(path, item.entry);
        }
        Ok(())
    }

    /// Stores `manifest` as one tree object per directory (as git does), so
    /// a snapshot after a few edits writes only the trees on their paths.
    fn put_manifest(&self, manifest: &Manifest) -> Result<(String, u64), SnapshotError> {
        let mut dirs: BTreeMap<String, BTreeMap<String, TreeItem>> = BTreeMap::new();
        dirs.insert(String::new(), BTreeMap::new());
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
        order.sort_by_key(|d| {
            std::cmp::Reverse(if d.is_empty() {
                0
            } else {
                d.matches('/').count() + 1
            })
        });
        let mut written = 0;
        let mut root = String::new();
        for dir in order {
            let items = dirs.remove(&dir).unwrap_or_default();
            let json = serde_json::to_vec(&items).map_err(|e| SnapshotError::Corrupt {
                path: self.dir.clone(),
                message: e.to_string(),
            })?;
            let (hash, n) = self.put(&json)?;
            written += n;
            if dir.is_empty() {
                root = hash;
                continue;
            }
            let (parent, name) = dir.rsplit_once('/').unwrap_or(("", &dir));
            if let Some(item) = dirs.get_mut(parent).and_then(|p| p.get_mut(name)) {
                item.tree = Some(hash);
            }
        }
        Ok((root, written))
    }

    fn load_cache(&self) -> BTreeMap<String, Stat> {
        fs::read(self.dir.join(CACHE_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// The cache is only a hint (every entry is checked against the file's
    /// stat), so a failed write costs speed, never correctness.
    fn save_cache(&self, cache: &BTreeMap<String, Stat>) {
        let path = self.dir.join(CACHE_FILE);
        if let Ok(bytes) = serde_json::to_vec(cache) {
            let temp = temp_path_for(&path, &std::process::id().to_string());
            if fs::write(&temp, bytes)
                .and_then(|()| fs::rename(&temp, &path))
                .is_err()
            {
                let _ = fs::remove_file(&temp);
            }
        }
    }

    /// Snapshots the tree under `root` (see the module docs).
    pub fn snapshot(&self, root: &Path) -> Result<(SnapshotId, SnapshotStats), SnapshotError> {
        let old_cache = self.load_cache();
        let mut cache = BTreeMap::new();
        let mut manifest = Manifest::default();
        let mut stats = SnapshotStats::default();
        let racy_after = now_ns() - RACY_NS;
        for item in walker(root).build() {
            // An entry that vanished or cannot be read mid-walk is left out,
            // as if the walk had come a moment later.
            let Ok(item) = item else { continue };
            let Ok(rel) = item.path().strip_prefix(root) else {
                continue;
            };
            let Some(rel) = rel.to_str().filter(|r| !r.is_empty()) else {
                continue;
            };
            let rel = rel.to_string();
            let Ok(meta) = fs::symlink_metadata(item.path()) else {
                continue;
            };
            let kind = meta.file_type();
            let entry = if kind.is_symlink() {
                let Ok(target) = fs::read_link(item.path()) else {
                    continue;
                };
                Entry::Symlink {
                    target: target.to_string_lossy().into_owned(),
                }
            } else if kind.is_dir() {
                Entry::Dir {
                    mode: meta.permissions().mode() & 0o7777,
                }
            } else if kind.is_file() {
                let size = meta.len();
                if size > self.max_file_bytes {
                    Entry::TooLarge {
                        size,
                        mtime_ns: mtime_ns(&meta),
                    }
                } else {
                    let stat = Stat {
                        size,
                        mtime_ns: mtime_ns(&meta),
                        ctime_ns: ctime_ns(&meta),
                        ino: meta.ino(),
                        hash: String::new(),
                    };
                    let cached = old_cache.get(&rel).filter(|c| {
                        c.size == stat.size
                            && c.mtime_ns == stat.mtime_ns
                            && c.ctime_ns == stat.ctime_ns
                            && c.ino == stat.ino
                    });
                    let hash = match cached {
                        Some(c) => c.hash.clone(),
                        None => {
                            let Ok(bytes) = fs::read(item.path()) else {
                                continue;
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
                    if stat.mtime_ns < racy_after && stat.ctime_ns < racy_after {
                        cache.insert(
                            rel.clone(),
                            Stat {
                                hash: hash.clone(),
                                ..stat
                            },
                        );
                    }
                    Entry::File {
                        hash,
                        mode: meta.permissions().mode() & 0o7777,
                        size,
                    }
                }
            } else {
                // Sockets, fifos, devices: nothing to keep.
                continue;
            };
            manifest.entries.insert(rel, entry);
        }
        stats.entries = manifest.entries.len();
        let (hash, written) = self.put_manifest(&manifest)?;
        stats.bytes_written += written;
        if cache != old_cache {
            self.save_cache(&cache);
        }
        Ok((SnapshotId(hash), stats))
    }
}
