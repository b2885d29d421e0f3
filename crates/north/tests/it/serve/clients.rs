//! The clients North ships and the official SDK: `north exec --attach`
//! with a warm MCP server, the TypeScript ACP SDK over both transports,
//! and the TUI attached in a real terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

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
            .arg(&server.token_file)
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
