//! The store's tricky corners: writing through a symlinked directory,
//! damaged objects, files above the cap, trees round-tripping.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::collections::BTreeSet;

use super::*;

fn setup() -> (tempfile::TempDir, std::path::PathBuf, SnapshotStore) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("d/e")).unwrap();
    std::fs::write(root.join("d/f"), "inside\n").unwrap();
    std::fs::write(root.join("d/e/g"), "deep\n").unwrap();
    std::fs::write(root.join("top"), "top\n").unwrap();
    let store = SnapshotStore::open(&dir.path().join("store")).unwrap();
    (dir, root, store)
}

#[test]
fn trees_round_trip_every_entry() {
    let (_d, root, store) = setup();
    let (id, stats) = store.snapshot(&root).unwrap();
    let m = store.manifest(&id).unwrap();
    let paths: Vec<&str> = m.entries.keys().map(String::as_str).collect();
    assert_eq!(paths, ["d", "d/e", "d/e/g", "d/f", "top"]);
    assert_eq!(stats.entries, 5);
    // The same tree again writes nothing and names the same snapshot.
    let (again, stats) = store.snapshot(&root).unwrap();
    assert_eq!(again, id);
    assert_eq!(stats.bytes_written, 0);
}

#[test]
fn restore_refuses_to_write_through_a_symlinked_directory() {
    let (dir, root, store) = setup();
    let (id, _) = store.snapshot(&root).unwrap();
    let target = store.manifest(&id).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(root.join("d")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("d")).unwrap();
    let only_file: BTreeSet<String> = ["d/f".to_string()].into();
    let err = restore(&store, &root, &target, &only_file).unwrap_err();
    assert!(matches!(err, SnapshotError::UnsafePath(_)), "{err}");
    assert!(!outside.join("f").exists(), "nothing written outside");
    // With the directory itself in the set, the link is replaced first.
    let both: BTreeSet<String> = ["d".to_string(), "d/f".to_string()].into();
    restore(&store, &root, &target, &both).unwrap();
    assert!(std::fs::symlink_metadata(root.join("d")).unwrap().is_dir());
    assert_eq!(
        std::fs::read_to_string(root.join("d/f")).unwrap(),
        "inside\n"
    );
    assert!(!outside.join("f").exists());
}

