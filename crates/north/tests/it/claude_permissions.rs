//! Claude Code's permission rules in `.claude/settings.json`, through the
//! binary: an `allow` prefix runs its command unasked in a trusted project,
//! a `deny` wins over every approval (trusted or not), an `ask` is never
//! run unasked, and what North cannot map is said.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::recorded::tool_result;
use serde_json::{Value, json};

use crate::common::{Sandbox, text};

fn project_with_rules() -> Sandbox {
    let sb = Sandbox::new();
    let root = sb.project();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"permissions": {
            "allow": ["Bash(npm test:*)"],
            "deny": ["Bash(git push:*)", "Read(./.env)", "Read(//etc/passwd)"],
            "ask": ["Bash(git commit:*)"]
        }})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join("package.json"),
        json!({"name": "fixture", "version": "1.0.0", "scripts": {"test": "echo NPM-TEST-RAN"}})
            .to_string(),
    )
    .unwrap();
    sb
}

fn run(id: &str, command: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "shell_run", "args": {"command": command}}]})
}

#[test]
fn an_allow_prefix_runs_npm_test_unasked_in_a_trusted_project() {
    if std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_err()
    {
        north_test_support::missing("npm is not installed (Node.js brings it)");
        return;
    }
    let sb = project_with_rules();
    let (out, requests) = sb.exec_scripted(
        &json!([run("c1", "npm test"), {"text": "done"}]),
        &["--trust"],
        &[],
    );
    let result = tool_result(&requests[1], "c1");
    assert_eq!(result["ok"], true, "{result}\n{}", text(&out.stderr));
    assert!(result.to_string().contains("NPM-TEST-RAN"), "{result}");
    // What has no equivalent is said, not dropped.
    let err = text(&out.stderr);
    assert!(err.contains("`Read(//etc/passwd)` (deny)"), "{err}");
}

#[test]
fn a_deny_wins_over_every_approval_and_an_ask_is_never_run_unasked() {
    let sb = project_with_rules();
    let turns = json!([
        run("p1", "git push origin main"),
        run("p2", "echo start && /usr/bin/git push"),
        run("k1", "git commit -m wip"),
        run("e1", "echo ALLOWED-BY-YES"),
        {"text": "done"}
    ]);
    let (out, requests) = sb.exec_scripted(&turns, &["--trust", "--yes"], &[]);
    let err = text(&out.stderr);
    for id in ["p1", "p2"] {
        let r = tool_result(requests.last().unwrap(), id);
        assert_eq!(r["ok"], false, "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("your rule `git push`"),
            "{id}: {r}"
        );
    }
    let k = tool_result(requests.last().unwrap(), "k1");
    assert_eq!(k["ok"], false, "{k}");
    assert!(k.to_string().contains("git commit"), "{k}\n{err}");
    let e = tool_result(requests.last().unwrap(), "e1");
    assert_eq!(e["ok"], true, "{e}");

    // Untrusted: the deny still holds, the allow waits for trust (said).
    let sb = project_with_rules();
    let (out, requests) = sb.exec_scripted(
        &json!([run("p1", "git push"), run("n1", "npm test"), {"text": "done"}]),
        &[],
        &[],
    );
    let r = tool_result(requests.last().unwrap(), "p1");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("your rule `git push`"),
        "{r}"
    );
    let n = tool_result(requests.last().unwrap(), "n1");
    assert_eq!(n["ok"], false, "a repository's allow rule needs trust: {n}");
    assert!(!n.to_string().contains("NPM-TEST-RAN"), "{n}");
    let err = text(&out.stderr);
    assert!(err.contains("apply once you trust the project"), "{err}");
}

#[test]
fn north_tool_keeps_the_same_rules() {
    let sb = project_with_rules();
    let out = sb
        .north()
        .args(["tool", "shell_run", "--yes", "--args"])
        .arg(json!({"command": "git push"}).to_string())
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("your rule `git push`"),
        "{result}"
    );
    let out = sb
        .north()
        .args(["tool", "shell_run", "--yes", "--args"])
        .arg(json!({"command": "git commit -m x"}).to_string())
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        result["ok"], false,
        "an ask rule has nobody to ask here: {result}"
    );
}

#[test]
fn your_own_claude_rules_apply_when_you_opt_in_and_never_from_a_project() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.home().join(".claude")).unwrap();
    std::fs::write(
        sb.home().join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash(touch user-made.txt)"], "deny": ["Bash(git push:*)"]}})
            .to_string(),
    )
    .unwrap();
    let turns = json!([run("e1", "touch user-made.txt"), run("p1", "git push"), {"text": "done"}]);
    // Not opted in: the rules are not North's.
    let (_, requests) = sb.exec_scripted(&turns, &[], &[]);
    let e = tool_result(requests.last().unwrap(), "e1");
    assert_eq!(e["ok"], false, "{e}");
    let p = tool_result(requests.last().unwrap(), "p1");
    assert!(!p.to_string().contains("your rule"), "{p}");
    // A project cannot opt you in.
    std::fs::write(
        sb.project().join(".north/project.json"),
        json!({"claude_permissions": true}).to_string(),
    )
    .unwrap();
    let (out, requests) = sb.exec_scripted(&turns, &["--trust"], &[]);
    let e = tool_result(requests.last().unwrap(), "e1");
    assert_eq!(e["ok"], false, "{e}\n{}", text(&out.stderr));
    std::fs::remove_file(sb.project().join(".north/project.json")).unwrap();
    // Opted in, in your own config: yours apply, the project untrusted.
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        json!({"claude_permissions": true}).to_string(),
    )
    .unwrap();
    let (out, requests) = sb.exec_scripted(&turns, &[], &[]);
    let e = tool_result(requests.last().unwrap(), "e1");
    assert_eq!(e["ok"], true, "{e}\n{}", text(&out.stderr));
    let p = tool_result(requests.last().unwrap(), "p1");
    assert!(
        p["error"]
            .as_str()
            .unwrap()
            .contains("your rule `git push`"),
        "{p}"
    );
}

