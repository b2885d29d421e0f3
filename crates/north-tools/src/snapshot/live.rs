//! What a store keeps between two snapshots of one tree in one process,
//! so the second costs what changed rather than the size of the tree: each
//! directory's tree object and an inotify watch on it.
//!
//! The kernel queues an event before the call that changed a directory
//! returns, whoever made it (a sandboxed command in its own namespaces
//! changes the same inodes), so draining the queue before re-listing tells
//! every directory whose names, contents or modes changed since the last
//! snapshot. Where events cannot say what the walk would now see — the
//! queue overflowed, a directory moved, an ignore file changed (inside the
//! tree or outside it), watches ran out — the store walks the whole tree
//! again. Not seen: a file changed through a hard link outside the tree,
//! and writes through a shared memory map that is never closed.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};

use super::store::{StatCache, TreeItem, TreeItems, Trees, depth, join, split};
use super::{Entry, SnapshotError, SnapshotId, SnapshotStats, SnapshotStore};
use crate::repo::walker;

/// Names whose change can change what the walk lists anywhere below.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Past this many directories a tree is walked whole each time rather
/// than watched (the kernel's own limit usually comes first).
const MAX_WATCHED: usize = 100_000;

/// The store's watched state, shared by its clones.
#[derive(Debug, Default)]
pub(super) struct LiveSlot {
    pub(super) live: Option<Live>,
    /// Watching failed once (out of watches): whole walks from then on.
    pub(super) refused: bool,
}

/// One directory being watched.
#[derive(Debug)]
struct Watched {
    /// Its tree object as the last snapshot stored it.
    tree: String,
    /// How many names that tree holds.
    count: usize,
    wd: WatchDescriptor,
    /// Its inode when watched: a directory deleted and made again under
    /// the same name is another directory.
    ino: u64,
}

/// A tree's directories, watched (see the module docs).
#[derive(Debug)]
pub(super) struct Live {
    pub(super) root: PathBuf,
    inotify: Inotify,
    dirs: HashMap<String, Watched>,
    by_wd: HashMap<WatchDescriptor, String>,
    /// The ignore files outside the tree the walk reads, as they were.
    outside: Vec<Option<Stamp>>,
    /// A watch could not be added: this state cannot be trusted.
    broken: bool,
}

/// What happened since the last snapshot, by directory.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Directories whose listing changed, with the names that did.
    dirs: BTreeMap<String, BTreeSet<String>>,
    /// Directories deleted (or replaced) since they were watched.
    stale: BTreeSet<String>,
}

type Stamp = (i64, i64, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = fs::symlink_metadata(path).ok()?;
    Some((
        meta.mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
        meta.ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.ctime_nsec()),
        meta.len(),
        meta.ino(),
    ))
}

