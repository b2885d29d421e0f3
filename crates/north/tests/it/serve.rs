//! `north serve` through the real binary: clients on its unix socket and
//! WebSocket speaking raw JSON-RPC lines (so every byte the server sends
//! can be checked against its own schema), several clients on one session,
//! tokens, loopback only, a client that stops reading, and
//! `north exec --attach` with a warm MCP server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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

#[test]
fn two_clients_share_a_session_and_the_first_answer_wins() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let turns = json!([
        {"text": "EDIT-ONE", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"text": "DONE-ONE"},
        {"text": "EDIT-TWO", "tool_calls": [{"id": "e2", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "two\n", "new": "three\n"}}]},
        {"text": "DONE-TWO"}
    ]);
    let server = serve(&sb, &turns, &[]);
    let mut a = Raw::connect(&server.socket, Some(&server.token));
    let mut b = Raw::connect(&server.socket, Some(&server.token));
    a.initialize(false);
    b.initialize(false);
    let session =
        a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
    let attached = b.call("_north/session/attach", json!({"sessionId": session}));
    assert_eq!(attached["mode"], "ask");

    // A prompts; B sees the prompt, both see the question and the answer.
    let prompt = a.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "change one to two"}]}),
    );
    let echoed = b.until("the prompt", |v| is_update(v, "user_message_chunk"));
    assert_eq!(
        echoed["params"]["update"]["content"]["text"],
        "change one to two"
    );
    let qa = a.until("A's question", |v| {
        is_method(v, "session/request_permission")
    });
    let qb = b.until("B's question", |v| {
        is_method(v, "session/request_permission")
    });
    assert_eq!(qa["params"], qb["params"], "both are asked the same");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    a.respond(&qa["id"], selected("accept"));
    let answered = b.until("the answer", |v| is_method(v, "_north/permission_answered"));
    assert_eq!(answered["params"]["optionId"], "accept");
    // B's answer comes second: refused as already answered.
    b.respond(&qb["id"], selected("reject"));
    let refused = b.until("the refusal", |v| is_method(v, "_north/permission_refused"));
    assert!(
        refused["params"]["reason"]
            .as_str()
            .unwrap()
            .contains("already answered"),
        "{refused}"
    );
    let done = a.until("the prompt's answer", |v| {
        v["id"] == prompt && v.get("method").is_none()
    });
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );
    b.until_text("DONE-ONE");
    assert!(streamed(&a.seen).contains("EDIT-ONE") && streamed(&a.seen).contains("DONE-ONE"));
    assert!(streamed(&b.seen).contains("EDIT-ONE"));

    // B prompts and leaves while the turn waits for an answer: the session
    // goes on, A answers and sees the turn finish.
    b.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "and now three"}]}),
    );
    let qa = a.until("A's second question", |v| {
        is_method(v, "session/request_permission")
    });
    b.until("B's second question", |v| {
        is_method(v, "session/request_permission")
    });
    drop(b);
    a.respond(&qa["id"], selected("accept"));
    a.until_text("DONE-TWO");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "three\n"
    );
    let list = a.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["sessionId"], session);
    assert_eq!(list["sessions"][0]["clients"], 1, "{list}");
}

