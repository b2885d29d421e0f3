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
            "deny": ["Bash(git push:*)", "Read(./.env)"],
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
    assert!(err.contains("`Read(./.env)` (deny)"), "{err}");
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
