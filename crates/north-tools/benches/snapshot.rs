//! Undo snapshots of a 10,000-file tree: the first snapshot, an
//! incremental one with nothing changed, and one after 10 files changed.
//! Prints time and bytes written (`cargo bench -p north-tools --bench snapshot`).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Instant;

use north_tools::snapshot::SnapshotStore;

const FILES: usize = 10_000;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    for i in 0..FILES {
        let sub = root.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&sub).unwrap();
        let body = format!("// file {i}\npub fn f{i}() -> usize {{ {i} }}\n").repeat(20);
        std::fs::write(sub.join(format!("f{i}.rs")), body).unwrap();
    }
    let store = SnapshotStore::open(&dir.path().join("store")).unwrap();
    // Files must be older than the racy window to be trusted from the cache.
    std::thread::sleep(std::time::Duration::from_millis(2_100));

    let t = Instant::now();
    let (_, first) = store.snapshot(&root).unwrap();
    println!(
        "first snapshot:       {:>8.1} ms  {:>10} bytes  ({} entries, {} hashed)",
        t.elapsed().as_secs_f64() * 1e3,
        first.bytes_written,
        first.entries,
        first.hashed
    );
    let mut best = f64::MAX;
    let mut bytes = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let (_, s) = store.snapshot(&root).unwrap();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        bytes = s.bytes_written;
    }
    println!("incremental, no change: {best:>6.1} ms  {bytes:>10} bytes");
    for i in 0..10 {
        let p = root.join(format!("src/m{:03}/f{i}.rs", i));
        std::fs::write(p, format!("changed {i}\n")).unwrap();
    }
    let t = Instant::now();
    let (_, s) = store.snapshot(&root).unwrap();
    println!(
        "incremental, 10 edits: {:>6.1} ms  {:>10} bytes  ({} hashed)",
        t.elapsed().as_secs_f64() * 1e3,
        s.bytes_written,
        s.hashed
    );
}