#[test]
fn a_session_outlives_its_clients_and_can_be_renamed_forked_exported_and_closed() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let server = serve(
        &sb,
        &json!([{"text": "FIRST-ANSWER"}, {"text": "FORK-ANSWER"}]),
        &[],
    );
    let session = {
        let mut a = Raw::connect(&server.socket, Some(&server.token));
        a.initialize(false);
        let s = a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
        a.call(
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "hello there"}]}),
        );
        s
    };
    // A new connection finds it, attaches and gets its history.
    let mut c = Raw::connect(&server.socket, Some(&server.token));
    c.initialize(false);
    let list = c.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], session);
    assert_eq!(list["sessions"][0]["clients"], 0);
    assert_eq!(list["sessions"][0]["running"], false);
    // Not attached yet: refused.
    let id = c.request(
        "_north/session/rename",
        json!({"sessionId": session, "name": "x"}),
    );
    let refused = c.until("the refusal", |v| v["id"] == id);
    assert!(
        refused["error"]["data"]
            .as_str()
            .unwrap()
            .contains("not attached"),
        "{refused}"
    );
    c.call("_north/session/attach", json!({"sessionId": session}));
    c.until("the replayed prompt", |v| {
        is_update(v, "user_message_chunk")
    });
    c.until_text("FIRST-ANSWER");
    let renamed = c.call(
        "_north/session/rename",
        json!({"sessionId": session, "name": "pairing"}),
    );
    assert_eq!(renamed["name"], "pairing");
    let list = c.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"][0]["name"], "pairing");
    let exported = c.call("_north/session/export", json!({"sessionId": session}));
    let md = exported["markdown"].as_str().unwrap();
    assert!(
        md.contains("hello there") && md.contains("FIRST-ANSWER"),
        "{md}"
    );
    let fork = c.call("_north/session/fork", json!({"sessionId": session}))["sessionId"].clone();
    assert_ne!(fork, session);
    let done = c.call(
        "session/prompt",
        json!({"sessionId": fork, "prompt": [{"type": "text", "text": "go on"}]}),
    );
    assert_eq!(done["stopReason"], "end_turn");
    c.call("_north/session/close", json!({"sessionId": session}));
    let list = c.call("_north/session/list", json!({}));
    let ids: Vec<&Value> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sessionId"])
        .collect();
    assert_eq!(ids, vec![&fork]);
}

#[test]
fn wrong_or_missing_tokens_and_addresses_outside_loopback_are_refused() {
    let sb = Sandbox::new();
    project(&sb);
    let server = serve(&sb, &json!([]), &["--listen", "ws://127.0.0.1:0"]);
    // Unix socket: a wrong token, and a first line that is not a token.
    for first in [
        json!({"token": "0".repeat(64)}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
    ] {
        let mut raw = Raw::connect(&server.socket, None);
        raw.send(&first);
        let refusal = raw.recv().expect("a refusal before the close");
        assert_eq!(refusal["error"]["code"], -32001, "{refusal}");
        assert!(
            refusal["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unauthorized")
        );
        assert!(raw.recv().is_none(), "the connection is closed");
    }
    // WebSocket: the upgrade without the header, or with a wrong one.
    let addr = server.ws.clone().expect("a WebSocket address");
    for header in ["", "Authorization: Bearer nope\r\n"] {
        let status = ws_upgrade(&addr, header);
        assert!(status.starts_with("HTTP/1.1 401"), "{status}");
    }
    let status = ws_upgrade(
        &addr,
        &format!("Authorization: Bearer {}\r\n", server.token),
    );
    assert!(status.starts_with("HTTP/1.1 101"), "{status}");
    // Outside loopback, the server does not start.
    for addr in ["ws://0.0.0.0:0", "ws://[::]:0", "ws://example.com:80"] {
        let out = sb
            .north()
            .args(["serve", "--listen", addr])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        assert!(
            text(&out.stderr).contains("not a loopback address"),
            "{}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
}

/// The status line of a WebSocket upgrade to `addr` with `header`.
fn ws_upgrade(addr: &str, header: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{header}\r\n"
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_the_others_go_on() {
    let sb = Sandbox::new();
    let root = project(&sb);
    // Turns of many small events (text streams in pieces of about 12
    // bytes): a client that reads keeps up with each turn, one that does
    // not falls far more than the queue behind.
    let turns: Vec<Value> = (0..12).map(|_| json!({"text": "y".repeat(800)})).collect();
    let turns = Value::Array(turns);
    let server = serve(&sb, &turns, &["--max-queued", "256"]);
    let mut a = Raw::connect(&server.socket, Some(&server.token));
    a.initialize(false);
    let session =
        a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
    // The slow client attaches, then never reads again.
    let mut slow = Raw::connect(&server.socket, Some(&server.token));
    slow.initialize(false);
    slow.call("_north/session/attach", json!({"sessionId": session}));
    for n in 0..12 {
        let done = a.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("turn {n}")}]}),
        );
        assert_eq!(done["stopReason"], "end_turn");
    }
    assert_eq!(
        streamed(&a.seen).len(),
        12 * 800,
        "the reading client got every piece"
    );
    let list = a.call("_north/session/list", json!({}));
    assert_eq!(
        list["sessions"][0]["clients"], 1,
        "the slow client was dropped: {list}"
    );
    // What it left unread ends, and then the connection.
    let mut rest = Vec::new();
    let _ = slow.reader.read_to_end(&mut rest);
}

