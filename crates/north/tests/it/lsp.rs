//! Language servers through the binary: a proposal is checked by a real
//! server (pyright) before it is reviewed, the model reads what it brings
//! in, and the read-only code tools answer from the server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use north_test_support::recorded::tool_result;
use serde_json::{Value, json};

use crate::common::{Sandbox, json_lines, text};

fn pyright() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/lsp/node_modules/.bin/pyright-langserver");
    if bin.exists() {
        Some(bin.canonicalize().unwrap())
    } else {
        north_test_support::missing("pyright (tests/interop/lsp: npm ci)");
        None
    }
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "args": args}]})
}

/// A Python project and the user's config naming pyright.
fn python_project(sb: &Sandbox, bin: &std::path::Path) {
    let p = sb.project();
    std::fs::write(
        p.join("lib.py"),
        "def greet(name: str) -> str:\n    return 'hi ' + name\n",
    )
    .unwrap();
    std::fs::write(
        p.join("main.py"),
        "from lib import greet\n\nmessage: str = greet('x')\n",
    )
    .unwrap();
    let config = sb.home().join("config/north/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let lsp = json!({"lsp": {"python": {"command": [bin.display().to_string(), "--stdio"]}}});
    std::fs::write(config, lsp.to_string()).unwrap();
}

#[test]
fn a_proposal_that_brings_in_a_type_error_shows_it_before_anything_is_written() {
    let Some(bin) = pyright() else { return };
    let sb = Sandbox::new();
    python_project(&sb, &bin);
    let (out, requests) = sb.exec_scripted(
        &json!([
            call("e1", "edit_replace_exact", json!({"path": "main.py", "old": "message: str", "new": "message: int"})),
            call("e2", "edit_replace_exact", json!({"path": "main.py", "old": "message: str", "new": "message: int"})),
            {"text": "done"}
        ]),
        &["--json"],
        &[],
    );
    assert!(
        out.status.success() || out.status.code() == Some(3),
        "{}",
        text(&out.stderr)
    );
    // The review's event: the error the change brings in, on line 3.
    let events = json_lines(&out);
    let diag = events
        .iter()
        .find(|e| e["type"] == "diagnostics")
        .unwrap_or_else(|| panic!("no diagnostics event: {}", text(&out.stdout)));
    let file = &diag["files"][0];
    assert_eq!(file["path"], "main.py");
    assert_eq!(file["checked"], true, "{file}");
    assert_eq!(file["introduced"][0]["line"], 3, "{file}");
    assert_eq!(file["introduced"][0]["severity"], "error", "{file}");
    // Headless without --approve-edits: rejected, nothing written; the
    // model's next request carries the error with the result.
    assert!(
        std::fs::read_to_string(sb.project().join("main.py"))
            .unwrap()
            .contains("message: str")
    );
    let result = tool_result(&requests[1], "e1").to_string();
    assert!(
        result.contains("diagnostics") && result.contains("introduced"),
        "{result}"
    );
}

#[test]
fn an_edit_that_fixes_an_error_shows_it_resolved_and_the_code_tools_answer() {
    let Some(bin) = pyright() else { return };
    let sb = Sandbox::new();
    python_project(&sb, &bin);
    std::fs::write(
        sb.project().join("main.py"),
        "from lib import greet\n\nmessage: int = greet('x')\n",
    )
    .unwrap();
    let (out, requests) = sb.exec_scripted(
        &json!([
            call("e1", "edit_replace_exact", json!({"path": "main.py", "old": "message: int", "new": "message: str"})),
            call("d1", "lsp_definition", json!({"path": "main.py", "line": 3, "column": 16})),
            call("r1", "lsp_references", json!({"path": "lib.py", "line": 1, "column": 5})),
            call("g1", "lsp_diagnostics", json!({"path": "main.py"})),
            {"text": "done"}
        ]),
        &["--json", "--approve-edits"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events = json_lines(&out);
    let diag = events.iter().find(|e| e["type"] == "diagnostics").unwrap();
    assert_eq!(diag["files"][0]["resolved"][0]["line"], 3, "{diag}");
    assert_eq!(diag["files"][0]["introduced"], json!([]), "{diag}");
    assert!(
        std::fs::read_to_string(sb.project().join("main.py"))
            .unwrap()
            .contains("message: str")
    );
    // The code tools, offered because a server is configured.
    let def = tool_result(&requests[2], "d1").to_string();
    assert!(
        def.contains("lib.py") && def.contains("\"line\":1"),
        "{def}"
    );
    let refs = tool_result(&requests[3], "r1").to_string();
    assert!(refs.contains("main.py"), "{refs}");
    let now = tool_result(&requests[4], "g1").to_string();
    assert!(
        now.contains("\"diagnostics\":[]"),
        "the written file is clean: {now}"
    );
}

#[test]
fn a_crashing_server_is_named_the_turn_completes_and_servers_are_confined_and_trust_gated() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let Some(fake) = north_test_support::support_bin("north-fake-lsp") else {
        return;
    };
    let outside = crate::common::outside_temp_dir("north-lsp-");
    let planted = outside.path().join("planted");
    let p = sb.project();
    std::fs::write(p.join("a.fk"), "one\n").unwrap();
    // An untrusted project's server never starts.
    let marker = outside.path().join("project-server-ran");
    let project_lsp = json!({"lsp": {"fake": {"command": ["sh", "-c", format!("touch {}; exec {} crash", marker.display(), fake.display())], "extensions": ["fk"]}}});
    std::fs::write(p.join(".north/project.json"), project_lsp.to_string()).unwrap();
    // The user's server tries to write outside the project, then crashes
    // at the first document.
    let config = sb.home().join("config/north/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let command = format!(
        "touch {} inside.txt; exec {} crash",
        planted.display(),
        fake.display()
    );
    let user = json!({"lsp": {"fake": {"command": ["sh", "-c", command], "extensions": ["fk"], "timeout": 2}}});
    std::fs::write(&config, user.to_string()).unwrap();
    let (out, requests) = sb.exec_scripted(
        &json!([
            call("e1", "edit_replace_exact", json!({"path": "a.fk", "old": "one", "new": "two"})),
            {"text": "done"}
        ]),
        &["--json", "--approve-edits"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(p.join("a.fk")).unwrap(), "two\n");
    let events = json_lines(&out);
    let diag = events.iter().find(|e| e["type"] == "diagnostics").unwrap();
    let file = &diag["files"][0];
    assert_eq!(file["server"], "fake", "{file}");
    assert_eq!(file["checked"], false, "{file}");
    assert!(
        file["no_answer"].as_str().unwrap().contains("stopped"),
        "{file}"
    );
    assert_eq!(requests.len(), 2);
    assert!(
        !marker.exists(),
        "an untrusted project's language server started"
    );
    assert!(text(&out.stderr).contains("lsp"), "{}", text(&out.stderr));
    assert!(
        !planted.exists(),
        "the language server wrote outside the project"
    );
    assert!(
        p.join("inside.txt").exists(),
        "the server ran, in the project"
    );
}

#[test]
fn the_tui_review_shows_the_error_a_real_server_finds_beside_its_line() {
    let Some(bin) = pyright() else { return };
    if !crate::emulator::available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    python_project(&sb, &bin);
    let script = sb.file(
        "tui-lsp.json",
        &json!({"turns": [
            call("e1", "edit_replace_exact", json!({"path": "main.py", "old": "message: str", "new": "message: int"})),
            {"text": "RETYPED"}
        ]}),
    );
    let term = crate::emulator::Term::start(
        &sb,
        120,
        40,
        &format!("\"$NORTH\" --script '{}'", script.display()),
        &[],
    );
    term.wait_for("Ask North to do something");
    term.type_text("retype message");
    term.keys(&["Enter"]);
    let screen = term.wait_until("the review's diagnostics", |s| {
        s.contains("python: introduces 1 error") || s.contains("language server stopped")
    });
    // A server that stopped twice: what it said is in North's log.
    assert!(
        screen.contains("python: introduces 1 error"),
        "{screen}\nNorth's log:\n{}",
        std::fs::read_to_string(sb.home().join("state/north/north.log")).unwrap_or_default()
    );
    assert!(screen.contains("✗ line 3:"), "{screen}");
    assert!(screen.contains("+message: int"), "{screen}");
    // `n` rejects and stops the turn: nothing is written.
    term.type_text("n");
    term.wait_for("rejected");
    assert!(
        std::fs::read_to_string(sb.project().join("main.py"))
            .unwrap()
            .contains("message: str")
    );
}

#[test]
fn a_server_found_on_path_starts_only_in_a_project_the_user_trusted() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let Some(fake) = north_test_support::support_bin("north-fake-lsp") else {
        return;
    };
    // A `pyright-langserver` on PATH that says it ran, then crashes.
    // Inside the project: the sandbox's temp dir is private, and a test's
    // directories are under it.
    let bin = sb.project().join(".tools");
    std::fs::create_dir_all(&bin).unwrap();
    let ran = sb.project().join("server-ran");
    Sandbox::executable(
        &bin.join("pyright-langserver"),
        format!(
            "#!/bin/sh\ntouch {}\nexec {} crash\n",
            ran.display(),
            fake.display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::fs::write(sb.project().join("a.py"), "x = 1\n").unwrap();
    let turns = json!([
        call("e1", "edit_replace_exact", json!({"path": "a.py", "old": "x = 1", "new": "x = 2"})),
        {"text": "done"}
    ]);
    // Not trusted (nothing asked for trust): the found server never starts.
    let (out, _) = sb.exec_scripted(&turns, &["--json", "--approve-edits"], &[("PATH", &path)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !ran.exists(),
        "a server North found on PATH ran in an untrusted project"
    );
    assert!(!json_lines(&out).iter().any(|e| e["type"] == "diagnostics"));
    // Trusted by the user (`north trust`): it is asked.
    std::fs::write(sb.project().join("a.py"), "x = 1\n").unwrap();
    let out = sb.north().arg("trust").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (out, _) = sb.exec_scripted(&turns, &["--json", "--approve-edits"], &[("PATH", &path)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(ran.exists(), "{}", text(&out.stderr));
    assert!(json_lines(&out).iter().any(|e| e["type"] == "diagnostics"));
}
