//! North against a real model server: llama.cpp's `llama-server` with a
//! small model (`../shared/tools/llama-server.sh`), over both protocols it
//! speaks (OpenAI Chat Completions at `/v1`, Anthropic Messages).
//!
//! Runs when `NORTH_TEST_LLAMA_URL` (a server started in `plain` mode) and
//! `NORTH_TEST_LLAMA_TOOLS_URL` (one in `tools` mode) are set, e.g.
//!
//! ```text
//! NORTH_TEST_LLAMA_URL=http://127.0.0.1:18081 NORTH_TEST_LLAMA_TOOLS_URL=http://127.0.0.1:18080 \
//!   cargo test -p north --test llama -- --test-threads 1
//! ```
//!
//! and otherwise says so on stderr and passes. The model's words are junk:
//! these tests assert protocol and behaviour (a call is made, its result
//! goes back, the next request is accepted, errors are clear), never content.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, text};

/// The two protocols llama-server speaks.
#[derive(Debug, Clone, Copy)]
enum Protocol {
    OpenAi,
    Anthropic,
}

const BOTH: [Protocol; 2] = [Protocol::OpenAi, Protocol::Anthropic];

/// The server URL in `var`. These tests are `#[ignore]`d (a plain `cargo
/// test` lists them as ignored, never as passed); run with `--ignored`, an
/// unset variable fails the test with what to start.
fn server(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().trim_end_matches('/').to_string()),
        _ => panic!(
            "{var} is not set; start llama-server with ../shared/tools/llama-server.sh \
             (plain and tools modes) and set NORTH_TEST_LLAMA_URL and NORTH_TEST_LLAMA_TOOLS_URL"
        ),
    }
}

fn north(sb: &Sandbox, protocol: Protocol, url: &str) -> Command {
    let mut cmd = sb.north();
    match protocol {
        Protocol::OpenAi => cmd
            .env("OPENAI_BASE_URL", format!("{url}/v1"))
            .env("NORTH_PROVIDER", "openai"),
        Protocol::Anthropic => cmd
            .env("ANTHROPIC_BASE_URL", url)
            .env("ANTHROPIC_API_KEY", "sk-any-key-for-llama")
            .env("NORTH_PROVIDER", "anthropic"),
    };
    cmd.env("NORTH_MODEL", "smollm2");
    cmd
}

fn run(mut cmd: Command) -> Output {
    cmd.output().unwrap()
}

