//! The misbehaving language server North's tests use answers as each mode
//! says (this test also makes `cargo test --workspace` build it).

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};

fn message(v: &serde_json::Value) -> Vec<u8> {
    let body = v.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[test]
fn the_crash_mode_answers_initialize_then_exits_at_the_first_document() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_north-fake-lsp"))
        .arg("crash")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&message(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        ))
        .unwrap();
    stdin
        .write_all(&message(&serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///a", "version": 1, "text": ""}}})))
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3));
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(out.contains("\"capabilities\""), "{out}");
}
