//! `north mcp serve` applies the user's hooks as every other front end does:
//! a blocking `PreToolUse` hook stops a call an MCP client makes, and a
//! `PostToolUse` hook's feedback reaches the client with the result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::jsonrpc::StdioClient;

use crate::common;
use std::process::{Command, Stdio};

use serde_json::json;

#[test]
fn the_users_hooks_run_around_calls_an_mcp_client_makes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let home = dir.path().join("home");
    let config = home.join("config/north");
    common::write_guard_hooks(&config);
    let mut child = Command::new(env!("CARGO_BIN_EXE_north"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .current_dir(&root)
        .args(["mcp", "serve", "--allow-shell"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut client = StdioClient::new(&mut child);
    let init = client.initialize("hooks");
    assert!(init.get("result").is_some(), "{init}");
    let blocked = client.request(
        1,
        "tools/call",
        json!({"name": "shell_run", "arguments": {"command": "rm -rf src"}}),
    );
    let shown = blocked["result"].to_string();
    assert_eq!(blocked["result"]["isError"], json!(true), "{shown}");
    assert!(shown.contains("no deleting here"), "{shown}");
    assert!(root.join("src/main.rs").exists(), "the blocked command ran");
    let read = client.request(
        2,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "src/main.rs"}}),
    );
    let shown = read["result"].to_string();
    assert!(shown.contains("read noted"), "{shown}");
    let _ = child.kill();
    let _ = child.wait();
}