/// The ignore files the walk reads from outside the tree: the parents'
/// `.gitignore` and `.ignore`, git's exclude file, and the user's global
/// git config and ignore file.
fn outside_stamps(root: &Path) -> Vec<Option<Stamp>> {
    let mut files = vec![root.join(".git/info/exclude")];
    for dir in root.ancestors().skip(1) {
        files.extend(IGNORE_FILES.iter().map(|name| dir.join(name)));
        files.push(dir.join(".git/info/exclude"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        files.push(home.join(".gitconfig"));
        let config =
            std::env::var_os("XDG_CONFIG_HOME").map_or_else(|| home.join(".config"), PathBuf::from);
        files.push(config.join("git/config"));
        files.push(config.join("git/ignore"));
    }
    files.iter().map(|f| stamp(f)).collect()
}

impl Live {
    /// A watcher for the tree at `root` (None where inotify is not there).
    pub(super) fn new(root: &Path) -> Option<Live> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        Some(Live {
            root: root.to_path_buf(),
            inotify,
            dirs: HashMap::new(),
            by_wd: HashMap::new(),
            outside: outside_stamps(root),
            broken: false,
        })
    }

    /// Watches directory `abs` (at `rel`) before it is listed.
    pub(super) fn watch(&mut self, rel: &str, abs: &Path, ino: u64) {
        if self.broken {
            return;
        }
        if self.dirs.len() >= MAX_WATCHED {
            self.broken = true;
            return;
        }
        let mask = AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_ATTRIB
            | AddWatchFlags::IN_CLOSE_WRITE
            | AddWatchFlags::IN_MOVED_FROM
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF
            | AddWatchFlags::IN_ONLYDIR
            | AddWatchFlags::IN_DONT_FOLLOW;
        let Ok(wd) = self.inotify.add_watch(abs, mask) else {
            self.broken = true;
            return;
        };
        // One inode at two paths (a bind mount inside the tree): events
        // could not say which path changed.
        if self.by_wd.get(&wd).is_some_and(|other| other != rel) {
            self.broken = true;
            return;
        }
        self.by_wd.insert(wd, rel.to_string());
        self.dirs.insert(
            rel.to_string(),
            Watched {
                tree: String::new(),
                count: 0,
                wd,
                ino,
            },
        );
    }

    /// Takes the trees a whole walk stored; false when the state cannot be
    /// used (a watch failed, a directory was not stored).
    pub(super) fn adopt(&mut self, trees: Trees) -> bool {
        self.record(trees);
        !self.broken && self.dirs.values().all(|w| !w.tree.is_empty())
    }

    fn record(&mut self, trees: Trees) {
        for (dir, (tree, count)) in trees {
            if let Some(w) = self.dirs.get_mut(&dir) {
                w.tree = tree;
                w.count = count;
            }
        }
    }

    /// Stops watching `rel` and everything under it.
    fn forget(&mut self, rel: &str) {
        let under = format!("{rel}/");
        let gone: Vec<String> = self
            .dirs
            .keys()
            .filter(|d| *d == rel || d.starts_with(&under) || rel.is_empty())
            .cloned()
            .collect();
        for dir in gone {
            if let Some(w) = self.dirs.remove(&dir)
                && self.by_wd.get(&w.wd) == Some(&dir)
            {
                self.by_wd.remove(&w.wd);
                // Already gone when the directory was deleted.
                let _ = self.inotify.rm_watch(w.wd);
            }
        }
    }

    /// Paths listed by the last snapshot.
    fn entries(&self) -> usize {
        self.dirs.values().map(|w| w.count).sum()
    }

    /// What happened since the last snapshot; None when only a whole walk
    /// can tell.
    pub(super) fn changes(&mut self) -> Option<Changes> {
        if self.broken || self.outside != outside_stamps(&self.root) {
            return None;
        }
        let mut changes = Changes::default();
        loop {
            match self.inotify.read_events() {
                Ok(events) => {
                    for event in events {
                        if !self.note(event, &mut changes) {
                            return None;
                        }
                    }
                }
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => {}
                Err(_) => return None,
            }
        }
        Some(changes)
    }

    /// Adds one event to `changes`; false when it needs a whole walk.
    fn note(&self, event: InotifyEvent, changes: &mut Changes) -> bool {
        let mask = event.mask;
        if mask.intersects(AddWatchFlags::IN_Q_OVERFLOW | AddWatchFlags::IN_UNMOUNT) {
            return false;
        }
        // A watch this state already let go of.
        let Some(dir) = self.by_wd.get(&event.wd) else {
            return true;
        };
        let moved_dir = mask.contains(AddWatchFlags::IN_ISDIR)
            && mask.intersects(AddWatchFlags::IN_MOVED_FROM | AddWatchFlags::IN_MOVED_TO);
        if moved_dir || mask.contains(AddWatchFlags::IN_MOVE_SELF) {
            return false;
        }
        if mask.intersects(AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_IGNORED) {
            let Some((parent, name)) = split(dir) else {
                return false;
            };
            changes
                .dirs
                .entry(parent.to_string())
                .or_default()
                .insert(name.to_string());
            changes.stale.insert(dir.clone());
            return true;
        }
        match event.name {
            Some(name) => {
                // A name the walk would skip cannot change the snapshot.
                let Some(name) = name.to_str() else {
                    return true;
                };
                if IGNORE_FILES.contains(&name) {
                    return false;
                }
                changes
                    .dirs
                    .entry(dir.clone())
                    .or_default()
                    .insert(name.to_string());
            }
            // The directory itself (its mode): its parent lists it.
            None => {
                if let Some((parent, name)) = split(dir) {
                    changes
                        .dirs
                        .entry(parent.to_string())
                        .or_default()
                        .insert(name.to_string());
                }
            }
        }
        true
    }
}

impl SnapshotStore {
    /// A snapshot from `changes`: the directories they name re-listed,
    /// their ancestors' trees stored again. Ok(None): the watched state
    /// does not add up, walk the whole tree.
    pub(super) fn apply_changes(
        &self,
        live: &mut Live,
        changes: &Changes,
    ) -> Result<Option<(SnapshotId, SnapshotStats)>, SnapshotError> {
        let mut todo: BTreeSet<(Reverse<usize>, String)> = BTreeSet::new();
        for dir in changes.dirs.keys() {
            let mut at = Some(dir.as_str());
            while let Some(d) = at {
                if !todo.insert((Reverse(depth(d)), d.to_string())) {
                    break;
                }
                at = split(d).map(|(parent, _)| parent);
            }
        }
        let mut stats = SnapshotStats::default();
        for (_, dir) in todo {
            // Its parent lists it again (and walks it if it is back).
            if changes.stale.contains(&dir) {
                continue;
            }
            let Some(tree) = live.dirs.get(&dir).map(|w| w.tree.clone()) else {
                continue;
            };
            let mut items = self.tree_items(&tree)?;
            if let Some(names) = changes.dirs.get(&dir) {
                self.relist(live, &dir, &mut items, names, &changes.stale, &mut stats)?;
            }
            for (name, item) in &mut items {
                if matches!(item.entry, Entry::Dir { .. }) {
                    let Some(w) = live.dirs.get(&join(&dir, name)) else {
                        return Ok(None);
                    };
                    item.tree = Some(w.tree.clone());
                }
            }
            let (hash, written) = self.put_tree(&items)?;
            stats.bytes_written += written;
            if let Some(w) = live.dirs.get_mut(&dir) {
                w.tree = hash;
                w.count = items.len();
            }
        }
        if live.broken {
            return Ok(None);
        }
        let Some(root) = live.dirs.get("") else {
            return Ok(None);
        };
        stats.entries = live.entries();
        Ok(Some((SnapshotId(root.tree.clone()), stats)))
    }

    /// Lists directory `dir` again (as the walk would: ignore files and
    /// all) into `items`: names gone are dropped, names that are new or
    /// had events are looked at, a directory that is new (or replaced) is
    /// walked and watched. Other names keep what they were.
    fn relist(
        &self,
        live: &mut Live,
        dir: &str,
        items: &mut TreeItems,
        names: &BTreeSet<String>,
        stale: &BTreeSet<String>,
        stats: &mut SnapshotStats,
    ) -> Result<(), SnapshotError> {
        let abs_dir = live.root.join(dir);
        let mut listed: BTreeMap<String, PathBuf> = BTreeMap::new();
        for item in walker(&abs_dir).max_depth(Some(1)).build() {
            let Ok(item) = item else { continue };
            if item.depth() != 1 {
                continue;
            }
            let Some(name) = item.file_name().to_str() else {
                continue;
            };
            listed.insert(name.to_string(), item.path().to_path_buf());
        }
        let gone: Vec<String> = items
            .keys()
            .filter(|n| !listed.contains_key(*n))
            .cloned()
            .collect();
        for name in gone {
            if let Some(TreeItem {
                entry: Entry::Dir { .. },
                ..
            }) = items.remove(&name)
            {
                live.forget(&join(dir, &name));
            }
        }
        let mut cache = StatCache::none();
        for (name, abs) in listed {
            let rel = join(dir, &name);
            let was_dir = matches!(
                items.get(&name),
                Some(TreeItem {
                    entry: Entry::Dir { .. },
                    ..
                })
            );
            if items.contains_key(&name) && !names.contains(&name) && !stale.contains(&rel) {
                continue;
            }
            let Ok(meta) = fs::symlink_metadata(&abs) else {
                if was_dir {
                    live.forget(&rel);
                }
                items.remove(&name);
                continue;
            };
            if meta.is_dir() {
                let kept = was_dir
                    && !stale.contains(&rel)
                    && live.dirs.get(&rel).is_some_and(|w| w.ino == meta.ino());
                if !kept {
                    live.forget(&rel);
                    let manifest = self.walk(&abs, &rel, &mut cache, Some(live), stats)?;
                    let (written, trees) = self.put_trees(&manifest, &rel)?;
                    stats.bytes_written += written;
                    live.record(trees);
                }
                let mode = meta.permissions().mode() & 0o7777;
                items.insert(
                    name,
                    TreeItem {
                        entry: Entry::Dir { mode },
                        tree: None,
                    },
                );
                continue;
            }
            if was_dir {
                live.forget(&rel);
            }
            match self.entry_of(&abs, &meta, &rel, &mut cache, stats)? {
                Some(entry) => {
                    items.insert(name, TreeItem { entry, tree: None });
                }
                None => {
                    items.remove(&name);
                }
            }
        }
        Ok(())
    }
}
