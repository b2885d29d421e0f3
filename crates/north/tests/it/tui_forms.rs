//! A server's form in the real terminal: the real `north` TUI in a PTY, a
//! real MCP server (server-everything over stdio, the user's own) whose
//! tool asks for input; the form is filled in with edited fields and the
//! server's answer reaches the model. Skips where Node.js is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde_json::json;

use crate::tty;
use tty::*;

#[test]
fn a_servers_form_is_filled_in_and_its_answer_reaches_the_model() {
    let Some((node, modules)) = north_test_support::interop::mcp() else {
        return;
    };
    let _tty = one_tty();
    let sb = Sandbox::new();
    let config = sb.home().join("config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("mcp.json"),
        json!({"mcpServers": {"everything": {
            "command": node.display().to_string(),
            "args": [north_test_support::interop::package_entry(&modules, "server-everything"), "stdio"]
        }}})
        .to_string(),
    )
    .unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "e1", "name": "mcp__everything__trigger-elicitation-request", "args": {}}]},
            {"text": "FORM-DONE"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");
    tty.type_text("fill in the server's form");
    tty.send("\r");
    // The tool call is asked for like any server's.
    tty.wait_for("Allow this session");
    tty.send("y");
    let screen = tty.wait_for("MCP server everything asks for input");
    assert!(
        screen.contains("[It was a dark and stormy night.]"),
        "defaults filled in:\n{screen}"
    );
    // The first field (required, empty): a name; then the yes/no below it.
    tty.type_text("Ada Lovelace");
    tty.send("\x1b[B");
    tty.send(" ");
    tty.wait_for("[true");
    tty.send("\r");
    tty.wait_for("FORM-DONE");
    let sent = recorded(&requests);
    let body = sent.last().unwrap().to_string();
    assert!(body.contains("Name: Ada Lovelace"), "{body}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}
