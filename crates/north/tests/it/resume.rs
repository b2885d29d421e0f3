//! Killing `north exec` mid-turn loses nothing: the session resumes from its
//! log without duplicates, and the session always reads back no matter when
//! the process dies.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use common::Sandbox;

/// The session as North reads it back (`north sessions show ID --json`):
/// the snapshot with the log replayed over it.
fn checkpoint(home: &Sandbox, id: &str) -> Value {
    let out = home
        .north()
        .args(["sessions", "show", id, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every complete line of a session log parses; only the last may be torn.
fn log_replays(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let last = i + 1 == lines.len();
        let ok = line.ends_with('\n') && serde_json::from_str::<Value>(line).is_ok();
        assert!(ok || last, "line {i} of {} is torn: {line}", log.display());
    }
    lines.len()
}

#[test]
fn a_session_killed_mid_turn_resumes_with_nothing_lost_or_duplicated() {
    let home = Sandbox::new();
    let first = home.file(
        "first.json",
        &json!([
            {"text": "Starting the long job.", "tool_calls": [{"id": "long", "name": "shell_run", "args": {"command": "sleep 30", "cwd": null, "timeoutMs": 60000}}]},
            {"text": "never reached"}
        ]),
    );
    let mut child = home
        .north()
        .args(["exec", "--json", "--allow-shell", "--script"])
        .arg(&first)
        .arg("run the long job")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut session = String::new();
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["type"] == "session_started" {
            session = event["session_id"].as_str().unwrap().to_string();
        }
        if event["type"] == "tool_intent" {
            break; // the command is about to run: kill the process now
        }
    }
    assert!(!session.is_empty());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let before = checkpoint(&home, &session);
    let msgs = before["messages"].as_array().unwrap();
    assert_eq!(
        msgs.len(),
        2,
        "the input and the model's tool call were saved: {msgs:?}"
    );

    let second = home.file(
        "second.json",
        &json!([{"text": "Resumed; the job was interrupted, I will check."}]),
    );
    let record = home.dir.path().join("requests.jsonl");
    let out = home
        .north()
        .args(["exec", "--resume", &session, "--script"])
        .arg(&second)
        .arg("--record-requests")
        .arg(&record)
        .arg("what happened?")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let request: Value = serde_json::from_str(
        std::fs::read_to_string(&record)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let messages = request["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        vec!["user", "assistant", "tool", "user"],
        "{messages:?}"
    );
    let texts = serde_json::to_string(messages).unwrap();
    assert_eq!(
        texts.matches("run the long job").count(),
        1,
        "the first input once"
    );
    assert_eq!(
        texts.matches("\"sleep 30\"").count(),
        1,
        "the tool call once"
    );
    assert!(
        texts.contains("interrupted"),
        "the unfinished call is answered as interrupted"
    );
    let after = checkpoint(&home, &session);
    assert!(after["revision"].as_u64().unwrap() > before["revision"].as_u64().unwrap());
    assert_eq!(after["session_id"], session.as_str());
}

#[test]
fn the_session_always_reads_back_when_the_process_is_killed_during_writes() {
    let home = Sandbox::new();
    let turns: Vec<Value> = (0..400)
        .map(|i| json!({"text": format!("step {i} "), "tool_calls": [{"id": format!("c{i}"), "name": "list_root", "args": {}}]}))
        .collect();
    let script = home.file("long.json", &json!(turns));
    let mut parsed = 0;
    for i in 0..30u64 {
        let mut child = home
            .north()
            .args(["exec", "--max-steps", "400", "--script"])
            .arg(&script)
            .arg("go")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill at a different point each time, many checkpoints in.
        let wait = Duration::from_millis(40 + (i * 37) % 400);
        let start = Instant::now();
        while start.elapsed() < wait {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        child.wait().unwrap();
        for entry in std::fs::read_dir(home.project().join(".north/sessions"))
            .unwrap()
            .flatten()
        {
            let cp = entry.path().join("checkpoint.json");
            if cp.exists() {
                let text = std::fs::read_to_string(&cp).unwrap();
                serde_json::from_str::<Value>(&text)
                    .unwrap_or_else(|e| panic!("torn checkpoint {}: {e}", cp.display()));
            }
            if log_replays(&entry.path().join("log.jsonl")) > 0 {
                let id = entry.file_name().to_string_lossy().into_owned();
                let session = checkpoint(&home, &id);
                assert!(session["revision"].as_u64().unwrap() >= 1);
                parsed += 1;
            }
        }
    }
    assert!(
        parsed >= 30,
        "sessions were being written when killed ({parsed})"
    );
}

/// A session killed while its next model request is in flight resumes
/// (`north exec --resume ID`, no new prompt) by sending exactly that
/// request: nothing on disk differs from what the process held in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_after_a_kill_sends_the_same_next_request_as_the_uninterrupted_run() {
    use north_test_support::{FakeServer, Fault, Reply, anthropic};
    for steps in [1usize, 4, 9] {
        let home = Sandbox::new();
        for i in 0..steps {
            std::fs::write(
                home.project().join(format!("f{i}.txt")),
                format!("file {i}\n"),
            )
            .unwrap();
        }
        let live = FakeServer::start().await.unwrap();
        for i in 0..steps {
            let args = format!(r#"{{"path": "f{i}.txt"}}"#);
            live.push(Reply::sse(
                anthropic::StreamBuilder::new()
                    .text(&[&format!("Reading f{i}. ")])
                    .tool_use(&format!("r{i}"), "read_file", &[&args])
                    .build(),
            ));
        }
        // The next request hangs: the process is killed while it waits.
        live.push(Reply::sse(anthropic::text_stream(&["never"])).with_fault(Fault::StallAfter(0)));
        let mut cmd = home.north();
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-RESUMECHECK-0123456789")
            .env("ANTHROPIC_BASE_URL", live.url())
            .args(["exec", "--json", "read the files"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while live.requests_to("/v1/messages").len() < steps + 1 {
            assert!(
                Instant::now() < deadline,
                "the session never reached step {}",
                steps + 1
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        child.kill().unwrap(); // SIGKILL, mid-request
        child.wait().unwrap();
        let in_flight = live.requests_to("/v1/messages")[steps].json();

        let session = std::fs::read_dir(home.project().join(".north/sessions"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .file_name()
            .to_string_lossy()
            .into_owned();
        let resumed = FakeServer::start().await.unwrap();
        resumed.push(Reply::sse(anthropic::text_stream(&["Done."])));
        let out = home
            .north()
            .env("ANTHROPIC_API_KEY", "sk-ant-RESUMECHECK-0123456789")
            .env("ANTHROPIC_BASE_URL", resumed.url())
            .args(["exec", "--resume", &session])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let next = resumed.requests_to("/v1/messages")[0].json();
        assert_eq!(
            next["messages"], in_flight["messages"],
            "after {steps} steps the resumed request differs"
        );
        assert_eq!(next["system"], in_flight["system"]);
        assert_eq!(next["tools"], in_flight["tools"]);
    }
}

/// A resumed session continues its token count: usage is part of the
/// session log, and the totals a front end shows pick up where they were.
#[test]
fn a_resumed_session_continues_its_token_totals() {
    let home = Sandbox::new();
    let script = home.file(
        "script.json",
        &json!([
            {"text": "One.", "usage": {"input_tokens": 100, "output_tokens": 10}},
            {"text": "Two.", "usage": {"input_tokens": 100, "output_tokens": 10}}
        ]),
    );
    let totals = |extra: &[&str]| -> Vec<Value> {
        let out = home
            .north()
            .args(["exec", "--json", "--script"])
            .arg(&script)
            .args(extra)
            .arg("count")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == "usage")
            .map(|e| e["total"].clone())
            .collect()
    };
    let first = totals(&[]);
    assert_eq!(first.last().unwrap()["input_tokens"], 100);
    let second = totals(&["--continue"]);
    let last = second.last().unwrap();
    assert_eq!(last["input_tokens"], 200, "{last}");
    assert_eq!(last["output_tokens"], 20, "{last}");
}

#[test]
fn a_session_is_named_and_resumed_by_its_name() {
    let home = Sandbox::new();
    let script = home.file(
        "script.json",
        &json!([{"text": "First answer."}, {"text": "Second answer."}]),
    );
    let exec = |extra: &[&str]| {
        let out = home
            .north()
            .args(["exec", "--json", "--script"])
            .arg(&script)
            .args(extra)
            .arg("fix the parser")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["type"] == "session_started")
            .unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let id = exec(&[]);
    let other = exec(&[]);
    assert_ne!(id, other);
    let sessions = |args: &[&str]| home.north().arg("sessions").args(args).output().unwrap();
    let renamed = sessions(&["rename", &id, "parser fix"]);
    assert!(
        renamed.status.success(),
        "{}",
        String::from_utf8_lossy(&renamed.stderr)
    );
    assert!(String::from_utf8_lossy(&renamed.stdout).contains("named `parser fix`"));
    // The list names it; `--json` carries the name.
    let list = String::from_utf8_lossy(&sessions(&["list"]).stdout).into_owned();
    let line = list.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(line.contains("[parser fix]"), "{list}");
    let json = String::from_utf8_lossy(&sessions(&["list", "--json"]).stdout).into_owned();
    assert!(json.contains("\"name\":\"parser fix\""), "{json}");
    // `--resume NAME` continues that session, not the latest.
    assert_eq!(exec(&["--resume", "parser fix"]), id);
    // A name nothing has is an error that says where to look.
    let out = home
        .north()
        .args(["exec", "--script"])
        .arg(&script)
        .args(["--resume", "no such name", "hi"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("north sessions list"));
    // A bad name is refused with what names may hold.
    let bad = sessions(&["rename", &id, "a/b"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("letters, digits"));
}