fn events(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn of_type<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

/// No provider error: every request the run made was accepted.
fn assert_accepted(protocol: Protocol, out: &Output, events: &[Value]) {
    let errors = of_type(events, "error");
    assert!(
        errors.is_empty() && out.status.code() != Some(1),
        "{protocol:?}: {errors:?}\n{}",
        text(&out.stderr)
    );
}

#[test]
#[ignore = "needs llama-server: see server() and run with --ignored"]
fn a_plain_answer_streams_and_ends_with_a_stop_reason() {
    let Some(url) = server("NORTH_TEST_LLAMA_URL") else {
        return;
    };
    for p in BOTH {
        let sb = Sandbox::new();
        let mut cmd = north(&sb, p, &url);
        cmd.args(["exec", "--json", "--max-tokens", "24", "Say hello."]);
        let out = run(cmd);
        let ev = events(&out);
        assert_accepted(p, &out, &ev);
        assert_eq!(out.status.code(), Some(0), "{p:?}");
        assert!(
            !of_type(&ev, "assistant_text").is_empty(),
            "{p:?}: text streams"
        );
        let stops = of_type(&ev, "model_stopped");
        assert_eq!(stops.len(), 1, "{p:?}");
        assert!(matches!(
            stops[0]["reason"].as_str(),
            Some("end_turn" | "max_tokens")
        ));
        assert_eq!(ev.last().unwrap()["type"], "turn_end");
    }
}

#[test]
#[ignore = "needs llama-server: see server() and run with --ignored"]
fn a_native_tool_call_runs_and_its_result_goes_back() {
    let Some(url) = server("NORTH_TEST_LLAMA_TOOLS_URL") else {
        return;
    };
    for p in BOTH {
        let sb = Sandbox::new();
        // The file the prompt names is there to read.
        std::fs::write(sb.project().join("README.md"), "# Demo\nA demo project.\n").unwrap();
        let mut cmd = north(&sb, p, &url);
        cmd.args([
            "exec",
            "--json",
            "--max-steps",
            "2",
            // Room for a whole call: the small model fills every argument
            // of read_file's schema (path, range, offset), ~70 tokens.
            "--max-tokens",
            "128",
            "Read the file README.md",
        ]);
        let out = run(cmd);
        let ev = events(&out);
        assert_accepted(p, &out, &ev);
        let results = of_type(&ev, "tool_result");
        assert!(
            !results.is_empty(),
            "{p:?}: the model called a tool: {ev:?}"
        );
        let first_stop = &of_type(&ev, "model_stopped")[0];
        assert_eq!(first_stop["reason"], "tool_use", "{p:?}");
        assert!(
            ev.contains(&json!({"type": "turn_started", "turn": 2})),
            "{p:?}: the result went back in a second request the server accepted"
        );
    }
}

#[test]
#[ignore = "needs llama-server: see server() and run with --ignored"]
fn a_tool_call_cut_off_by_max_tokens_recovers() {
    let Some(url) = server("NORTH_TEST_LLAMA_TOOLS_URL") else {
        return;
    };
    for p in BOTH {
        let sb = Sandbox::new();
        std::fs::write(sb.project().join("README.md"), "# Demo\nA demo project.\n").unwrap();
        let mut cmd = north(&sb, p, &url);
        cmd.args([
            "exec",
            "--json",
            "--max-steps",
            "2",
            "--max-tokens",
            "20",
            "Read the file README.md",
        ]);
        let out = run(cmd);
        let ev = events(&out);
        assert_accepted(p, &out, &ev);
        assert_eq!(
            of_type(&ev, "model_stopped")[0]["reason"],
            "max_tokens",
            "{p:?}: the call was cut: {ev:?}"
        );
        let notices: Vec<&str> = of_type(&ev, "notice")
            .iter()
            .filter(|n| n["kind"] == "malformed_tool_call")
            .map(|n| n["message"].as_str().unwrap())
            .collect();
        assert!(
            notices
                .iter()
                .any(|m| m.contains("cut off by the output token limit (20 tokens)")),
            "{p:?}: {ev:?}"
        );
        assert!(
            ev.contains(&json!({"type": "turn_started", "turn": 2})),
            "{p:?}: the next request was accepted"
        );
    }
}

#[test]
#[ignore = "needs llama-server: see server() and run with --ignored"]
fn a_text_protocol_round_trip_is_accepted() {
    let Some(url) = server("NORTH_TEST_LLAMA_URL") else {
        return;
    };
    for p in BOTH {
        let sb = Sandbox::new();
        // A first turn (scripted) leaves a text-protocol call and its result
        // in the session; the real server then gets that history.
        let script = sb.file(
            "script.json",
            &json!([
                {"text": "Looking.\n<<<TOOL_CALLS_JSON>>>\n[{\"id\": \"t1\", \"tool\": \"read_file\", \"args\": {\"path\": \"README.md\"}}]\n<<<END_TOOL_CALLS_JSON>>>"},
                {"text": "It is a test project."}
            ]),
        );
        let mut cmd = sb.north();
        cmd.args(["exec", "--json", "--tool-protocol", "text", "--script"])
            .arg(&script)
            .arg("What is this project?");
        let first = run(cmd);
        let ev = events(&first);
        assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
        assert!(
            ev.iter()
                .any(|e| e["type"] == "tool_result" && e["ok"] == true)
        );
        let id = ev[0]["session_id"].as_str().unwrap().to_string();

        let mut cmd = north(&sb, p, &url);
        cmd.args([
            "exec",
            "--json",
            "--tool-protocol",
            "text",
            "--max-tokens",
            "32",
            "--resume",
            &id,
            "Thanks. One more word?",
        ]);
        let out = run(cmd);
        let ev = events(&out);
        assert_accepted(p, &out, &ev);
        assert!(
            ev.iter()
                .any(|e| e["type"] == "notice" && e["kind"] == "model_switched"),
            "{p:?}: the session moved from the scripted model to the server's"
        );
        let trace = sb.trace_text(&id);
        let last_request: Value = trace
            .lines()
            .rev()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|t| t["kind"] == "llm_req")
            .unwrap();
        assert_eq!(
            last_request["data"]["tools"], 0,
            "text protocol: no native tools"
        );
        assert!(last_request["data"]["messages"].as_u64().unwrap() >= 4);
    }
}

#[test]
#[ignore = "needs llama-server: see server() and run with --ignored"]
fn the_context_size_is_discovered_from_the_server() {
    let Some(url) = server("NORTH_TEST_LLAMA_URL") else {
        return;
    };
    for p in BOTH {
        let sb = Sandbox::new();
        let mut cmd = north(&sb, p, &url);
        cmd.arg("config");
        let out = run(cmd);
        let shown = text(&out.stdout);
        assert!(
            shown.contains("effective context window = 8192 tokens  (server (llama.cpp /props))")
                && shown.contains("effective max_tokens = 2048 per request"),
            "{p:?}: {shown}"
        );
    }
}

#[test]
#[ignore = "needs llama-server: see server() and run with --ignored"]
fn a_mesh_run_completes_or_fails_with_a_clear_message() {
    let Some(url) = server("NORTH_TEST_LLAMA_URL") else {
        return;
    };
    for p in BOTH {
        let sb = Sandbox::new();
        let mut cmd = north(&sb, p, &url);
        cmd.args([
            "mesh",
            "--max-tokens",
            "128",
            "--max-steps",
            "2",
            "List the files",
        ]);
        let out = run(cmd);
        let shown = text(&out.stdout);
        let err = text(&out.stderr);
        assert!(shown.contains("Planning with smollm2…"), "{p:?}: {shown}");
        match out.status.code() {
            Some(0 | 3 | 4) => assert!(shown.contains("Memory "), "{p:?}: {shown}"),
            Some(1) => assert!(
                err.lines()
                    .any(|l| l.starts_with("north: error: ") && l.len() > 30),
                "{p:?}: a failure says why: {err}"
            ),
            other => panic!("{p:?}: exit {other:?}\n{shown}\n{err}"),
        }
        assert!(!err.contains("panicked"), "{err}");
    }
}
