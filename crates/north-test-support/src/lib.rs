//! Test support for North: fake model-provider servers on 127.0.0.1 that
//! speak the real Anthropic and OpenAI wire formats event by event.
//!
//! Main types: [`FakeServer`] (queue of [`Reply`]s, captures every
//! [`CapturedRequest`]), [`Fault`] (reset, cut, stall at a byte offset),
//! the stream builders in [`anthropic`] (thinking included), [`openai`]
//! (Chat Completions) and [`responses`] (the Responses API), and the context
//! discovery answers of llama.cpp, vLLM and Ollama in [`discovery`], and
//! Node.js and the npm MCP packages for interop tests in [`interop`]. Recorded
//! streams live in `fixtures/` ([`fixture`]).
//!
//! The server is a small hand-written HTTP/1.1 responder rather than a
//! framework so faults land exactly where a test puts them. It must never
//! bind anything but loopback.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `anthropic`: anthropic Messages API wire format
//! - `bin`
//! - `corpus`: the adversarial command corpus (`fixtures/command-corpus.txt`) and the scratch layout…
//! - `discovery`: what model servers answer when asked for their context size, in each server's own…
//! - `jsonrpc`: a plain JSON-RPC client on a child's stdio (MCP's stdio transport)
//! - `interop`: finding Node.js and the npm packages `.ci/run` installs for the MCP interop tests…
//! - `openai`: openAI Chat Completions wire format
//! - `recorded`: the tool result or text a recorded request carries
//! - `responses`: openAI Responses API wire format (uses `openai`)
//! - `server`: the fake HTTP server

pub mod anthropic;
pub mod corpus;
pub mod discovery;
pub mod interop;
pub mod jsonrpc;
pub mod openai;
pub mod recorded;
pub mod responses;
mod server;

pub use server::{CapturedRequest, DISCOVERY_PATHS, FakeServer, Fault, Reply};

/// A test's prerequisite (tmux, Node and the interop packages, the kernel
/// sandbox) is missing. Under CI (`CI` set, as `.ci/run` runs), which
/// installs every prerequisite, that fails the test: a suite that skipped
/// what it claims to test must not pass. Elsewhere it is said on stderr and
/// the caller returns.
pub fn missing(reason: &str) {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(!ci, "a test prerequisite is missing under CI: {reason}");
    eprintln!("SKIPPED: {reason}");
}

/// A program this crate builds (`north-fake-lsp`), found beside the test
/// binary that asks (`cargo test --workspace` builds it first); None, and
/// said through [`missing`], when it was not built.
pub fn support_bin(name: &str) -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let found = exe
        .ancestors()
        .skip(1)
        .take(3)
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        missing(&format!(
            "{name} is not built (cargo build -p north-test-support --bin {name})"
        ));
    }
    found
}

/// Reads a recorded stream from this crate's `fixtures/` directory.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// Byte offset just after the `n`th SSE event (counted from 1) in `sse`,
/// for placing a fault between events.
pub fn after_event(sse: &[u8], n: usize) -> usize {
    let mut seen = 0;
    let mut i = 0;
    while i + 1 < sse.len() {
        if sse[i] == b'\n' && sse[i + 1] == b'\n' {
            seen += 1;
            if seen == n {
                return i + 2;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    sse.len()
}

/// Formats one SSE event (`event:` line optional).
pub fn sse_event(event: Option<&str>, data: &str) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}
