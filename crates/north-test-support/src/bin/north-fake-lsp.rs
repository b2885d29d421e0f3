//! A language server that misbehaves on purpose, for North's tests:
//! `north-fake-lsp hang|crash|flood|huge|crash-once MARKER`. It speaks LSP
//! framing on stdin and stdout.
//!
//! - `hang`: reads everything, answers nothing.
//! - `crash`: answers `initialize`, then exits when a document opens.
//! - `flood`: answers `initialize`; for every document version, 300
//!   `publishDiagnostics` notifications of 50 items, then one final set.
//!   (It was 3,000: on a loaded 2-core machine the reader could fall more
//!   than North's 400 ms settle time behind one of them, and a noise set
//!   was taken as the last word.)
//! - `huge`: answers `initialize`; then one message past North's limit.
//! - `crash-once MARKER`: the first run (no file at MARKER yet) makes
//!   MARKER and exits when a document opens, as a server that dies under
//!   load; a later run publishes one error, `checked after a restart`.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn read(input: &mut impl BufRead) -> Option<Value> {
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    input.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn write(out: &mut impl Write, v: &Value) {
    let body = v.to_string();
    let _ = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
    let _ = out.flush();
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while let Some(msg) = read(&mut input) {
        if mode == "hang" {
            continue;
        }
        let method = msg["method"].as_str().unwrap_or_default();
        if method == "initialize" {
            write(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}}}),
            );
            continue;
        }
        let doc = &msg["params"]["textDocument"];
        // Where a symbol is defined or used: the file's first letter.
        if matches!(
            method,
            "textDocument/definition" | "textDocument/references"
        ) {
            write(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": msg["id"], "result": [
                    {"uri": doc["uri"], "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}
                ]}),
            );
            continue;
        }
        if !matches!(method, "textDocument/didOpen" | "textDocument/didChange") {
            continue;
        }
        match mode.as_str() {
            "crash" => std::process::exit(3),
            "crash-once" => {
                let marker = std::env::args().nth(2).unwrap_or_default();
                if std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&marker)
                    .is_ok()
                {
                    std::process::exit(3);
                }
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": doc["uri"], "version": doc["version"], "diagnostics": [
                        {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "severity": 1, "message": "checked after a restart"}
                    ]}}),
                );
            }
            "huge" => {
                let _ = write!(out, "Content-Length: {}\r\n\r\n", 64 * 1024 * 1024);
                let _ = out.write_all(&vec![b' '; 1024 * 1024]);
                let _ = out.flush();
            }
            "flood" => {
                let uri = doc["uri"].clone();
                let version = doc["version"].clone();
                let many: Vec<Value> = (0..50)
                    .map(|i| json!({"range": {"start": {"line": i, "character": 0}, "end": {"line": i, "character": 1}}, "severity": 2, "message": format!("noise {i}")}))
                    .collect();
                for _ in 0..300 {
                    write(
                        &mut out,
                        &json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": uri, "version": version, "diagnostics": many}}),
                    );
                }
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": uri, "version": version, "diagnostics": [
                        {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "severity": 1, "message": "flooded"}
                    ]}}),
                );
            }
            _ => {}
        }
    }
}
