//! Items of the specifications that were partial (issue 21), each shown
//! through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, recorded};

/// The tool results the model received in `request`, parsed.
fn tool_results(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| serde_json::from_str(b["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// north.md §6.3: write tools answer `{diff, canApply, stats}`; the model
/// used to receive only `{applied, files}` once the user accepted.
#[test]
fn an_accepted_edit_tells_the_model_its_diff_and_stats() {
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "one\ntwo\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!([
            {"tool_calls": [{"id": "e1", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": "two\n", "new": "zwei\ndrei\n"}}]},
            {"tool_calls": [{"id": "e2", "name": "edit_apply_batch", "args": {"edits": [
                {"toolName": "edit_create_file", "args": {"path": "b.txt", "content": "new\n"}},
                {"toolName": "edit_insert_at_line", "args": {"path": "a.txt", "line": 1, "content": "zero\n"}}
            ]}}]},
            {"text": "Done."}
        ]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let out = sb
        .north()
        .args(["exec", "--approve-edits", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("edit a.txt")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "zero\none\nzwei\ndrei\n"
    );

    let sent = recorded(&requests);
    let single = &tool_results(&sent[1])[0];
    assert_eq!(single["ok"], true);
    let output = &single["output"];
    assert_eq!(output["applied"], true);
    assert_eq!(output["canApply"], true);
    assert!(
        output["diff"].as_str().unwrap().contains("+zwei"),
        "{output}"
    );
    assert_eq!(output["stats"]["linesAdded"], 2);
    assert_eq!(output["stats"]["linesRemoved"], 1);

    let batch = &tool_results(&sent[2])[1];
    let output = &batch["output"];
    assert_eq!(output["applied"], true);
    assert!(
        output["diffsByFile"]["b.txt"]
            .as_str()
            .unwrap()
            .contains("+new")
    );
    assert!(
        output["diffsByFile"]["a.txt"]
            .as_str()
            .unwrap()
            .contains("+zero")
    );
    assert_eq!(output["stats"]["files"], 2);
    assert_eq!(output["stats"]["filesCreated"], 1);
}

/// north.md §9: the log holds model requests with the provider's request
/// id, tool calls with their inputs (edit text reduced to its size) and
/// errors; `--log-level debug` adds tool metadata, never contents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_holds_requests_with_their_id_tool_inputs_and_errors_and_debug_adds_metadata() {
    use north_test_support::{FakeServer, Reply, anthropic};

    for level in ["info", "debug"] {
        let server = FakeServer::start().await.unwrap();
        let edit = r#"{"path": "notes.txt", "content": "SECRET-FILE-TEXT-77\n"}"#;
        server.push(
            Reply::sse(
                anthropic::StreamBuilder::new()
                    .tool_use("t1", "edit_create_file", &[edit])
                    .build(),
            )
            .header("request-id", "req_LOGCHECK_1"),
        );
        server.push(Reply::json(
            400,
            anthropic::error_body("invalid_request_error", "prompt is too long"),
        ));
        let sb = Sandbox::new();
        let mut cmd = sb.north();
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-LOGKEY-0123456789abcdef")
            .env("ANTHROPIC_BASE_URL", server.url())
            .args(["exec", "--log-level", level, "write notes"]);
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "the provider failed at the end");
        let log = std::fs::read_to_string(sb.home().join("state/north/north.log")).unwrap();
        for needle in [
            "model request",
            "request_id=\"req_LOGCHECK_1\"",
            "tool call",
            "edit_create_file",
            "notes.txt",
            "<20 chars>",
            "model request failed",
            "severity=\"recoverable\"",
            "prompt is too long",
        ] {
            assert!(log.contains(needle), "{level}: `{needle}` missing:\n{log}");
        }
        assert!(
            !log.contains("SECRET-FILE-TEXT-77"),
            "{level}: edit text logged:\n{log}"
        );
        assert!(!log.contains("LOGKEY"), "{level}: key logged");
        assert_eq!(
            log.contains("tool result"),
            level == "debug",
            "{level}: debug adds tool metadata:\n{log}"
        );
    }
}

/// runtime-contracts §2: a NOTES block that cannot be used is traced, the
/// user is told, and the model learns at its next request that its notes
/// were not saved; the visible answer keeps its text.
#[test]
fn a_malformed_notes_block_is_traced_told_to_the_user_and_to_the_model() {
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!([
            {"text": "Noting. <<<NOTES_JSON>>>{\"set_goals\": [\"x\"<<<END_NOTES_JSON>>> Now reading.",
             "tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": "README.md"}}]},
            {"text": "Done."}
        ]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let out = sb
        .north()
        .args(["exec", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("go")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("Noting.") && stdout.contains("Now reading."),
        "{stdout}"
    );
    assert!(!stdout.contains("NOTES_JSON"), "{stdout}");
    assert!(
        stderr.contains("the model's NOTES block was rejected"),
        "{stderr}"
    );

    let sent = recorded(&requests);
    let second = sent[1].to_string();
    assert!(
        second.contains("NOTES_JSON rejected, your notes were not changed"),
        "{second}"
    );

    let sessions = sb.project().join(".north/sessions");
    let session = std::fs::read_dir(sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let trace = std::fs::read_to_string(session.path().join("trace.jsonl")).unwrap();
    let patch: Value = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["kind"] == "notes_patch")
        .expect("the patch is traced");
    assert_eq!(patch["data"]["ok"], false, "{patch}");
}

/// north.md §4.2 and runtime-contracts §1: global memory is written by the
/// product (`north memory add --global`), retrieved in any project, recorded
/// in the session's `memory_refs`; NOTES `memory_tags` steer retrieval.
#[test]
fn global_memory_is_written_retrieved_referenced_and_steered_by_tags() {
    let sb = Sandbox::new();
    let out = sb
        .north()
        .args(["memory", "add", "--global", "--tag", "errors"])
        .args(["Binaries", "report", "failures", "with", "anyhow"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let global = sb.home().join("data/north/memory.json");
    let entries: Value = serde_json::from_str(&std::fs::read_to_string(&global).unwrap()).unwrap();
    let id = entries[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        entries[0]["summary"],
        "Binaries report failures with anyhow"
    );
    assert_eq!(entries[0]["tags"], json!(["errors"]));
    let listed = sb
        .north()
        .args(["memory", "list", "--global"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains(&id));
    let project = sb.north().args(["memory", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&project.stdout).contains("no memories"));

    // The user's words do not match the memory; the model's memory tag
    // does, from the session's next turn on (a turn keeps one system prompt).
    let script = sb.file(
        "script.json",
        &json!([
            {"text": "<<<NOTES_JSON>>>{\"add_memory_tags\": [\"errors\"]}<<<END_NOTES_JSON>>>Noted."},
            {"text": "Done."}
        ]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let exec = |extra: &[&str], prompt: &str| {
        let out = sb
            .north()
            .args(["exec", "--script"])
            .arg(&script)
            .arg("--record-requests")
            .arg(&requests)
            .args(extra)
            .arg(prompt)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    exec(&[], "hello there");
    assert!(
        !recorded(&requests)[0]
            .to_string()
            .contains("report failures with anyhow")
    );
    exec(&["--continue"], "hello again");
    assert!(
        recorded(&requests)[1]
            .to_string()
            .contains("report failures with anyhow"),
        "the tag retrieved the global memory"
    );
    let sessions = sb.project().join(".north/sessions");
    let session = std::fs::read_dir(sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let checkpoint: Value = serde_json::from_str(
        &std::fs::read_to_string(session.path().join("checkpoint.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(checkpoint["state"]["memory_refs"], json!([id]));
    assert_eq!(checkpoint["state"]["memory_tags"], json!(["errors"]));

    let out = sb
        .north()
        .args(["memory", "remove", "--global", &id[..6]])
        .output()
        .unwrap();
    assert!(out.status.success());
    let entries: Value = serde_json::from_str(&std::fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(entries, json!([]));
    let out = sb
        .north()
        .args(["memory", "remove", "--global", "abcd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// runtime-contracts §4 in the product: with `net` granted the model is
/// offered `http.get` and its fetch works; without a grant it is not
/// offered; the `net_allowlist` setting narrows what `net` reaches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_get_reaches_the_model_when_net_is_granted_and_the_allowlist_narrows_it() {
    use north_test_support::{FakeServer, Reply};
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(200, r#"{"answer": "from the web"}"#));
    let url = format!("{}/data.json", server.url());
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!([
            {"tool_calls": [{"id": "h1", "name": "http.get", "args": {"url": url}}]},
            {"text": "Fetched."}
        ]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let run = |grant: Option<&str>| {
        let _ = std::fs::remove_file(&requests);
        let mut cmd = sb.north();
        cmd.args(["exec", "--script"])
            .arg(&script)
            .arg("--record-requests")
            .arg(&requests);
        if let Some(g) = grant {
            cmd.args(["--grant", g]);
        }
        cmd.arg("fetch it");
        let out = cmd.output().unwrap();
        (out, recorded(&requests))
    };
    let offered = |req: &Value| {
        req["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "http.get")
    };

    // The local server is loopback: `net` alone never reaches it (one
    // private-address rule for every fetcher); a grant naming it does.
    let (out, sent) = tokio::task::block_in_place(|| run(Some("net")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(offered(&sent[0]), "http.get is offered with net granted");
    let result = &tool_results(&sent[1])[0];
    assert_eq!(result["ok"], false, "{result}");
    assert!(
        result.to_string().contains("loopback or private address"),
        "{result}"
    );
    let (out, sent) = tokio::task::block_in_place(|| run(Some("net:127.0.0.1")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        offered(&sent[0]),
        "http.get is offered with net:HOST granted"
    );
    let result = &tool_results(&sent[1])[0];
    assert_eq!(result["ok"], true, "{result}");
    assert!(result.to_string().contains("from the web"), "{result}");

    let (_, sent) = tokio::task::block_in_place(|| run(None));
    assert!(!offered(&sent[0]), "not offered without a grant");

    std::fs::write(
        sb.project().join(".north/project.json"),
        r#"{"net_allowlist": ["example.org"]}"#,
    )
    .unwrap();
    // Outside the allowlist `net` is not enough: the host-specific grant is
    // asked for, and headless nobody grants it.
    let (_, sent) = tokio::task::block_in_place(|| run(Some("net")));
    let result = &tool_results(&sent[1])[0];
    assert_eq!(result["ok"], false, "{result}");
    assert!(
        result["error"].as_str().unwrap().contains("net:127.0.0.1"),
        "{result}"
    );
}
