//! `atomic_write` on a bare relative file name used to fsync the directory
//! `""` after the rename and fail. This binary holds one test because it
//! changes the process's working directory.
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::Path;

use north_tools::repo::atomic_write;

#[test]
fn atomic_write_to_a_bare_relative_file_name_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    atomic_write(Path::new("notes.txt"), b"kept").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "kept"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temp file is left behind");
}
