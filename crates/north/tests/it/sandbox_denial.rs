//! A command the OS sandbox stops gives its caller its output and the
//! sandbox's denial together — through `shell_run` and `shell.exec` alike,
//! from the model (`north exec`) and from `north tool` — and no run outside
//! the sandbox is offered where no person at North's terminal decides.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::recorded::tool_result;
use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, text};

/// A line the user allowed in a project they trust: it prints, then writes
/// into the git hooks, which the sandbox keeps read-only.
const COMMAND: &str = "echo BEFORE-THE-WRITE; echo evil > .git/hooks/pre-commit";

fn project() -> Sandbox {
    let sb = Sandbox::new();
    let out = sb.north().args(["sandbox", "--", "true"]).output().unwrap();
    assert!(
        out.status.success() && !text(&out.stderr).contains("sandbox: partial"),
        "this test needs the kernel sandbox (Landlock, seccomp, namespaces): {}",
        text(&out.stderr)
    );
    sb.init_git();
    std::fs::write(
        sb.project().join(".north/allowlist.json"),
        json!({"allowedCommands": [COMMAND]}).to_string(),
    )
    .unwrap();
    sb
}

/// What a denied command's result must hold, whatever the tool's naming.
fn assert_denied_with_output(output: &Value, exit_key: &str, sb: &Sandbox) {
    assert!(
        output["stdout"]
            .as_str()
            .unwrap()
            .contains("BEFORE-THE-WRITE"),
        "{output}"
    );
    assert!(!output["stderr"].as_str().unwrap().is_empty(), "{output}");
    assert_ne!(output[exit_key], json!(0), "{output}");
    let denied = output["sandboxDenied"].as_str().unwrap_or_default();
    assert!(denied.contains("pre-commit"), "{output}");
    assert!(
        output["note"].as_str().unwrap().contains("sandbox"),
        "{output}"
    );
    assert!(output.get("unsandboxed").is_none(), "{output}");
    assert!(!sb.project().join(".git/hooks/pre-commit").exists());
}

#[test]
fn north_tool_shell_exec_and_shell_run_return_output_and_denial() {
    let sb = project();
    for (tool, args, exit_key) in [
        ("shell.exec", json!({"cmd": COMMAND}), "exit_code"),
        ("shell_run", json!({"command": COMMAND}), "exitCode"),
    ] {
        let out = sb
            .north()
            .args(["tool", tool, "--trust", "--args"])
            .arg(args.to_string())
            .output()
            .unwrap();
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{tool}: {e}: {}", text(&out.stderr)));
        assert_denied_with_output(&result["output"], exit_key, &sb);
    }
}

#[test]
fn the_model_gets_output_and_denial_from_shell_run() {
    let sb = project();
    let (out, requests) = sb.exec_scripted(
        &json!([
            {"tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": COMMAND}}]},
            {"text": "Done."}
        ]),
        &["--trust"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The tool result in the second request, as the model reads it.
    let sent = tool_result(&requests[1], "s1").to_string();
    assert!(sent.contains("BEFORE-THE-WRITE"), "{sent}");
    assert!(sent.contains("sandboxDenied"), "{sent}");
    assert!(
        sent.contains("no run outside the sandbox is offered here"),
        "{sent}"
    );
    assert!(!sb.project().join(".git/hooks/pre-commit").exists());
}
