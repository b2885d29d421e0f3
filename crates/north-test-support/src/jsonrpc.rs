//! A plain JSON-RPC client on a child's stdio, one message per line, as
//! MCP's stdio transport speaks it: what a test drives `north mcp serve`
//! with when it wants the wire itself, not an SDK's view of it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Lines, Write};
use std::process::{Child, ChildStdin, ChildStdout};

use serde_json::{Value, json};

/// The client end of a child's stdin and stdout.
pub struct StdioClient {
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl StdioClient {
    /// Takes `child`'s piped stdin and stdout (spawned with
    /// `Stdio::piped()` for both).
    pub fn new(child: &mut Child) -> StdioClient {
        StdioClient {
            stdin: child.stdin.take().expect("stdin is piped"),
            lines: BufReader::new(child.stdout.take().expect("stdout is piped")).lines(),
        }
    }

    /// Sends one message.
    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns the answer with its `id` (messages in
    /// between — notifications, other answers — are passed over).
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    /// MCP's opening: `initialize` as `client`, its answer, then
    /// `notifications/initialized`. Returns the answer.
    pub fn initialize(&mut self, client: &str) -> Value {
        let answer = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": client, "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// The next message with `id`; panics when the server closes first.
    pub fn answer(&mut self, id: u64) -> Value {
        for line in self.lines.by_ref() {
            let message: Value = serde_json::from_str(&line.unwrap()).unwrap_or(Value::Null);
            if message["id"] == json!(id) {
                return message;
            }
        }
        panic!("the server closed before answering {id}");
    }
}