#[test]
fn the_schema_validates_every_message_a_real_session_sends() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let out = sb.north().args(["serve", "--schema"]).output().unwrap();
    assert!(out.status.success());
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let turns = json!([
        {"text": "Looking.", "tool_calls": [{"id": "s1", "name": "search_text", "args": {"pattern": "one"}}]},
        {"tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"text": "SCHEMA-DONE"}
    ]);
    let server = serve(&sb, &turns, &[]);
    let mut a = Raw::connect(&server.socket, Some(&server.token));
    let mut events = Raw::connect(&server.socket, Some(&server.token));
    let mut asked: Vec<(u64, &str)> = Vec::new();
    a.initialize(false);
    asked.push((1, "initialize"));
    events.initialize(true);
    let session =
        a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
    asked.push((2, "session/new"));
    events.call("_north/session/attach", json!({"sessionId": session}));
    let prompt = a.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "change it"}]}),
    );
    asked.push((prompt, "session/prompt"));
    let q = a.until("the question", |v| {
        is_method(v, "session/request_permission")
    });
    a.respond(&q["id"], selected("accept"));
    a.until("the end", |v| {
        v["id"] == prompt && v.get("method").is_none()
    });
    a.call("_north/session/list", json!({}));
    asked.push((prompt + 1, "_north/session/list"));
    events.until("the events' end", |v| {
        is_method(v, "_north/event") && v["params"]["event"]["type"] == "turn_end"
    });

    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for (client, seen) in [("editor", &a.seen), ("north", &events.seen)] {
        for msg in seen {
            let (part, method) = match msg.get("method").and_then(Value::as_str) {
                Some(m) => ("params", m.to_string()),
                None => {
                    let id = msg["id"].as_u64().unwrap();
                    let method = if client == "editor" {
                        asked.iter().find(|(i, _)| *i == id).map(|(_, m)| *m)
                    } else {
                        None
                    };
                    let Some(m) = method else { continue };
                    ("result", m.to_string())
                }
            };
            let sub = &schema["methods"][&method][part];
            assert!(!sub.is_null(), "the schema has no {part} for {method}");
            let mut whole = sub.clone();
            whole["$defs"] = schema["$defs"].clone();
            let validator = jsonschema::validator_for(&whole).unwrap();
            let value = &msg[part];
            let errors: Vec<String> = validator
                .iter_errors(value)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{method} {part} does not match the schema: {errors:?}\n{value}"
            );
            *checked.entry(method).or_default() += 1;
        }
    }
    for m in [
        "session/update",
        "session/request_permission",
        "_north/event",
        "session/prompt",
        "session/new",
        "initialize",
        "_north/session/list",
    ] {
        assert!(
            checked.contains_key(m),
            "nothing of {m} was checked: {checked:?}"
        );
    }
    assert!(checked["_north/event"] >= 5, "{checked:?}");
}