fn settings(sb: &Sandbox, permissions: Value) {
    std::fs::create_dir_all(sb.project().join(".claude")).unwrap();
    std::fs::write(
        sb.project().join(".claude/settings.json"),
        json!({ "permissions": permissions }).to_string(),
    )
    .unwrap();
}

#[test]
fn read_and_edit_path_rules_keep_the_tools_and_commands_from_files() {
    let sb = Sandbox::new();
    let root = sb.project();
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/key.txt"), "TOP-SECRET-VALUE\n").unwrap();
    std::fs::write(root.join("locked.txt"), "one\n").unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/guide.md"), "old\n").unwrap();
    settings(
        &sb,
        json!({"deny": ["Read(./secrets/**)", "Edit(locked.txt)"], "allow": ["Edit(docs/**)"]}),
    );
    let turns = json!([
        {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": "secrets/key.txt"}}]},
        {"tool_calls": [{"id": "r2", "name": "search_text", "args": {"pattern": "SECRET", "path": "secrets"}}]},
        {"tool_calls": [{"id": "r3", "name": "search_text", "args": {"pattern": "TOP-SECRET"}}]},
        run("c1", "cat secrets/key.txt"),
        {"tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "locked.txt", "old": "one\n", "new": "two\n"}}]},
        {"tool_calls": [{"id": "e2", "name": "edit_replace_exact", "args": {"path": "docs/guide.md", "old": "old\n", "new": "new\n"}}]},
        {"text": "done"}
    ]);
    // Trusted (the allow rule applies); --allow-shell runs the `cat`.
    let (out, requests) = sb.exec_scripted(&turns, &["--trust", "--allow-shell"], &[]);
    let last = requests.last().unwrap();
    let all = last.to_string();
    assert!(
        !all.contains("TOP-SECRET-VALUE"),
        "the secret reached the model: {all}\n{}",
        text(&out.stderr)
    );
    for id in ["r1", "r2"] {
        let r = tool_result(last, id);
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("your rule `Read(secrets/**)`"),
            "{id}: {r}"
        );
    }
    // A search from the root finds nothing under the rule.
    let r3 = tool_result(last, "r3");
    assert!(!r3.to_string().contains("secrets/key.txt"), "{r3}");
    let e1 = tool_result(last, "e1");
    assert!(
        e1["error"]
            .as_str()
            .unwrap()
            .contains("your rule `Edit(locked.txt)`"),
        "{e1}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("locked.txt")).unwrap(),
        "one\n"
    );
    // Without --approve-edits, the allow rule's path was written unasked.
    let e2 = tool_result(last, "e2");
    assert_eq!(e2["ok"], true, "{e2}");
    assert_eq!(
        std::fs::read_to_string(root.join("docs/guide.md")).unwrap(),
        "new\n"
    );
}

#[test]
fn a_webfetch_allow_grants_its_host_in_a_trusted_project_only() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "FETCHED-BY-RULE";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let turns = json!([
        {"tool_calls": [{"id": "w1", "name": "web_fetch", "args": {"url": format!("http://127.0.0.1:{port}/page")}}]},
        {"text": "done"}
    ]);
    for trusted in [true, false] {
        let sb = Sandbox::new();
        settings(&sb, json!({"allow": ["WebFetch(domain:127.0.0.1)"]}));
        let args: &[&str] = if trusted { &["--trust"] } else { &[] };
        let (out, requests) = sb.exec_scripted(&turns, args, &[]);
        let w = tool_result(requests.last().unwrap(), "w1");
        assert_eq!(
            w["ok"],
            trusted,
            "trusted={trusted}: {w}\n{}",
            text(&out.stderr)
        );
        assert_eq!(w.to_string().contains("FETCHED-BY-RULE"), trusted, "{w}");
    }
}

#[test]
fn north_tool_keeps_the_read_rules_too() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join("secrets")).unwrap();
    std::fs::write(sb.project().join("secrets/key.txt"), "TOP-SECRET-VALUE\n").unwrap();
    settings(&sb, json!({"deny": ["Read(secrets/**)"]}));
    let out = sb
        .north()
        .args(["tool", "read_file", "--args"])
        .arg(json!({"path": "secrets/key.txt"}).to_string())
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(!said.contains("TOP-SECRET-VALUE"), "{said}");
    assert!(said.contains("your rule `Read(secrets/**)`"), "{said}");
}
