//! `north serve` through the real binary: clients on its unix socket and
//! WebSocket speaking raw JSON-RPC lines (so every byte the server sends
//! can be checked against its own schema), several clients on one session,
//! tokens, loopback only, a client that stops reading, and
//! `north exec --attach` with a warm MCP server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access;
mod clients;
mod sessions;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use north_test_support::interop;
use serde_json::{Value, json};

use crate::common::{Sandbox, text};

/// A running `north serve`, stopped (SIGTERM) when dropped.
struct Served {
    child: Child,
    socket: PathBuf,
    token_file: PathBuf,
    ws: Option<String>,
    token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        // SAFETY: signalling our own child by its pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

/// Starts `north serve` on a script of `turns` with `args`, and reads its
/// ready line.
fn serve(sb: &Sandbox, turns: &Value, args: &[&str]) -> Served {
    serve_env(sb, turns, args, &[])
}

/// [`serve`] with environment variables `env` set.
fn serve_env(sb: &Sandbox, turns: &Value, args: &[&str], env: &[(&str, &Path)]) -> Served {
    let script = sb.file("serve-script.json", &json!({ "turns": turns }));
    let socket = sb.dir.path().join("s.sock");
    let mut child = sb
        .north()
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .args(["serve", "--script"])
        .arg(&script)
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).expect("one JSON line when ready");
    let listen: Vec<String> = ready["listen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listen[0], format!("unix:{}", socket.display()));
    let token_file = PathBuf::from(ready["token_file"].as_str().unwrap());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&token_file).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the token file is the user's alone");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&socket).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the socket is the user's alone");
    Served {
        child,
        socket,
        token_file: token_file.clone(),
        ws: listen
            .iter()
            .find_map(|l| l.strip_prefix("ws://").map(String::from)),
        token: std::fs::read_to_string(token_file).unwrap(),
    }
}

/// A client speaking JSON-RPC lines on the unix socket.
struct Raw {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next: u64,
    /// Everything received, in order.
    seen: Vec<Value>,
    backlog: VecDeque<Value>,
}

impl Raw {
    /// Connects and presents `token` (none: sends nothing first).
    fn connect(socket: &Path, token: Option<&str>) -> Raw {
        let stream = UnixStream::connect(socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut raw = Raw {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
            next: 1,
            seen: Vec::new(),
            backlog: VecDeque::new(),
        };
        if let Some(t) = token {
            raw.send(&json!({ "token": t }));
        }
        raw
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.writer, "{v}").unwrap();
    }

    /// Sends a request; its id.
    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message (None: the server closed the connection).
    fn recv(&mut self) -> Option<Value> {
        if let Some(v) = self.backlog.pop_front() {
            return Some(v);
        }
        let mut line = String::new();
        if self.reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let v: Value = serde_json::from_str(&line).unwrap();
        self.seen.push(v.clone());
        Some(v)
    }

    /// Reads until a message `pred` accepts; the others stay for later.
    fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let mut skipped = Vec::new();
        loop {
            let Some(v) = self.recv() else {
                panic!("the connection closed while waiting for {what}; skipped: {skipped:?}");
            };
            if pred(&v) {
                self.backlog.extend(skipped);
                return v;
            }
            skipped.push(v);
        }
    }

    /// Reads until the streamed answer text holds `needle`.
    fn until_text(&mut self, needle: &str) {
        while !streamed(&self.seen).contains(needle) {
            if self.recv().is_none() {
                panic!(
                    "the connection closed before `{needle}`: {}",
                    streamed(&self.seen)
                );
            }
        }
    }

    /// A request's result (panics on an error answer).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let answer = self.until(&format!("the answer to {method}"), |v| {
            v["id"] == id && v.get("method").is_none()
        });
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    fn initialize(&mut self, north_events: bool) -> Value {
        let mut params = json!({"protocolVersion": 1, "clientCapabilities": {}});
        if north_events {
            params["_meta"] = json!({"north": {"events": true}});
        }
        self.call("initialize", params)
    }

    fn respond(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}

fn is_method(v: &Value, m: &str) -> bool {
    v["method"] == m
}

fn is_update(v: &Value, kind: &str) -> bool {
    v["method"] == "session/update" && v["params"]["update"]["sessionUpdate"] == kind
}

fn streamed(seen: &[Value]) -> String {
    seen.iter()
        .filter(|v| is_update(v, "agent_message_chunk"))
        .map(|v| {
            v["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap_or("")
        })
        .collect()
}

fn selected(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

fn project(sb: &Sandbox) -> PathBuf {
    let root = sb.project().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    root
}
