//! Applying proposals through the public API: atomically across files,
//! stale proposals refused with nothing written, permissions kept, no temp
//! files left.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use std::os::unix::fs::PermissionsExt;

use north_tools::edit::ApplyError;
use serde_json::json;
use tools_support::{Project, batch_fixture};

// ---------- apply ----------

#[test]
fn stale_proposal_is_refused_and_nothing_is_written() {
    let p = batch_fixture();
    let proposal = p
        .propose(
            "edit_apply_batch",
            json!({"edits": [
                {"toolName": "edit_replace_exact", "args": {"path": "src/a.rs", "old": "a", "new": "A"}},
                {"toolName": "edit_replace_exact", "args": {"path": "src/b.rs", "old": "b", "new": "B"}},
            ]}),
        )
        .unwrap();
    p.write("src/b.rs", "fn b() { changed }\n");
    let before = p.snapshot_tree();
    let err = p.apply(&proposal).unwrap_err();
    assert!(
        matches!(err, ApplyError::Stale { ref path } if path == "src/b.rs"),
        "{err}"
    );
    assert!(err.to_string().contains("changed since the proposal"));
    assert_eq!(p.snapshot_tree(), before);
}

#[test]
fn file_created_after_a_create_proposal_is_stale() {
    let p = Project::new();
    let proposal = p
        .propose(
            "edit_create_file",
            json!({"path": "n.txt", "content": "mine"}),
        )
        .unwrap();
    p.write("n.txt", "theirs");
    assert!(matches!(p.apply(&proposal), Err(ApplyError::Stale { .. })));
    assert_eq!(p.read("n.txt"), "theirs");
}

#[test]
fn deleted_file_is_stale() {
    let p = batch_fixture();
    let proposal = p
        .propose(
            "edit_replace_exact",
            json!({"path": "src/a.rs", "old": "a", "new": "A"}),
        )
        .unwrap();
    std::fs::remove_file(p.path("src/a.rs")).unwrap();
    assert!(matches!(p.apply(&proposal), Err(ApplyError::Stale { .. })));
    assert!(!p.path("src/a.rs").exists());
}

#[test]
fn apply_preserves_permissions_and_leaves_no_temp_files() {
    let p = Project::new();
    p.write("run.sh", "#!/bin/sh\necho a\n");
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o751)).unwrap();
    p.propose_apply(
        "edit_replace_exact",
        json!({"path": "run.sh", "old": "echo a", "new": "echo b"}),
    );
    assert_eq!(p.read("run.sh"), "#!/bin/sh\necho b\n");
    let mode = std::fs::metadata(p.path("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o751);
    let names: Vec<_> = std::fs::read_dir(p.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // Only the apply lock stays: no journal, no temp file.
    let txn: Vec<_> = std::fs::read_dir(p.path(".north/txn"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(txn, ["lock"], "{txn:?}");
}

#[test]
fn applying_twice_is_stale_the_second_time() {
    let p = batch_fixture();
    let proposal = p
        .propose(
            "edit_replace_exact",
            json!({"path": "src/a.rs", "old": "a()", "new": "a2()"}),
        )
        .unwrap();
    p.apply(&proposal).unwrap();
    assert!(matches!(p.apply(&proposal), Err(ApplyError::Stale { .. })));
    assert_eq!(p.read("src/a.rs"), "fn a2() {}\n");
}

#[test]
fn proposal_round_trips_through_json() {
    let p = batch_fixture();
    let proposal = p
        .propose(
            "edit_replace_exact",
            json!({"path": "src/a.rs", "old": "a()", "new": "a2()"}),
        )
        .unwrap();
    let text = serde_json::to_string(&proposal).unwrap();
    let back: north_tools::edit::Proposal = serde_json::from_str(&text).unwrap();
    assert_eq!(back, proposal);
    p.apply(&back).unwrap();
    assert_eq!(p.read("src/a.rs"), "fn a2() {}\n");
}
