//! The store's tricky corners: writing through a symlinked directory,
//! damaged objects, files above the cap, trees round-tripping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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