#[test]
fn paths_that_leave_the_root_are_refused() {
    let (_d, root, store) = setup();
    let (id, _) = store.snapshot(&root).unwrap();
    let target = store.manifest(&id).unwrap();
    for bad in ["../x", "/etc/passwd", "d/../../x", ""] {
        let set: BTreeSet<String> = [bad.to_string()].into();
        assert!(
            matches!(
                restore(&store, &root, &target, &set),
                Err(SnapshotError::UnsafePath(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn a_damaged_object_is_found_before_anything_changes() {
    let (_d, root, store) = setup();
    let (id, _) = store.snapshot(&root).unwrap();
    let target = store.manifest(&id).unwrap();
    let Some(Entry::File { hash, .. }) = target.entries.get("top") else {
        panic!("top is a file");
    };
    let object = store
        .dir()
        .join("objects")
        .join(&hash[..2])
        .join(&hash[2..]);
    std::fs::write(&object, "tampered").unwrap();
    std::fs::write(root.join("top"), "changed\n").unwrap();
    std::fs::write(root.join("d/f"), "changed too\n").unwrap();
    let set: BTreeSet<String> = ["d/f".to_string(), "top".to_string()].into();
    let err = restore(&store, &root, &target, &set).unwrap_err();
    assert!(matches!(err, SnapshotError::Corrupt { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("d/f")).unwrap(),
        "changed too\n"
    );
}

#[test]
fn files_above_the_cap_are_listed_not_copied() {
    let (_d, root, store) = setup();
    let store = store.with_max_file_bytes(5);
    let (id, _) = store.snapshot(&root).unwrap();
    let m = store.manifest(&id).unwrap();
    assert!(matches!(m.entries["d/f"], Entry::TooLarge { size: 7, .. }));
    assert!(matches!(m.entries["top"], Entry::File { size: 4, .. }));
    std::fs::write(root.join("d/f"), "other\n!").unwrap();
    let set: BTreeSet<String> = ["d/f".to_string()].into();
    let report = restore(&store, &root, &m, &set).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(
        std::fs::read_to_string(root.join("d/f")).unwrap(),
        "other\n!"
    );
}

#[test]
fn a_tree_too_big_for_one_snapshot_is_refused_not_copied_whole() {
    let (_d, root, store) = setup();
    let store = store.with_max_new_bytes(8);
    let err = store.snapshot(&root).unwrap_err();
    assert!(matches!(err, SnapshotError::TooLarge { limit: 8 }), "{err}");
    assert!(err.to_string().contains(".gitignore"), "{err}");
}

#[test]
fn undo_never_restores_under_git_or_north_state() {
    use super::restorable;
    for refused in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".north/allowlist.json",
        "../outside",
        "/abs",
        "",
    ] {
        assert!(!restorable(refused), "{refused}");
    }
    for fine in [
        "src/main.rs",
        ".github/workflows/ci.yml",
        "a/.gitignore",
        "notes.txt",
    ] {
        assert!(restorable(fine), "{fine}");
    }
}

/// What a whole walk by a store that never saw the tree lists.
fn walked(root: &std::path::Path) -> Manifest {
    let dir = tempfile::tempdir().unwrap();
    let store = SnapshotStore::open(dir.path()).unwrap();
    let (id, stats) = store.snapshot(root).unwrap();
    assert!(stats.full_walk);
    store.manifest(&id).unwrap()
}

/// Every directory and file under `dir` (links not followed), ignored or not.
fn everything(
    dir: &std::path::Path,
    dirs: &mut Vec<std::path::PathBuf>,
    files: &mut Vec<std::path::PathBuf>,
) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for e in read.flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            dirs.push(e.path());
            everything(&e.path(), dirs, files);
        } else {
            files.push(e.path());
        }
    }
}

/// One random change of the kinds a turn makes: files written, rewritten
/// at the same size, deleted, renamed, re-moded; directories made,
/// removed, replaced, renamed; links; secret and ignored files; ignore
/// files.
fn mutate(root: &std::path::Path, rng: &mut fastrand::Rng) {
    use std::os::unix::fs::PermissionsExt;
    let mut dirs = vec![root.to_path_buf()];
    let mut files = Vec::new();
    everything(root, &mut dirs, &mut files);
    let names = ["a", "b", "c.txt", "d.rs", "ignored-1", "e"];
    let dir = dirs[rng.usize(..dirs.len())].clone();
    let shallow = dir.strip_prefix(root).unwrap().components().count() < 3;
    let name = names[rng.usize(..names.len())];
    let file = (!files.is_empty()).then(|| files[rng.usize(..files.len())].clone());
    let inner = (dirs.len() > 1).then(|| dirs[1 + rng.usize(..dirs.len() - 1)].clone());
    let text = |rng: &mut fastrand::Rng| format!("{:08}\n", rng.u32(..100_000_000));
    match rng.u32(..100) {
        0..20 => {
            let path = dir.join(name);
            if !path.is_dir() {
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::write(path, text(rng));
            }
        }
        20..32 => {
            if let Some(f) = file.filter(|f| f.is_file() && !f.is_symlink()) {
                std::fs::write(f, text(rng)).unwrap(); // same size, new bytes
            }
        }
        32..40 => {
            if let Some(f) = file {
                let _ = std::fs::remove_file(f);
            }
        }
        40..48 => {
            if shallow && !dir.join(name).exists() {
                let _ = std::fs::create_dir(dir.join(name));
                let _ = std::fs::write(dir.join(name).join("inner"), text(rng));
            }
        }
        48..54 => {
            if let Some(d) = inner {
                let _ = std::fs::remove_dir_all(d);
            }
        }
        54..62 => {
            if let Some(f) = file
                && !dir.join(name).is_dir()
            {
                let _ = std::fs::rename(f, dir.join(name));
            }
        }
        62..70 => {
            if let Some(f) = file.filter(|f| f.is_file() && !f.is_symlink()) {
                let mode = if rng.bool() { 0o755 } else { 0o644 };
                let _ = std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode));
            }
        }
        70..75 => {
            if let Some(d) = inner {
                let mode = if rng.bool() { 0o700 } else { 0o755 };
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode));
            }
        }
        75..81 => {
            let path = dir.join(name);
            if !path.is_dir() {
                let _ = std::fs::remove_file(&path);
                let _ = std::os::unix::fs::symlink(format!("target-{}", rng.u8(..4)), path);
            }
        }
        81..85 => {
            let _ = std::fs::write(dir.join(".env"), text(rng));
        }
        85..89 => {
            // A directory deleted and made again under its name.
            if let Some(d) = inner {
                let _ = std::fs::remove_dir_all(&d);
                let _ = std::fs::create_dir(&d);
                let _ = std::fs::write(d.join("again"), text(rng));
            }
        }
        89..93 => {
            // A file where a directory was, and the other way round.
            if let Some(d) = inner {
                let _ = std::fs::remove_dir_all(&d);
                let _ = std::fs::write(&d, text(rng));
            } else if let Some(f) = file {
                let _ = std::fs::remove_file(&f);
                let _ = std::fs::create_dir(&f);
            }
        }
        93..96 => {
            if let Some(d) = inner
                && !dir.join(name).exists()
                && !dir.starts_with(&d)
            {
                let _ = std::fs::rename(d, dir.join(name));
            }
        }
        96..98 => {
            let _ = std::fs::write(dir.join(".gitignore"), "ignored-*\n");
        }
        _ => {
            let _ = std::fs::remove_file(dir.join(".gitignore"));
        }
    }
}