#[test]
fn exec_attach_runs_turns_in_a_served_session_with_its_mcp_server_started_once() {
    let Some((node, _modules)) = interop::mcp() else {
        return;
    };
    let sb = Sandbox::new();
    let root = project(&sb);
    let starts = sb.dir.path().join("starts.log");
    let server_js = interop::interop_dir().join("fake-server.mjs");
    std::fs::write(
        root.join(".mcp.json"),
        json!({"mcpServers": {"warm": {
            "command": "sh",
            "args": ["-c", format!("echo started >> '{}'; exec '{}' '{}' many --count 2", starts.display(), node.display(), server_js.display())],
        }}})
        .to_string(),
    )
    .unwrap();
    let turns = json!([
        {"text": "Editing.", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"text": "FIRST-RUN"},
        {"text": "SECOND-RUN"}
    ]);
    let requests = sb.dir.path().join("requests.jsonl");
    let server = serve(
        &sb,
        &turns,
        &["--trust", "--record-requests", requests.to_str().unwrap()],
    );
    let address = format!("--attach=unix:{}", server.socket.display());
    let first = sb
        .north()
        .args(["exec", &address, "--approve-edits", "change one to two"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stdout).contains("FIRST-RUN"),
        "{}",
        text(&first.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );
    let second = sb
        .north()
        .args(["exec", &address, "--json", "again"])
        .output()
        .unwrap();
    assert!(second.status.success(), "{}", text(&second.stderr));
    let events: Vec<Value> = text(&second.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "assistant_text" && e["text"] == "SECOND-RUN"),
        "{events:?}"
    );
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(
        started.lines().count(),
        1,
        "the MCP server started once: {started}"
    );
    // Every request carried its tools.
    let recorded = crate::common::recorded(&requests);
    assert_eq!(recorded.len(), 3);
    for r in &recorded {
        assert!(r.to_string().contains("mcp__warm__"), "{r}");
    }
    let list = {
        let mut c = Raw::connect(&server.socket, Some(&server.token));
        c.initialize(false);
        c.call("_north/session/list", json!({}))
    };
    assert_eq!(list["sessions"].as_array().unwrap().len(), 2, "{list}");
    // Without a server, --attach says how to start one.
    let none = sb
        .north()
        .args(["exec", "--attach=unix:/nonexistent/x.sock", "hi"])
        .output()
        .unwrap();
    assert!(!none.status.success());
    assert!(
        text(&none.stderr).contains("north serve"),
        "{}",
        text(&none.stderr)
    );
}

#[test]
fn the_typescript_acp_sdk_client_runs_a_turn_over_the_socket_and_the_websocket() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/acp");
    let Ok(version) = std::process::Command::new("node").arg("--version").output() else {
        north_test_support::missing(
            "node is not installed (the ACP interop test needs Node.js 20+)",
        );
        return;
    };
    if !dir.join("node_modules/@agentclientprotocol/sdk").is_dir() {
        north_test_support::missing(
            "run `npm ci` in tests/interop/acp first (.ci/run does) to install @agentclientprotocol/sdk",
        );
        return;
    }
    // Node 20 has its WebSocket behind a flag; later versions by default.
    let old_node =
        text(&version.stdout).starts_with("v20.") || text(&version.stdout).starts_with("v21.");
    for transport in ["unix", "ws"] {
        let sb = Sandbox::new();
        let root = project(&sb);
        let turns = json!([
            {"text": "LOOKING", "tool_calls": [{"id": "s1", "name": "search_text", "args": {"pattern": "one"}}]},
            {"tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
            {"text": "SERVED-DONE"}
        ]);
        let server = serve(&sb, &turns, &["--listen", "ws://127.0.0.1:0"]);
        let address = match transport {
            "unix" => format!("unix:{}", server.socket.display()),
            _ => format!("ws://{}", server.ws.clone().unwrap()),
        };
        let mut node = std::process::Command::new("node");
        if old_node {
            node.arg("--experimental-websocket");
        }
        let out = node
            .current_dir(&dir)
            .arg("client-serve.mjs")
            .arg(&address)
            .arg(crate::serve::token_path(&server))
            .arg(&root)
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{transport}: checks failed: {stdout}\n{}",
            text(&out.stderr)
        );
        let report: Value = serde_json::from_str(stdout.trim()).unwrap();
        assert!(
            report["checks"]
                .as_object()
                .unwrap()
                .values()
                .all(|v| v == true),
            "{transport}: {report}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "two\n"
        );
    }
}

