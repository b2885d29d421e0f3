//! One test per defect found running North against a real local model
//! server (issue 14), through the real binary and named after what went
//! wrong. The fake servers reproduce exactly what llama.cpp sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use north_test_support::{FakeServer, Reply, anthropic, discovery, openai};
use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, json_lines, output, recorded, text};

const FAKE_KEY: &str = "sk-ant-REGRESSIONKEY-9a8b7c6d5e";

/// `north exec` against `server` as an OpenAI-compatible local server.
fn local_exec(sb: &Sandbox, server: &FakeServer, args: &[&str]) -> Command {
    let mut cmd = sb.north();
    cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args(["exec", "--provider", "openai", "--model", "smollm2"])
        .args(args);
    cmd
}

/// The script file of a scripted run.
fn script(sb: &Sandbox, turns: Value) -> String {
    sb.file("script.json", &turns).display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_cut_off_by_max_tokens_does_not_stick_the_session() {
    let server = FakeServer::start().await.unwrap();
    // What llama-server streams when --max-tokens ends inside the arguments.
    server.push(Reply::sse(
        openai::StreamBuilder::new()
            .tool_call(
                0,
                "TJaSmGBiINjm20Tco3TTQtG9WyhPZT2A",
                "read_file",
                &["{", "\n    \"", "path"],
            )
            .finish("length")
            .build(),
    ));
    server.push(Reply::sse(openai::text_stream(&[
        "Sorry, ",
        "let me answer directly.",
    ])));
    let sb = Sandbox::new();
    let out = output(local_exec(
        &sb,
        &server,
        &["--max-tokens", "20", "Read the README"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("let me answer directly."));
    let err = text(&out.stderr);
    assert!(
        err.contains("north: note: the model's call to read_file was cut off by the output token limit (20 tokens)"),
        "{err}"
    );
    let chats = server.requests_to("/v1/chat/completions");
    assert_eq!(
        chats.len(),
        2,
        "one retry-free follow-up, not five failed attempts"
    );
    assert_eq!(chats[0].json()["max_tokens"], 20);
    let messages = chats[1].json()["messages"].clone();
    let args = messages[2]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({}),
        "the history keeps a call the server accepts"
    );
    let result = &messages[3];
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], "TJaSmGBiINjm20Tco3TTQtG9WyhPZT2A");
    let content = result["content"].as_str().unwrap();
    assert!(
        content.contains("cut off by the output token limit (20 tokens)")
            && content.contains("path"),
        "the model is told what happened and what it sent: {content}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_tokens_cut_off_is_a_notice_and_distinct_in_json() {
    let sb = Sandbox::new();
    let turns = json!([{"text": "The answer is long and", "stop_reason": "max_tokens"}]);
    let s = script(&sb, turns.clone());
    let out = output({
        let mut c = sb.north();
        c.args(["exec", "--script", &s, "explain"]);
        c
    })
    .await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "The answer is long and\n");
    assert!(
        text(&out.stderr)
            .contains("north: note: the model's output was cut off at the output limit of"),
        "{}",
        text(&out.stderr)
    );
    let s = script(&sb, turns);
    let out = output({
        let mut c = sb.north();
        c.args([
            "exec",
            "--json",
            "--max-tokens",
            "64",
            "--script",
            &s,
            "explain",
        ]);
        c
    })
    .await;
    let events = json_lines(&out);
    assert!(events.contains(&json!({"type": "model_stopped", "turn": 1, "reason": "max_tokens"})));
    assert!(events.contains(&json!({"type": "notice", "kind": "output_cut",
        "message": "the model's output was cut off at the output limit of 64 tokens (--max-tokens)"})));
    assert_eq!(events.last().unwrap()["stop_reason"], "max_tokens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_text_protocol_block_is_reported_to_the_model_and_the_user() {
    let sb = Sandbox::new();
    let s = script(
        &sb,
        json!([
            {"text": "Listing.\n<<<TOOL_CALLS_JSON>>>\n[{\"id\": \"t1\", \"tool\": \"list_root\"}]\n<<<END_TOOL_CALLS_JSON>>>"},
            {"text": "Fixed.\n<<<TOOL_CALLS_JSON>>>\n[{\"id\": \"t2\", \"tool\": \"list_root\", \"args\": {}}]\n<<<END_TOOL_CALLS_JSON>>>"},
            {"text": "The project has a README."}
        ]),
    );
    let rec = sb.dir.path().join("requests.jsonl");
    let out = output({
        let mut c = sb.north();
        c.args([
            "exec",
            "--tool-protocol",
            "text",
            "--script",
            &s,
            "--record-requests",
        ])
        .arg(&rec)
        .arg("what is here?");
        c
    })
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("north: note: the model's tool-call block was rejected (tool call #0: `args` must be an object)"),
        "{err}"
    );
    let reqs = recorded(&rec);
    assert_eq!(reqs.len(), 3, "the model got a step to fix its block");
    let told = reqs[1]["messages"].to_string();
    assert!(
        told.contains(
            "TOOL_CALLS_JSON rejected, nothing ran: tool call #0: `args` must be an object"
        ),
        "{told}"
    );
    assert!(text(&out.stdout).contains("The project has a README."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stray_opening_marker_does_not_hide_the_rest_of_the_answer() {
    let sb = Sandbox::new();
    let s = script(
        &sb,
        json!([
            {"text": "Tools are called with <<<TOOL_CALLS_JSON>>> blocks. The answer is 42."},
            {"text": "Done."}
        ]),
    );
    let out = output({
        let mut c = sb.north();
        c.args(["exec", "--tool-protocol", "text", "--script", &s, "how?"]);
        c
    })
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("The answer is 42."), "{shown}");
    assert!(
        text(&out.stderr).contains("has no end marker <<<END_TOOL_CALLS_JSON>>>"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_size_comes_from_the_server_not_a_constant() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "GET",
        "/props",
        Reply::json(200, discovery::llama_props(8192).to_string()),
    );
    server.push(Reply::sse(openai::text_stream(&["ok"])));
    server.push(Reply::sse(openai::text_stream(&["ok"])));
    let sb = Sandbox::new();
    let out = output(local_exec(&sb, &server, &["hi"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = output(local_exec(&sb, &server, &["--max-tokens", "100000", "hi"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let chats = server.requests_to("/v1/chat/completions");
    assert_eq!(
        chats[0].json()["max_tokens"],
        2048,
        "a quarter of 8192 by default"
    );
    assert_eq!(
        chats[1].json()["max_tokens"],
        4096,
        "never more than half the window"
    );

    let mut cmd = sb.north();
    cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("NORTH_PROVIDER", "openai")
        .env("NORTH_MODEL", "smollm2")
        .arg("config");
    let shown = text(&output(cmd).await.stdout);
    assert!(
        shown.contains("effective context window = 8192 tokens  (server (llama.cpp /props))"),
        "{shown}"
    );
}

/// Nothing but the model request goes out on the way to the first token: a
/// catalogued model's window is known, and a local server's reported window
/// is remembered (for the hour), so only a session's very first start
/// against an unknown model asks — and the next request still fits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_model_request_goes_out_before_the_first_token() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "GET",
        "/props",
        Reply::json(200, discovery::llama_props(8192).to_string()),
    );
    for _ in 0..3 {
        server.push(Reply::sse(openai::text_stream(&["ok"])));
    }
    let sb = Sandbox::new();
    let paths = |server: &FakeServer| -> Vec<String> {
        server.requests().into_iter().map(|r| r.path).collect()
    };
    let catalogued = |server: &FakeServer| {
        let mut cmd = sb.north();
        cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
            .args(["exec", "--provider", "openai", "--model", "gpt-5.2", "hi"]);
        cmd
    };
    let out = output(catalogued(&server)).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        paths(&server),
        ["/v1/chat/completions"],
        "no probe for a catalogued model"
    );

    let out = output(local_exec(&sb, &server, &["hi"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = paths(&server).len();
    assert!(
        first > 2,
        "the first start asks the server: {:?}",
        paths(&server)
    );
    let out = output(local_exec(&sb, &server, &["hi"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        paths(&server)[first..],
        ["/v1/chat/completions"],
        "the reported window is remembered"
    );
    let chats = server.requests_to("/v1/chat/completions");
    assert_eq!(
        chats[2].json()["max_tokens"],
        2048,
        "and still fits the window"
    );
}

/// A Responses stream whose `output_item.added` already carries the
/// arguments and whose deltas repeat them (as some implementations and
/// proxies send): the call runs with its arguments once, not twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_arguments_sent_in_added_and_deltas_are_not_doubled() {
    use north_test_support::sse_event;
    let server = FakeServer::start().await.unwrap();
    let args = r#"{"path": "hello.txt"}"#;
    let call = json!({"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": args});
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5.2"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": call}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": r#"{"path": "#}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": r#""hello.txt"}"#}),
        json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": args}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "usage": null}}),
    ];
    let body: String = events
        .iter()
        .map(|e| sse_event(e["type"].as_str(), &e.to_string()))
        .collect();
    server.push(Reply::sse(body));
    server.push(Reply::sse(north_test_support::responses::text_stream(&[
        "It says hello.",
    ])));
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("hello.txt"), "hello\n").unwrap();
    let mut cmd = sb.north();
    cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "sk-test-not-real")
        .args([
            "exec",
            "--provider",
            "openai",
            "--openai-api",
            "responses",
            "--json",
            "read it",
        ]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["ok"], true, "{results:?}");
    // Both requests of the session carry its id as the prompt cache key.
    let keys: Vec<Value> = server
        .requests_to("/v1/responses")
        .iter()
        .map(|r| r.json()["prompt_cache_key"].clone())
        .collect();
    assert_eq!(keys.len(), 2);
    assert!(keys[0].as_str().is_some_and(|k| !k.is_empty()), "{keys:?}");
    assert_eq!(keys[0], keys[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mesh_planner_fits_the_window_and_its_repair_shows_the_schema_and_the_error() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "GET",
        "/props",
        Reply::json(200, discovery::llama_props(8192).to_string()),
    );
    // A small model answers one step object where the schema wants {"items": [...]}.
    server.push(Reply::sse(openai::text_stream(&[
        "{\"description\": \"Read the README\", \"tool\": \"read\"}",
    ])));
    server.push(Reply::sse(openai::text_stream(&[
        "{\"items\": [{\"description\": \"Say hello\", \"tool\": null}]}",
    ])));
    server.push(Reply::sse(openai::text_stream(&["Hello."])));
    server.push(Reply::sse(openai::text_stream(&["Said hello."])));
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args([
            "mesh",
            "--provider",
            "openai",
            "--model",
            "smollm2",
            "say hello",
        ]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for line in [
        "Planning with smollm2…",
        "Plan attempt 1 could not be used (expected an object with an `items` array of steps (or a bare array of steps), found an object); asking again.",
        "Executing the plan…",
        "Remembering the run…",
    ] {
        assert!(shown.contains(line), "missing {line:?} in:\n{shown}");
    }
    let chats = server.requests_to("/v1/chat/completions");
    assert_eq!(
        chats[0].json()["max_tokens"],
        2048,
        "the planner's budget comes from the window"
    );
    let repair = chats[1].json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(repair.contains("found an object"), "{repair}");
    assert!(
        repair.contains("\"items\"") && repair.contains("\"description\""),
        "the schema is shown: {repair}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_errors_name_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .args(["exec", "hi"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("cannot reach http://127.0.0.1:{port}/v1/messages")),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_says_which_key_variable_was_used_and_requests_carry_a_user_agent() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(
        401,
        anthropic::error_body("authentication_error", "invalid x-api-key"),
    ));
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["exec", "hi"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("HTTP 401 authentication_error: invalid x-api-key (the key in ANTHROPIC_API_KEY was rejected"),
        "{err}"
    );
    assert!(!err.contains(FAKE_KEY));
    let agent = format!("north/{}", env!("CARGO_PKG_VERSION"));
    for r in server.requests() {
        assert_eq!(r.header("user-agent"), Some(agent.as_str()), "{}", r.path);
    }
}
