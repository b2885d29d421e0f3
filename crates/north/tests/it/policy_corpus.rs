//! The adversarial command corpus (`north-test-support/fixtures/
//! command-corpus.txt`) through every entry point of the real binary: each
//! must give the same verdict — controls run, escapes never run — and no
//! output ever holds a secret from outside the project: `north tool`,
//! `north exec`, `north mesh` and `north mcp serve`. (The TUI and `north
//! acp` share the agent's path with `north exec`, and every entry point
//! takes its steps from `north_policy::orchestrate`; `tui_e2e.rs`
//! shows the TUI's prompt for an escape.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use north_test_support::corpus::{Case, Expect, Layout, cases, leaks};
use serde_json::{Value, json};

/// The binary in the corpus layout: HOME and XDG dirs in its scratch home,
/// run from the project.
fn north(layout: &Layout) -> Command {
    let home = layout.home();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_north"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("XDG_DATA_HOME", home.join(".data"))
        .current_dir(layout.project())
        .stdin(Stdio::null());
    cmd
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The mesh policy of the corpus: every program the controls use.
fn write_policy(root: &Path) {
    std::fs::write(
        root.join("policy.json"),
        json!({"allowed_commands": ["ls", "cat", "grep", "head", "tail", "wc", "find", "echo", "cd"]})
            .to_string(),
    )
    .unwrap();
}

/// Whether a tool result shows the command ran (it has an exit code or
/// output) rather than being refused before running.
fn ran(details: &Value) -> bool {
    let output = &details["output"];
    output.get("exitCode").is_some() || output.is_string()
}

fn judge(case: &Case, ran: bool, wrong: &mut Vec<String>) {
    let expected = case.expect == Expect::Run;
    if ran != expected {
        wrong.push(format!(
            "{:?} `{}`: {}",
            case.expect,
            case.command,
            if ran { "ran" } else { "did not run" }
        ));
    }
}

fn assert_clean(layout: &Layout, everything: &str, wrong: Vec<String>) {
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(!leaks(everything), "a secret reached the output");
    assert!(layout.pwned().is_empty(), "written: {:?}", layout.pwned());
}

/// `north tool NAME --yes --args {...}` for one command.
fn tool(layout: &Layout, name: &str, args: Value, extra: &[&str]) -> (Value, String) {
    let out = north(layout)
        .args(["tool", name, "--yes", "--args"])
        .arg(args.to_string())
        .args(extra)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (json, text(&out))
}

#[test]
fn north_tool_shell_run_with_yes() {
    let layout = Layout::new();
    let mut wrong = Vec::new();
    let mut everything = String::new();
    for case in cases() {
        let (json, all) = tool(
            &layout,
            "shell_run",
            json!({"command": case.command, "timeoutMs": 10000}),
            &[],
        );
        judge(&case, ran(&json), &mut wrong);
        everything.push_str(&all);
    }
    assert_clean(&layout, &everything, wrong);
}

#[test]
fn north_tool_bash_under_the_trusted_policy() {
    let layout = Layout::new();
    write_policy(&layout.project());
    let mut wrong = Vec::new();
    let mut everything = String::new();
    for case in cases() {
        let (json, all) = tool(&layout, "bash", json!({"cmd": case.command}), &["--trust"]);
        judge(&case, ran(&json), &mut wrong);
        everything.push_str(&all);
    }
    assert_clean(&layout, &everything, wrong);
}

/// The results of a `--json` run, by call id.
fn results(stdout: &str) -> std::collections::HashMap<String, Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            (
                e["call_id"].as_str().unwrap().to_string(),
                e["details"].clone(),
            )
        })
        .collect()
}

#[test]
fn north_exec_with_allow_shell() {
    let layout = Layout::new();
    let cases = cases();
    let calls: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"id": format!("c{i}"), "name": "shell_run", "args": {"command": c.command, "timeoutMs": 10000}})
        })
        .collect();
    let script = layout.dir.path().join("script.json");
    std::fs::write(
        &script,
        json!([{"tool_calls": calls}, {"text": "done"}]).to_string(),
    )
    .unwrap();
    let out = north(&layout)
        .args(["exec", "--json", "--allow-shell", "--script"])
        .arg(&script)
        .arg("run the corpus")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let results = results(&stdout);
    let mut wrong = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let details = results
            .get(&format!("c{i}"))
            .unwrap_or_else(|| panic!("no result for `{}`:\n{}", case.command, text(&out)));
        judge(case, ran(details), &mut wrong);
    }
    assert_clean(&layout, &text(&out), wrong);
}

#[test]
fn north_mesh_with_yes_under_the_trusted_policy() {
    let layout = Layout::new();
    write_policy(&layout.project());
    let cases = cases();
    let calls: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"id": format!("c{i}"), "name": "bash", "args": {"cmd": c.command}}))
        .collect();
    let plan = json!({"items": [{"description": "Run the corpus", "tool": "bash"}]});
    let script = layout.dir.path().join("script.json");
    std::fs::write(
        &script,
        json!([
            {"text": plan.to_string()},
            {"tool_calls": calls},
            {"text": "done"},
            {"text": "Ran the corpus."}
        ])
        .to_string(),
    )
    .unwrap();
    let out = north(&layout)
        .args(["mesh", "--json", "--yes", "--trust", "--script"])
        .arg(&script)
        .arg("run the corpus")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let results = results(&stdout);
    let mut wrong = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let details = results
            .get(&format!("c{i}"))
            .unwrap_or_else(|| panic!("no result for `{}`:\n{}", case.command, text(&out)));
        judge(case, ran(details), &mut wrong);
    }
    assert_clean(&layout, &text(&out), wrong);
}

/// `north mcp serve --allow-shell`, driven by a plain JSON-RPC client on
/// its stdio: every corpus line through the `shell_run` it offers, as an
/// MCP client's model would send them.
#[test]
fn north_mcp_serve_with_allow_shell() {
    use north_test_support::jsonrpc::StdioClient;
    let layout = Layout::new();
    let mut child = north(&layout)
        .args(["mcp", "serve", "--allow-shell"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut client = StdioClient::new(&mut child);
    assert!(client.initialize("corpus").get("result").is_some());
    let mut wrong = Vec::new();
    let mut everything = String::new();
    let mut id = 0;
    for case in cases() {
        id += 1;
        let args = json!({"command": case.command, "timeoutMs": 10000});
        let result = client.request(
            id,
            "tools/call",
            json!({"name": "shell_run", "arguments": args}),
        )["result"]
            .clone();
        let shown = result.to_string();
        // It ran when its result carries an exit code (a timeout is an error
        // that still does); a refusal carries none.
        let ran = result["structuredContent"].get("exitCode").is_some()
            || shown.contains("\\\"exitCode\\\"");
        judge(&case, ran, &mut wrong);
        everything.push_str(&shown);
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    everything.push_str(&text(&out));
    assert_clean(&layout, &everything, wrong);
}
