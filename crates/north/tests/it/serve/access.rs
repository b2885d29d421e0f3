//! Who may talk to a server: tokens, loopback only, a token no sandboxed
//! command can read; and the schema every message a session sends obeys.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

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
    assert!(
        server.token_file.starts_with(run.join("north")),
        "{}",
        server.token_file.display()
    );
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
        assert_eq!(
            std::fs::read_to_string(&server.token_file).unwrap(),
            server.token
        );
    }
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