#[test]
fn a_watched_snapshot_lists_what_a_whole_walk_lists() {
    let (_d, root, store) = setup();
    let (_, first) = store.snapshot(&root).unwrap();
    assert!(first.full_walk);
    let mut rng = fastrand::Rng::with_seed(20261129);
    let mut watched = 0;
    for round in 0..400 {
        for _ in 0..rng.usize(1..4) {
            mutate(&root, &mut rng);
        }
        let (id, stats) = store.snapshot(&root).unwrap();
        watched += usize::from(!stats.full_walk);
        let seen = store.manifest(&id).unwrap();
        pretty_assertions::assert_eq!(seen, walked(&root), "round {round}");
        assert_eq!(stats.entries, seen.entries.len(), "round {round}");
    }
    // Moved directories and ignore files walk everything; the rest not.
    assert!(watched > 250, "{watched} of 400 snapshots used the watches");
}

#[test]
fn a_snapshot_after_one_edit_reads_one_file() {
    let (_d, root, store) = setup();
    for i in 0..50 {
        std::fs::create_dir_all(root.join(format!("many/{i}"))).unwrap();
        std::fs::write(root.join(format!("many/{i}/f")), format!("{i}\n")).unwrap();
    }
    let (_, first) = store.snapshot(&root).unwrap();
    assert!(first.full_walk);
    std::fs::write(root.join("many/7/f"), "seven\n").unwrap();
    let (id, stats) = store.snapshot(&root).unwrap();
    assert!(!stats.full_walk);
    assert_eq!(stats.hashed, 1);
    let m = store.manifest(&id).unwrap();
    let Some(Entry::File { hash, .. }) = m.entries.get("many/7/f") else {
        panic!("many/7/f is a file");
    };
    assert_eq!(store.blob(hash).unwrap(), b"seven\n");
    // Nothing happened: the same snapshot, nothing read or written.
    let (again, stats) = store.snapshot(&root).unwrap();
    assert_eq!((again, stats.hashed, stats.bytes_written), (id, 0, 0));
}

