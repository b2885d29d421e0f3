//! Trust decisions, fingerprints and laundering.
#![allow(clippy::unwrap_used)]
use super::*;

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn always_does_not_launder_other_changes() {
    let home = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted.json"));
    let dir = project(&[(".north/allowlist.json", r#"{"allowedCommands": ["ls"]}"#)]);
    store.trust(dir.path()).unwrap();
    // The user's "Always" adds a rule: still trusted.
    std::fs::write(
        dir.path().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["ls", "cargo test"]}"#,
    )
    .unwrap();
    assert!(store.trust_own_write(dir.path()).unwrap());
    assert_eq!(
        store.evaluate(dir.path()).unwrap().state,
        TrustState::Trusted
    );
    // The model rewrote .mcp.json meanwhile; a later "Always" keeps the
    // old decision, so the project asks again.
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"x": {"command": "sh", "args": ["evil.sh"]}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["ls", "cargo test", "echo hi"]}"#,
    )
    .unwrap();
    assert!(!store.trust_own_write(dir.path()).unwrap());
    assert_eq!(
        store.evaluate(dir.path()).unwrap().state,
        TrustState::Changed
    );
    // A project that needed no trust: only the rule just written may
    // be trusted by "Always", nothing else the model added.
    let fresh = project(&[(
        ".mcp.json",
        r#"{"mcpServers": {"x": {"command": "sh", "args": ["evil.sh"]}}}"#,
    )]);
    std::fs::write(fresh.path().join(".north-placeholder"), "").unwrap();
    std::fs::create_dir_all(fresh.path().join(".north")).unwrap();
    std::fs::write(
        fresh.path().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["echo hi"]}"#,
    )
    .unwrap();
    assert!(!store.trust_own_write(fresh.path()).unwrap());
    assert!(is_trust_file(".mcp.json") && is_trust_file(".claude/settings.json"));
    assert!(!is_trust_file("src/main.rs"));
}

#[test]
fn a_project_is_trusted_until_its_security_settings_change() {
    let home = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted.json"));
    let p = project(&[
        (
            ".north/project.json",
            r#"{"allow_shell": true, "model": "a"}"#,
        ),
        (".north/allowlist.json", r#"{"allowedCommands": ["make"]}"#),
    ]);
    let r = store.evaluate(p.path()).unwrap();
    assert_eq!(r.state, TrustState::Untrusted);
    assert_eq!(r.wants.len(), 2, "{:?}", r.wants);
    assert!(r.notice().unwrap().contains("north trust"));
    store.trust(p.path()).unwrap();
    assert_eq!(store.evaluate(p.path()).unwrap().state, TrustState::Trusted);
    // A model change is not a security change.
    std::fs::write(
        p.path().join(".north/project.json"),
        r#"{"allow_shell": true, "model": "b"}"#,
    )
    .unwrap();
    assert_eq!(store.evaluate(p.path()).unwrap().state, TrustState::Trusted);
    std::fs::write(
        p.path().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["make", "curl evil"]}"#,
    )
    .unwrap();
    assert_eq!(store.evaluate(p.path()).unwrap().state, TrustState::Changed);
    assert!(store.revoke(p.path()).unwrap());
    assert_eq!(
        store.evaluate(p.path()).unwrap().state,
        TrustState::Untrusted
    );
}

#[test]
fn narrowing_settings_need_no_trust_and_endpoints_are_never_taken() {
    let home = tempfile::tempdir().unwrap();
    let store = TrustStore::at(home.path().join("trusted.json"));
    let p = project(&[
        (
            ".north/project.json",
            r#"{"allow_shell": false, "anthropic_base_url": "http://127.0.0.1:9"}"#,
        ),
        (
            "policy.json",
            r#"{"allowed_commands": ["ls"], "write_enabled": false}"#,
        ),
    ]);
    let r = store.evaluate(p.path()).unwrap();
    assert_eq!(r.state, TrustState::NothingToTrust);
    assert!(r.applies());
    assert_eq!(r.never, ["anthropic_base_url"]);
    assert!(r.notice().unwrap().contains("anthropic_base_url"));
}
