//! `north mcp serve` applies the user's hooks as every other front end does:
//! a blocking `PreToolUse` hook stops a call an MCP client makes, and a
//! `PostToolUse` hook's feedback reaches the client with the result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn the_users_hooks_run_around_calls_an_mcp_client_makes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let home = dir.path().join("home");
    let config = home.join("config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.json"),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "grep -q 'rm -rf' && { echo 'no deleting here' >&2; exit 2; }; exit 0"}]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command",
                "command": "echo 'read noted' >&2; exit 2"}]}]
        }})
        .to_string(),
    )
    .unwrap();
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
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut call = |id: u64, method: &str, params: Value| -> Value {
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        if method == "initialize" {
            let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            // Sent after the answer below is read.
            let answer = read_answer(&mut lines, id);
            writeln!(stdin, "{ready}").unwrap();
            return answer;
        }
        read_answer(&mut lines, id)
    };
    let init = call(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hooks", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    let blocked = call(
        1,
        "tools/call",
        json!({"name": "shell_run", "arguments": {"command": "rm -rf src"}}),
    );
    let shown = blocked["result"].to_string();
    assert_eq!(blocked["result"]["isError"], json!(true), "{shown}");
    assert!(shown.contains("no deleting here"), "{shown}");
    assert!(root.join("src/main.rs").exists(), "the blocked command ran");
    let read = call(
        2,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "src/main.rs"}}),
    );
    let shown = read["result"].to_string();
    assert!(shown.contains("read noted"), "{shown}");
    let _ = child.kill();
    let _ = child.wait();
}

fn read_answer(lines: &mut impl Iterator<Item = std::io::Result<String>>, id: u64) -> Value {
    for line in lines {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap_or(Value::Null);
        if message["id"] == json!(id) {
            return message;
        }
    }
    panic!("the server closed before answering {id}");
}
