//! The project allowlist (`.north/allowlist.json`) and the mesh
//! `policy.json`: loading, presets, checks and atomic persistence.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_policy::{MeshPolicy, PolicyDenial, PolicyError, PolicyPreset};
use north_tools::allowlist::{AllowlistError, ProjectAllowlist};
use serde_json::{Value, json};

#[test]
fn a_missing_allowlist_is_empty() {
    let root = tempfile::tempdir().unwrap();
    let list = ProjectAllowlist::load(root.path()).unwrap();
    assert!(list.commands().is_empty());
    assert!(!list.contains("pnpm test"));
    assert_eq!(list.path(), root.path().join(".north/allowlist.json"));
    assert!(
        !root.path().join(".north").exists(),
        "loading must not create files"
    );
}

#[test]
fn commands_match_exactly() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join(".north")).unwrap();
    std::fs::write(
        root.path().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["pnpm test", "bun test", "composer test"]}"#,
    )
    .unwrap();
    let list = ProjectAllowlist::load(root.path()).unwrap();
    assert!(list.contains("pnpm test"));
    assert!(list.contains("composer test"));
    // Surrounding whitespace does not defeat a rule (spec gap: a trailing
    // space used to make an "always" rule ask again).
    assert!(list.contains("pnpm test "));
    assert!(list.contains(" pnpm test"));
    for near_miss in ["pnpm  test", "PNPM TEST", "pnpm test; rm x", "pnpm"] {
        assert!(!list.contains(near_miss), "{near_miss:?}");
    }
}

#[test]
fn add_persists_atomically_and_keeps_other_content() {
    let root = tempfile::tempdir().unwrap();
    let north = root.path().join(".north");
    let mut list = ProjectAllowlist::load(root.path()).unwrap();
    assert!(list.add("cargo test").unwrap());
    assert!(!list.add("cargo test").unwrap(), "second add is a no-op");
    assert!(list.contains("cargo test"));

    // Someone else edits the file meanwhile: their entries and keys survive.
    let path = north.join("allowlist.json");
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    file["allowedCommands"]
        .as_array_mut()
        .unwrap()
        .push(json!("make lint"));
    file["note"] = json!("kept");
    std::fs::write(&path, file.to_string()).unwrap();

    assert!(list.add("npm test").unwrap());
    let reloaded = ProjectAllowlist::load(root.path()).unwrap();
    assert_eq!(reloaded.commands(), ["cargo test", "make lint", "npm test"]);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["note"], "kept");
    let leftovers: Vec<_> = std::fs::read_dir(&north)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "allowlist.json")
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[cfg(unix)]
#[test]
fn add_preserves_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let mut list = ProjectAllowlist::load(root.path()).unwrap();
    list.add("a").unwrap();
    let path = list.path().to_owned();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    list.add("b").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_malformed_allowlist_is_an_error_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join(".north")).unwrap();
    for bad in [
        "{not json",
        r#"{"allowedCommands": "pnpm test"}"#,
        r#"{"allowedCommands": [1]}"#,
        "[]",
    ] {
        std::fs::write(root.path().join(".north/allowlist.json"), bad).unwrap();
        let err = ProjectAllowlist::load(root.path()).unwrap_err();
        assert!(
            matches!(err, AllowlistError::Malformed { .. }),
            "{bad}: {err}"
        );
        assert!(err.to_string().contains(".north/allowlist.json"), "{err}");
    }
    // A list loaded before the file went bad refuses to overwrite it on add.
    std::fs::write(root.path().join(".north/allowlist.json"), "{}").unwrap();
    let mut list = ProjectAllowlist::load(root.path()).unwrap();
    std::fs::write(root.path().join(".north/allowlist.json"), "[]").unwrap();
    assert!(matches!(
        list.add("x"),
        Err(AllowlistError::Malformed { .. })
    ));
    assert_eq!(
        std::fs::read_to_string(root.path().join(".north/allowlist.json")).unwrap(),
        "[]"
    );
}

