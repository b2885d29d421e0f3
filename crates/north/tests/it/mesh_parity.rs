//! `north mesh` like every other front end: the user's hooks (a blocking
//! PreToolUse hook blocks a mesh command and the model is told why; the
//! executor's session ends with the SessionEnd hooks) and the user's MCP
//! servers' tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::interop;
use serde_json::{Value, json};

use crate::common;
use common::mesh_script::{bash, plan, say};
use common::{Sandbox, recorded, text};

#[test]
fn the_users_hooks_run_around_the_meshs_commands() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join("src")).unwrap();
    std::fs::write(sb.project().join("src/main.rs"), "fn main() {}\n").unwrap();
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "grep -q 'rm -rf' && { echo 'no deleting here' >&2; exit 2; }; exit 0"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "touch \"$NORTH_PROJECT_DIR/mesh-ended.txt\""}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let script = sb.file(
        "script.json",
        &json!([
            plan(&[("Clean up", Some("bash"))]),
            bash("c1", "rm -rf src"),
            say("Cleaned."),
            say("Nothing was deleted."),
        ]),
    );
    let requests = sb.project().join("../requests-mesh.jsonl");
    let out = sb
        .north()
        .args(["mesh", "--allow-shell", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("Clean up the sources")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        sb.project().join("src/main.rs").exists(),
        "the blocking hook did not block: {stderr}"
    );
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(
        sent.contains("no deleting here"),
        "the model is told why: {sent}"
    );
    assert!(
        sb.project().join("mesh-ended.txt").exists(),
        "the SessionEnd hook ran: {stderr}"
    );
}

#[test]
fn the_users_mcp_servers_tools_are_offered_to_the_mesh() {
    let Some((node, modules)) = interop::mcp() else {
        return;
    };
    let sb = Sandbox::new();
    let project = sb.project().canonicalize().unwrap();
    std::fs::write(project.join("notes.txt"), "the launch code is tangerine\n").unwrap();
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {"fs": {
            "command": node.display().to_string(),
            "args": [interop::package_entry(&modules, "server-filesystem"), project.display().to_string()],
        }}})
        .to_string(),
    )
    .unwrap();
    let path = project.join("notes.txt").display().to_string();
    let script = sb.file(
        "script.json",
        &json!([
            plan(&[("Read the notes", None)]),
            {"tool_calls": [{"id": "m1", "name": "mcp__fs__read_text_file", "args": {"path": path}}]},
            say("Read."),
            say("The notes name a fruit."),
        ]),
    );
    let requests = sb.project().join("../requests-mcp.jsonl");
    let out = sb
        .north()
        .args(["mesh", "--grant", "tool:mcp__fs", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("What do my notes say?")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(sent.contains("mcp__fs__read_text_file"), "offered: {sent}");
    assert!(sent.contains("the launch code is tangerine"), "{sent}");
}
