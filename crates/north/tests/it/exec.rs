//! `north exec` end to end: the real binary against fake provider servers
//! on 127.0.0.1, the scripted backend, errors, and key hygiene.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use north_test_support::{FakeServer, Reply, anthropic, openai};

use crate::common;
use common::{Sandbox, output, text};

const FAKE_KEY: &str = "sk-ant-NORTHLEAKCHECK-7f3a9c1e5b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_the_answer_from_an_anthropic_compatible_server() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&[
        "The answer",
        " is 42.",
    ])));
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["exec", "what", "is", "it?"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "The answer is 42.\n");
    assert!(
        text(&out.stderr).contains("north: session "),
        "the session id is reported"
    );
    let req = &server.requests_to("/v1/messages")[0];
    assert_eq!(
        req.json()["messages"][0]["content"][0]["text"],
        "what is it?"
    );
    assert_eq!(req.json()["model"], "claude-sonnet-4-5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_the_answer_from_an_openai_compatible_server_without_a_key() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&[
        "Local", " model", " here.",
    ])));
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args([
            "exec",
            "--provider",
            "openai",
            "--model",
            "qwen2.5-coder",
            "hello",
        ]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Local model here.\n");
    let req = &server.requests_to("/v1/chat/completions")[0];
    assert_eq!(req.json()["model"], "qwen2.5-coder");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_provider_needs_no_network_and_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [{"text": "Offline answer, no model needed."}]}"#,
    )
    .unwrap();
    let rec = dir.path().join("requests.jsonl");
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.arg("exec")
        .arg("--script")
        .arg(&script)
        .arg("--record-requests")
        .arg(&rec)
        .arg("hello");
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Offline answer, no model needed.\n");
    let recorded = std::fs::read_to_string(&rec).unwrap();
    assert!(recorded.contains("\"hello\""), "{recorded}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_protocol_events_one_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(
        &script,
        r#"[{"text": "Reading it.", "tool_calls": [{"id": "t1", "name": "read_file", "args": {"path": "README.md", "range": null}}], "usage": {"input_tokens": 10, "output_tokens": 4}},
            {"text": "It is a test project.", "usage": {"input_tokens": 30, "output_tokens": 6}}]"#,
    )
    .unwrap();
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.arg("exec")
        .arg("--json")
        .arg("--script")
        .arg(&script)
        .arg("go");
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut events: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect();
    // The session id is time-based; the rest is deterministic.
    events[0]["session_id"] = "<session>".into();
    insta::assert_json_snapshot!("exec_json_events", events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_prompt_is_read_when_no_argument_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"[{"text": "ok"}]"#).unwrap();
    let rec = dir.path().join("r.jsonl");
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.arg("exec")
        .arg("--script")
        .arg(&script)
        .arg("--record-requests")
        .arg(&rec);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"prompt from a pipe")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(&rec)
            .unwrap()
            .contains("prompt from a pipe")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_key_exits_2_with_one_line_naming_the_fix() {
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.args(["exec", "hi"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ANTHROPIC_API_KEY") && err.contains("--provider scripted"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_error_exits_1_with_status_and_provider_message() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(
        400,
        anthropic::error_body(
            "invalid_request_error",
            "messages: at least one message is required",
        ),
    ));
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["exec", "hi"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let err: String = err
        .lines()
        .filter(|l| !l.starts_with("north: session"))
        .collect();
    assert!(
        err.contains("HTTP 400 invalid_request_error: messages: at least one message is required"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recognisable_key_never_appears_in_any_output() {
    let server = FakeServer::start().await.unwrap();
    // The server misbehaves by echoing the key, in an error and in text.
    server.push(Reply::json(
        401,
        anthropic::error_body(
            "authentication_error",
            &format!("invalid x-api-key {FAKE_KEY}"),
        ),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["fine"])));
    server.push(Reply::json(
        401,
        anthropic::error_body(
            "authentication_error",
            &format!("invalid x-api-key {FAKE_KEY}"),
        ),
    ));
    let mut all = String::new();
    let sandbox = Sandbox::new();
    for json in [false, true] {
        for _ in 0..(if json { 2 } else { 1 }) {
            let mut cmd = sandbox.north();
            cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
                .env("ANTHROPIC_BASE_URL", server.url())
                .env("NORTH_LOG", "trace");
            cmd.arg("exec");
            if json {
                cmd.arg("--json");
            }
            cmd.arg("hi");
            let out = output(cmd).await;
            all.push_str(&text(&out.stdout));
            all.push_str(&text(&out.stderr));
        }
    }
    // Logs, traces, checkpoints: every file North wrote in the sandbox.
    all.push_str(&sandbox.everything_written());
    assert!(
        sandbox.home().join("state/north/north.log").exists(),
        "the log was written"
    );
    assert!(
        all.contains("authentication_error"),
        "the errors were printed: {all}"
    );
    assert!(all.contains("[REDACTED]"));
    assert!(!all.contains(FAKE_KEY), "key leaked:\n{all}");
    assert!(
        !all.contains("NORTHLEAKCHECK"),
        "part of the key leaked:\n{all}"
    );
}

#[test]
fn version_and_help_work() {
    let sb = Sandbox::new();
    let out = sb.north().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        format!("north {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = sb.north().arg("--help").output().unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("help", text(&out.stdout));
    let out = sb.north().args(["exec", "--help"]).output().unwrap();
    insta::assert_snapshot!("exec_help", text(&out.stdout));
}

/// Token discipline: the first request of a session — system prompt with a
/// full project card and the tools a first turn offers — is at most a fifth
/// of Codex's (39.5 KB in the same project, README's Performance) on the
/// wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_first_request_is_under_a_fifth_of_codexs() {
    let sb = Sandbox::new();
    let readme: String = (0..80)
        .map(|i| format!("Line {i} of a long README that explains the project.\n"))
        .collect();
    std::fs::write(sb.project().join("README.md"), readme).unwrap();
    for i in 0..40 {
        std::fs::write(
            sb.project().join(format!("module_{i:02}.rs")),
            "fn f() {}\n".repeat(i + 1),
        )
        .unwrap();
    }
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["exec", "Summarise this repository"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let req = &server.requests_to("/v1/messages")[0];
    let tools = req.json()["tools"].as_array().unwrap().len();
    eprintln!("first request: {} bytes with {tools} tools", req.body.len());
    assert!(tools >= 9);
    assert!(
        req.body.len() * 5 <= 39_500,
        "first request is {} bytes",
        req.body.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mentioned_files_are_attached_and_escapes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"[{"text": "ok"}]"#).unwrap();
    let rec = dir.path().join("r.jsonl");
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("notes.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    std::fs::write(sb.dir.path().join("secret.txt"), "OUTSIDE-SECRET\n").unwrap();
    std::fs::write(sb.project().join(".env"), "TOKEN=ENV-SECRET\n").unwrap();
    let mut cmd = sb.north();
    cmd.arg("exec")
        .arg("--script")
        .arg(&script)
        .arg("--record-requests")
        .arg(&rec)
        .arg("compare @notes.txt:2-3 with @../secret.txt and @.env");
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = std::fs::read_to_string(&rec).unwrap();
    assert!(
        sent.contains(r#"<file path=\"notes.txt\" lines=\"2-3\">\ntwo\nthree\n</file>"#),
        "{sent}"
    );
    assert!(
        !sent.contains("OUTSIDE-SECRET") && !sent.contains("ENV-SECRET"),
        "{sent}"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("attached @notes.txt:2-3") && err.contains("not attached: @../secret.txt"),
        "{err}"
    );
    assert!(err.contains("@.env (a secret .env file)"), "{err}");
}