/// What a watcher does while nobody asks: events drained from the
/// kernel's queue between snapshots are kept for the next one.
#[test]
fn events_drained_between_snapshots_are_not_lost() {
    let (_d, root, store) = setup();
    let (_, first) = store.snapshot(&root).unwrap();
    assert!(first.full_walk);
    std::fs::write(root.join("d/f"), "changed\n").unwrap();
    store.slot().live.as_mut().unwrap().drain();
    std::fs::write(root.join("d/e/new"), "new\n").unwrap();
    store.slot().live.as_mut().unwrap().drain();
    std::fs::remove_file(root.join("top")).unwrap();
    let (id, stats) = store.snapshot(&root).unwrap();
    assert!(!stats.full_walk);
    assert_eq!(stats.hashed, 2);
    assert_eq!(store.manifest(&id).unwrap(), walked(&root));
}

#[test]
fn a_new_process_reads_only_the_files_whose_stat_changed() {
    let (dir, root, store) = setup();
    for i in 0..30 {
        std::fs::write(root.join(format!("d/e/n{i}")), format!("{i}\n")).unwrap();
    }
    // Stats of files changed within the last two seconds are not kept.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let (_, first) = store.snapshot(&root).unwrap();
    assert_eq!(first.hashed, 33);
    std::fs::write(root.join("d/e/n7"), "seven\n").unwrap();
    std::fs::remove_file(root.join("top")).unwrap();
    // Another process: no watches, only the store on disk.
    let again = SnapshotStore::open(&dir.path().join("store")).unwrap();
    again.forget_watches();
    let (id, stats) = again.snapshot(&root).unwrap();
    assert!(stats.full_walk);
    assert_eq!(stats.hashed, 1);
    assert_eq!(again.manifest(&id).unwrap(), walked(&root));
}

#[test]
fn sessions_of_one_project_share_its_watches() {
    let (dir, root, store) = setup();
    let (_, first) = store.snapshot(&root).unwrap();
    assert!(first.full_walk);
    // Another session of the project in this process (`north serve`).
    let other = SnapshotStore::open(&dir.path().join("store")).unwrap();
    std::fs::write(root.join("d/f"), "changed\n").unwrap();
    let (id, stats) = other.snapshot(&root).unwrap();
    assert!(!stats.full_walk);
    assert_eq!(stats.hashed, 1);
    assert_eq!(other.manifest(&id).unwrap(), walked(&root));
}

#[test]
fn a_link_planted_as_an_object_is_refused_not_followed() {
    let (_d, root, store) = setup();
    let (id, _) = store.snapshot(&root).unwrap();
    let object = store
        .dir()
        .join("objects")
        .join(&id.0[..2])
        .join(&id.0[2..]);
    std::fs::remove_file(&object).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &object).unwrap();
    let err = store.manifest(&id).unwrap_err();
    assert!(matches!(err, SnapshotError::Corrupt { .. }), "{err}");
    // A new process's walk takes the link for no hint and reads the files.
    store.forget_watches();
    let (again, stats) = store.snapshot(&root).unwrap();
    assert_eq!(stats.hashed, 3);
    assert_eq!(store.manifest(&again).unwrap(), walked(&root));
}

/// A repository that ships `.north/snapshots`, its `objects` or a fan-out
/// folder as a link out of the project gets nothing written out there.
#[test]
fn a_store_planted_as_links_is_refused_or_replaced_never_written_through() {
    let (dir, root, _) = setup();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let linked = dir.path().join("linked-store");
    std::os::unix::fs::symlink(&outside, &linked).unwrap();
    assert!(matches!(
        SnapshotStore::open(&linked),
        Err(SnapshotError::Linked(_))
    ));
    let store_dir = dir.path().join("objects-linked");
    std::fs::create_dir_all(&store_dir).unwrap();
    std::os::unix::fs::symlink(&outside, store_dir.join("objects")).unwrap();
    assert!(matches!(
        SnapshotStore::open(&store_dir),
        Err(SnapshotError::Linked(_))
    ));
    // Every fan-out folder a link: each is replaced by a real one.
    let store_dir = dir.path().join("fanout-linked");
    let store = SnapshotStore::open(&store_dir).unwrap();
    for i in 0..256 {
        std::os::unix::fs::symlink(&outside, store_dir.join(format!("objects/{i:02x}"))).unwrap();
    }
    let (id, _) = store.snapshot(&root).unwrap();
    assert_eq!(store.manifest(&id).unwrap(), walked(&root));
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written through a link"
    );
}
