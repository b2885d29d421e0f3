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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};

use super::tree::{Stamp, Trees, split};

/// Names whose change can change what the walk lists anywhere below.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Past this many directories a tree is walked whole each time rather
/// than watched (the kernel's own limit usually comes first).
const MAX_WATCHED: usize = 100_000;

/// Past this many changed names between two snapshots, a whole walk costs
/// less than re-listing them (and the list stays bounded in a watcher
/// that drains the queue while nobody asks).
const MAX_PENDING: usize = 200_000;

/// The store's watched state, shared by its clones.
#[derive(Debug, Default)]
pub(super) struct LiveSlot {
    pub(super) live: Option<Live>,
    /// Watching failed once (out of watches): whole walks from then on.
    pub(super) refused: bool,
    /// The snapshot this process last named in the store's `last` file
    /// (not written again while it stays the same).
    pub(super) last: Option<String>,
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
    outside: Vec<Outside>,
    /// A watch could not be added: this state cannot be trusted.
    broken: bool,
    /// Events drained from the queue since the last snapshot.
    pending: Changes,
    /// An event since the last snapshot needs a whole walk.
    lost: bool,
}

/// What happened since the last snapshot, by directory.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Directories whose listing changed, with the names that did.
    pub(super) dirs: BTreeMap<String, BTreeSet<String>>,
    /// Directories deleted (or replaced) since they were watched.
    pub(super) stale: BTreeSet<String>,
    /// How many names `dirs` holds.
    names: usize,
}

impl Changes {
    /// Name `name` in directory `dir` changed.
    fn touch(&mut self, dir: &str, name: &str) {
        if self
            .dirs
            .entry(dir.to_string())
            .or_default()
            .insert(name.to_string())
        {
            self.names += 1;
        }
    }
}

/// What an ignore file outside the tree was: its stamp and size.
type Outside = Option<(Stamp, u64)>;

fn stamp(path: &Path) -> Outside {
    let meta = fs::symlink_metadata(path).ok()?;
    Some((Stamp::of(&meta), meta.len()))
}

/// The ignore files the walk reads from outside the tree: the parents'
/// `.gitignore` and `.ignore`, git's exclude file, and the user's global
/// git config and ignore file.
fn outside_stamps(root: &Path) -> Vec<Outside> {
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
            pending: Changes::default(),
            lost: false,
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

    /// Takes the trees a walk of part of the tree stored.
    pub(super) fn record(&mut self, trees: Trees) {
        for (dir, (tree, count)) in trees {
            self.set_tree(&dir, tree, count);
        }
    }

    /// Stops watching `rel` and everything under it.
    pub(super) fn forget(&mut self, rel: &str) {
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
    pub(super) fn entries(&self) -> usize {
        self.dirs.values().map(|w| w.count).sum()
    }

    /// Directory `dir`'s tree object, when it is watched.
    pub(super) fn tree_of(&self, dir: &str) -> Option<&str> {
        self.dirs.get(dir).map(|w| w.tree.as_str())
    }

    /// Whether `dir` is watched as the directory with inode `ino`.
    pub(super) fn watches(&self, dir: &str, ino: u64) -> bool {
        self.dirs.get(dir).is_some_and(|w| w.ino == ino)
    }

    /// Records directory `dir`'s new tree object.
    pub(super) fn set_tree(&mut self, dir: &str, tree: String, count: usize) {
        if let Some(w) = self.dirs.get_mut(dir) {
            w.tree = tree;
            w.count = count;
        }
    }

    /// Whether a watch failed since this state was whole.
    pub(super) fn broken(&self) -> bool {
        self.broken
    }

    /// What happened since the last snapshot; None when only a whole walk
    /// can tell.
    pub(super) fn changes(&mut self) -> Option<Changes> {
        self.drain();
        if self.broken || self.lost || self.outside != outside_stamps(&self.root) {
            return None;
        }
        Some(std::mem::take(&mut self.pending))
    }

    /// Moves the kernel's queued events into this state, so a watcher that
    /// waits for requests never lets the queue overflow.
    pub(super) fn drain(&mut self) {
        loop {
            match self.inotify.read_events() {
                Ok(events) => {
                    for event in events {
                        if self.lost {
                            continue;
                        }
                        let mut pending = std::mem::take(&mut self.pending);
                        self.lost = !self.note(event, &mut pending)
                            || pending.names + pending.stale.len() > MAX_PENDING;
                        self.pending = pending;
                    }
                    if self.lost {
                        self.pending = Changes::default();
                    }
                }
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => {}
                Err(_) => {
                    self.lost = true;
                    break;
                }
            }
        }
    }

    /// The queue's descriptor, for a watcher that polls it.
    pub(super) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.inotify.as_fd()
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
            changes.touch(parent, name);
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
                changes.touch(dir, name);
            }
            // The directory itself (its mode): its parent lists it.
            None => {
                if let Some((parent, name)) = split(dir) {
                    changes.touch(parent, name);
                }
            }
        }
        true
    }
}
