//! Undo snapshots of a tree: the first snapshot, a whole walk answered by
//! the stat cache (what a new process does), and watched snapshots with
//! nothing changed, after 10 files changed in 10 directories, and after a
//! new directory of 100 files. Prints time and bytes written.
//!
//! `cargo bench -p north-tools --bench snapshot` generates a 10,000-file
//! tree; `NORTH_BENCH_TREE=DIR` snapshots an existing tree instead (10
//! files are written into its first directories and removed at the end).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use north_tools::snapshot::{SnapshotStats, SnapshotStore};

const FILES: usize = 10_000;

fn generated(dir: &Path) -> PathBuf {
    let root = dir.join("repo");
    for i in 0..FILES {
        let sub = root.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&sub).unwrap();
        let body = format!("// file {i}\npub fn f{i}() -> usize {{ {i} }}\n").repeat(20);
        std::fs::write(sub.join(format!("f{i}.rs")), body).unwrap();
    }
    // Files must be older than the racy window to be trusted from the cache.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    root
}

/// Up to `n` directories of the tree, depth first.
fn some_dirs(root: &Path, n: usize, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    entries.sort();
    for dir in entries {
        if out.len() >= n {
            return;
        }
        out.push(dir.clone());
        some_dirs(&dir, n, out);
    }
}

fn timed(label: &str, f: impl FnOnce() -> SnapshotStats) {
    let t = Instant::now();
    let s = f();
    println!(
        "{label:<34} {:>9.1} ms  {:>10} bytes  ({} entries, {} hashed, {})",
        t.elapsed().as_secs_f64() * 1e3,
        s.bytes_written,
        s.entries,
        s.hashed,
        if s.full_walk { "whole walk" } else { "watched" }
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = match std::env::var_os("NORTH_BENCH_TREE") {
        Some(tree) => PathBuf::from(tree),
        None => generated(dir.path()),
    };
    let store_dir = dir.path().join("store");
    let store = SnapshotStore::open(&store_dir).unwrap();
    timed("first snapshot", || store.snapshot(&root).unwrap().1);
    let fresh = SnapshotStore::open(&store_dir).unwrap();
    fresh.forget_watches();
    timed("whole walk, stats kept in the trees (new process)", || {
        fresh.snapshot(&root).unwrap().1
    });
    let mut best = (f64::MAX, SnapshotStats::default());
    for _ in 0..5 {
        let t = Instant::now();
        let (_, s) = fresh.snapshot(&root).unwrap();
        best = (best.0.min(t.elapsed().as_secs_f64() * 1e3), s);
    }
    println!(
        "{:<34} {:>9.1} ms  {:>10} bytes  (best of 5, {})",
        "watched, nothing changed",
        best.0,
        best.1.bytes_written,
        if best.1.full_walk {
            "whole walk"
        } else {
            "watched"
        }
    );
    let mut dirs = Vec::new();
    some_dirs(&root, 10, &mut dirs);
    let written: Vec<PathBuf> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| d.join(format!("north-bench-{i}.txt")))
        .collect();
    for (i, p) in written.iter().enumerate() {
        std::fs::write(p, format!("changed {i}\n")).unwrap();
    }
    timed("watched, 10 files in 10 dirs", || {
        fresh.snapshot(&root).unwrap().1
    });
    let new_dir = root.join("north-bench-new");
    std::fs::create_dir_all(&new_dir).unwrap();
    for i in 0..100 {
        std::fs::write(new_dir.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    timed("watched, a new dir of 100 files", || {
        fresh.snapshot(&root).unwrap().1
    });
    for p in &written {
        let _ = std::fs::remove_file(p);
    }
    let _ = std::fs::remove_dir_all(&new_dir);
}
