//! A snapshot from what the watches saw: the directories with events
//! re-listed, their ancestors' trees stored again (see [`super::live`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use super::live::{Changes, Live};
use super::tree::{TreeItem, TreeItems, depth, join, split};
use super::walk::{Look, racy_after};
use super::{Entry, SnapshotError, SnapshotId, SnapshotStats, SnapshotStore};
use crate::repo::walker;

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
            let Some(tree) = live.tree_of(&dir).map(str::to_owned) else {
                continue;
            };
            let mut items = self.tree_items(&tree)?;
            if let Some(names) = changes.dirs.get(&dir) {
                self.relist(live, &dir, &mut items, names, &changes.stale, &mut stats)?;
            }
            for (name, item) in &mut items {
                if matches!(item.entry, Entry::Dir { .. }) {
                    let Some(tree) = live.tree_of(&join(&dir, name)) else {
                        return Ok(None);
                    };
                    item.tree = Some(tree.to_owned());
                }
            }
            let (hash, written) = self.put_tree(&items)?;
            stats.bytes_written += written;
            live.set_tree(&dir, hash, items.len());
        }
        if live.broken() {
            return Ok(None);
        }
        let Some(root) = live.tree_of("").map(str::to_owned) else {
            return Ok(None);
        };
        stats.entries = live.entries();
        Ok(Some((SnapshotId(root), stats)))
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
        // A name with an event is read again whatever its stat says.
        let look = Look {
            prev: None,
            racy_after: racy_after(),
        };
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
                let kept = was_dir && !stale.contains(&rel) && live.watches(&rel, meta.ino());
                if !kept {
                    live.forget(&rel);
                    let trees = self.walk(&abs, &rel, None, Some(live), stats)?;
                    live.record(trees);
                }
                let mode = meta.permissions().mode() & 0o7777;
                items.insert(
                    name,
                    TreeItem {
                        entry: Entry::Dir { mode },
                        tree: None,
                        stat: None,
                    },
                );
                continue;
            }
            if was_dir {
                live.forget(&rel);
            }
            match self.entry_of(&abs, &meta, &look, stats)? {
                Some(item) => {
                    items.insert(name, item);
                }
                None => {
                    items.remove(&name);
                }
            }
        }
        Ok(())
    }
}