#[test]
fn an_empty_command_cannot_be_allowed() {
    let root = tempfile::tempdir().unwrap();
    let mut list = ProjectAllowlist::load(root.path()).unwrap();
    assert!(matches!(list.add(""), Err(AllowlistError::EmptyCommand)));
}

#[test]
fn presets_match_the_spec() {
    let c = MeshPolicy::preset(PolicyPreset::Conservative);
    assert_eq!(c.allowed_commands, ["ls", "cat", "grep", "find"]);
    assert!(!c.write_enabled);
    assert_eq!(c.max_file_size, 100_000);
    let b = MeshPolicy::preset(PolicyPreset::Balanced);
    assert_eq!(b.allowed_commands, ["ls", "cat", "pwd", "echo", "grep"]);
    assert!(b.write_enabled);
    assert_eq!(b.max_file_size, 200_000);
    assert_eq!(MeshPolicy::default(), b);
    let p = MeshPolicy::preset(PolicyPreset::Permissive);
    assert_eq!(
        p.allowed_commands,
        [
            "ls", "cat", "pwd", "echo", "grep", "find", "head", "tail", "git"
        ]
    );
    assert!(p.write_enabled);
    assert_eq!(p.max_file_size, 1_000_000);
    assert_eq!(
        "Permissive".parse::<PolicyPreset>().unwrap(),
        PolicyPreset::Permissive
    );
    assert!(matches!(
        "lenient".parse::<PolicyPreset>(),
        Err(PolicyError::UnknownPreset(_))
    ));
}

#[test]
fn policy_files_load_with_defaults_and_strict_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.json");
    assert_eq!(MeshPolicy::load(&path).unwrap(), MeshPolicy::default());

    std::fs::write(
        &path,
        r#"{"allowed_commands": ["ls"], "write_enabled": false}"#,
    )
    .unwrap();
    let policy = MeshPolicy::load(&path).unwrap();
    assert_eq!(policy.allowed_commands, ["ls"]);
    assert!(!policy.write_enabled);
    assert_eq!(
        policy.max_file_size, 200_000,
        "missing fields take balanced values"
    );

    std::fs::write(&path, r#"{"allowed_command": ["ls"]}"#).unwrap();
    let err = MeshPolicy::load(&path).unwrap_err();
    assert!(err.to_string().contains("policy.json"), "{err}");
    assert!(err.to_string().contains("allowed_command"), "{err}");

    std::fs::write(&path, r#"{"max_file_size": "big"}"#).unwrap();
    assert!(matches!(
        MeshPolicy::load(&path),
        Err(PolicyError::Malformed { .. })
    ));

    // The documented example file round-trips.
    let example = serde_json::to_string(&MeshPolicy::preset(PolicyPreset::Balanced)).unwrap();
    assert_eq!(
        example,
        r#"{"allowed_commands":["ls","cat","pwd","echo","grep"],"write_enabled":true,"max_file_size":200000}"#
    );
}

#[test]
fn checks_return_the_documented_messages() {
    let conservative = MeshPolicy::preset(PolicyPreset::Conservative);
    let balanced = MeshPolicy::default();
    insta::assert_snapshot!(
        "policy_denial_messages",
        [
            balanced.check_command("rm -rf /").unwrap_err().to_string(),
            balanced.check_command("ls; rm x").unwrap_err().to_string(),
            balanced.check_command("ls `rm x`").unwrap_err().to_string(),
            conservative.check_write().unwrap_err().to_string(),
            conservative
                .check_file_size(100_001)
                .unwrap_err()
                .to_string(),
        ]
        .join("\n")
    );
    assert!(balanced.check_write().is_ok());
    assert!(balanced.check_file_size(200_000).is_ok());
    assert_eq!(
        balanced.check_file_size(200_001),
        Err(PolicyDenial::FileTooLarge {
            size: 200_001,
            max: 200_000
        })
    );
}
