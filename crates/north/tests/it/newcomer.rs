//! A newcomer's first ten minutes, through the real binary: the README demo,
//! usage errors that exit 2 with one clear line, errors printed once, and
//! North's state kept out of the user's `git status`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::{Sandbox, text};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script(sb: &Sandbox, turns: serde_json::Value) -> String {
    sb.file("script.json", &serde_json::json!({ "turns": turns }))
        .display()
        .to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The binary, with the toolchain reachable so a demo's `cargo build` works
/// under the scratch `HOME`.
fn north_with_toolchain(sb: &Sandbox) -> Command {
    let mut cmd = sb.north();
    let real_home = std::env::var_os("HOME").map(PathBuf::from);
    for (var, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        match (std::env::var_os(var), &real_home) {
            (Some(v), _) => {
                cmd.env(var, v);
            }
            (None, Some(home)) => {
                cmd.env(var, home.join(default));
            }
            (None, None) => {}
        }
    }
    cmd
}

#[test]
fn the_readme_demo_runs_as_written_from_a_fresh_clone() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(
        readme.contains("cp -r examples/demo-project /tmp/north-demo"),
        "the README's demo copies the demo project"
    );
    assert!(readme.contains("--path /tmp/north-demo --script docs/screens/demo.json"));

    // The same run, headless and accepting everything, in a copy of the
    // committed demo project.
    let sb = Sandbox::new();
    let demo = sb.dir.path().join("north-demo");
    copy_dir(&repo_root().join("examples/demo-project"), &demo);
    let mut cmd = north_with_toolchain(&sb);
    cmd.current_dir(repo_root()).args([
        "exec",
        "--path",
        demo.to_str().unwrap(),
        "--script",
        "docs/screens/demo.json",
        "--yes",
        "show me",
    ]);
    let out = cmd.output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("↳ wrote `src/main.rs`, `src/greet.rs`"),
        "{stdout}"
    );
    assert!(
        std::fs::read_to_string(demo.join("src/greet.rs"))
            .unwrap()
            .contains("bonjour")
    );
    assert!(
        !repo_root()
            .join("examples/demo-project/src/greet.rs")
            .exists(),
        "the committed demo project is never edited"
    );
}

#[test]
fn step_limits_of_zero_are_usage_errors_naming_the_setting() {
    let sb = Sandbox::new();
    let out = sb
        .north()
        .args(["exec", "--max-steps", "0", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--max-steps"),
        "{}",
        text(&out.stderr)
    );

    let out = sb
        .north()
        .env("NORTH_MAX_STEPS", "0")
        .args(["exec", "--provider", "scripted", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("NORTH_MAX_STEPS"),
        "{}",
        text(&out.stderr)
    );

    std::fs::write(
        sb.project().join(".north/project.json"),
        r#"{"max_steps": 0}"#,
    )
    .unwrap();
    let out = sb
        .north()
        .args(["exec", "--provider", "scripted", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("field `max_steps`: must be at least 1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn an_unknown_capability_is_a_usage_error_naming_the_valid_ones() {
    let sb = Sandbox::new();
    for command in [
        &["exec", "--grant", "foo", "hi"][..],
        &["acp", "--grant", "foo"],
    ] {
        let out = sb.north().args(command).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("unknown capability `foo`") && err.contains("net:<host>"),
            "{err}"
        );
    }
}

#[test]
fn a_tool_called_without_its_arguments_is_a_usage_error() {
    let sb = Sandbox::new();
    let out = sb.north().args(["tool", "read_file"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("\"path\" is a required property"),
        "{json}"
    );
}

#[test]
fn a_provider_error_is_printed_once() {
    let sb = Sandbox::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let out = sb
        .north()
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .args(["exec", "--provider", "openai", "--model", "m", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("cannot reach").count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
}

#[test]
fn the_no_key_hint_names_everything_the_scripted_provider_needs() {
    let sb = Sandbox::new();
    let out = sb.north().args(["exec", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--provider scripted --script FILE"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn exec_shows_what_a_command_printed_and_why_one_was_not_run() {
    let sb = Sandbox::new();
    let s = script(
        &sb,
        serde_json::json!([
            {"text": "Looking.", "tool_calls": [
                {"id": "c1", "name": "shell_run", "args": {"command": "ls no-such-file; echo visible-output"}}]},
            {"text": "Cleaning.", "tool_calls": [
                {"id": "c2", "name": "shell_run", "args": {"command": "rm -rf /tmp/never-north"}}]},
            {"text": "Done."}
        ]),
    );
    let out = sb
        .north()
        .args(["exec", "--script", &s, "--allow-shell", "go"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a refused command exits 3: {stdout}"
    );
    assert!(stdout.contains("│ visible-output"), "{stdout}");
    assert!(
        stdout.contains("┆ ls: cannot access"),
        "stderr too: {stdout}"
    );
    assert!(!stdout.contains("user rejected"), "{stdout}");
    assert!(
        stdout.contains("not run: `rm -rf /tmp/never-north`"),
        "{stdout}"
    );
}

#[test]
fn north_state_stays_out_of_git_status_but_shared_settings_stay_trackable() {
    let sb = Sandbox::new();
    let project = sb.project();
    std::fs::remove_dir_all(project.join(".north")).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&project)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    git(&["init", "-q"]);
    let s = script(&sb, serde_json::json!([{"text": "Hi."}]));
    let out = sb
        .north()
        .args(["exec", "--script", &s, "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(project.join(".north/sessions").is_dir());
    let status = git(&["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status.trim(), "?? README.md", "{status}");

    // A user's own ignore file is kept; shared settings show up to be committed.
    std::fs::write(project.join(".north/project.json"), "{}").unwrap();
    std::fs::write(project.join(".north/allowlist.json"), "[]").unwrap();
    let status = git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(status.contains(".north/project.json"), "{status}");
    assert!(status.contains(".north/allowlist.json"), "{status}");
    assert!(!status.contains("sessions"), "{status}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = sb.north().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for word in ["exec", "sessions", "max-steps"] {
            assert!(script.contains(word), "{shell} completes {word}");
        }
    }
    let out = sb
        .north()
        .args(["completions", "cmd.exe"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("possible values"));
}

#[test]
fn json_mode_streams_a_commands_output_before_its_result() {
    let sb = Sandbox::new();
    let s = script(
        &sb,
        serde_json::json!([
            {"tool_calls": [{"id": "c1", "name": "shell_run",
                "args": {"command": "echo live-out; ls no-such-live-err"}}]},
            {"text": "Done."}
        ]),
    );
    let out = sb
        .north()
        .args(["exec", "--json", "--yes", "--script", &s, "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = |pred: &dyn Fn(&serde_json::Value) -> bool| events.iter().position(pred);
    let out_at = at(&|e| {
        e["type"] == "tool_output"
            && e["stream"] == "stdout"
            && e["text"].as_str().unwrap().contains("live-out")
    })
    .expect("stdout streamed");
    let err_at = at(&|e| {
        e["type"] == "tool_output"
            && e["stream"] == "stderr"
            && e["text"].as_str().unwrap().contains("no-such-live-err")
    })
    .expect("stderr streamed");
    let result_at = at(&|e| e["type"] == "tool_result").unwrap();
    assert!(out_at < result_at && err_at < result_at);
    assert_eq!(events[out_at]["call_id"], "c1");
}
