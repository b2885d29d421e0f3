//! `north acp` against an independent client: the official TypeScript ACP
//! SDK (`tests/interop/acp/client.mjs`, installed by `.ci/run` with
//! `npm ci`) runs a prompt, grants the edit's permission request and checks
//! the file on disk. Skips, saying why, only where Node.js or the packages
//! are missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/acp")
}

#[test]
fn the_typescript_sdk_client_runs_a_prompt_and_grants_an_edit() {
    let dir = interop_dir();
    if Command::new("node").arg("--version").output().is_err() {
        north_test_support::missing(
            "node is not installed (the ACP interop test needs Node.js 20+)",
        );
        return;
    }
    if !dir.join("node_modules/@agentclientprotocol/sdk").is_dir() {
        north_test_support::missing(
            "run `npm ci` in tests/interop/acp first (.ci/run does) to install @agentclientprotocol/sdk",
        );
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let project = base.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let script = base.join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"text": "EDITING", "tool_calls": [{"id": "e1", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
            {"text": "INTEROP-DONE"}
        ]})
        .to_string(),
    )
    .unwrap();
    let home = base.join("home");
    let out = Command::new("node")
        .current_dir(&dir)
        .arg("client.mjs")
        .arg(env!("CARGO_BIN_EXE_north"))
        .arg(&script)
        .arg(&project)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "checks failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(
        report["checks"]
            .as_object()
            .unwrap()
            .values()
            .all(|v| v == true),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "two\n"
    );
}

#[test]
fn an_editors_mcp_server_works_in_its_session_and_its_forms_reach_the_editor() {
    let dir = interop_dir();
    let Some((node, modules)) = north_test_support::interop::mcp() else {
        return;
    };
    if !dir.join("node_modules/@agentclientprotocol/sdk").is_dir() {
        north_test_support::missing("run `npm ci` in tests/interop/acp first (.ci/run does)");
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let project = base.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let script = base.join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"tool_calls": [{"id": "r1", "name": "mcp__everything__get-roots-list", "args": {}}]},
            {"tool_calls": [{"id": "e1", "name": "mcp__everything__trigger-elicitation-request", "args": {}}]},
            {"text": "MCP-DONE"}
        ]})
        .to_string(),
    )
    .unwrap();
    let requests = base.join("requests.jsonl");
    let home = base.join("home");
    let out = Command::new(&node)
        .current_dir(&dir)
        .arg("client-mcp.mjs")
        .arg(env!("CARGO_BIN_EXE_north"))
        .arg(&script)
        .arg(&project)
        .arg(&requests)
        .arg(&node)
        .arg(north_test_support::interop::package_entry(
            &modules,
            "server-everything",
        ))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "checks failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