/// The server's token file.
fn token_path(server: &Served) -> PathBuf {
    server.token_file.clone()
}

#[test]
fn the_tui_attached_to_a_served_session_asks_shows_other_clients_and_leaves_it_open() {
    if !crate::emulator::available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let root = project(&sb);
    let turns = json!([
        {"text": "EDITING", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"text": "FIRST-DONE"},
        {"text": "FROM-EXEC"}
    ]);
    let server = serve(&sb, &turns, &[]);
    let term = crate::emulator::Term::start(
        &sb,
        120,
        40,
        &format!(
            "\"$NORTH\" --attach=unix:{}; echo EXIT=$?",
            server.socket.display()
        ),
        &[],
    );
    term.wait_for("Ask North to do something");
    term.type_text("change one to two");
    term.keys(&["Enter"]);
    term.wait_for("Review edits");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    term.keys(&["y"]);
    term.wait_for("FIRST-DONE");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );

    // A script prompts the same session: the terminal shows it all.
    let mut c = Raw::connect(&server.socket, Some(&server.token));
    c.initialize(false);
    let list = c.call("_north/session/list", json!({}));
    let id = list["sessions"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(list["sessions"][0]["clients"], 1);
    let out = sb
        .north()
        .args([
            "exec",
            &format!("--attach=unix:{}", server.socket.display()),
        ])
        .args(["--resume", &id, "hello from a script"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("FROM-EXEC"));
    term.wait_for("Another client asks: hello from a script");
    term.wait_for("FROM-EXEC");
    // /diff is for a session in this process: said so.
    term.type_text("/diff");
    term.keys(&["Enter"]);
    term.wait_for("not available in a session attached to `north serve`");

    // Leaving the UI leaves the session open on the server.
    term.keys(&["C-d"]);
    let all = term.wait_exit();
    assert!(all.contains("EXIT=0"), "{all}");
    let list = c.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], id.as_str());
    assert_eq!(list["sessions"][0]["clients"], 0, "{list}");
}

#[test]
fn a_sandboxed_command_cannot_read_the_servers_token() {
    let sb = Sandbox::new();
    project(&sb);
    if !sb.kernel_sandbox_works() {
        return;
    }
    // In $XDG_RUNTIME_DIR/north, hidden from every sandboxed command (a
    // runtime dir outside the temp dir, as /run/user/UID is).
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let run = outside.path().canonicalize().unwrap().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let server = serve_env(&sb, &json!([]), &[], &[("XDG_RUNTIME_DIR", &run)]);
    assert!(server.token_file.starts_with(run.join("north")), "{}", server.token_file.display());
    // Without it, in a directory of the temp dir, which commands see a private one of.
    let sb2 = Sandbox::new();
    project(&sb2);
    let fallback = serve(&sb2, &json!([]), &[]);
    for (sb, server, env) in [(&sb, &server, Some(&run)), (&sb2, &fallback, None)] {
        let mut cmd = sb.north();
        if let Some(run) = env {
            cmd.env("XDG_RUNTIME_DIR", run);
        }
        let out = cmd
            .args(["sandbox", "--", "sh", "-c"])
            .arg(format!(
                "cat '{}'; ls -la '{}'",
                server.token_file.display(),
                server.token_file.parent().unwrap().display()
            ))
            .output()
            .unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains(&server.token), "the token leaked: {all}");
        assert!(
            all.contains("Permission denied") || all.contains("No such file"),
            "{all}"
        );
        // The server's own clients still read it.
        assert_eq!(std::fs::read_to_string(&server.token_file).unwrap(), server.token);
    }
}
