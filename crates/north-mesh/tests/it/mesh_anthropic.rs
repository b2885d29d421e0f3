//! The mesh against the test-support Anthropic server: the planner's plan as
//! JSON text, the executor's native `tool_use` blocks, tool results sent
//! back as `tool_result` blocks, and the memory agent's summary.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::mesh_common;

use std::sync::Arc;
use std::time::Duration;

use mesh_common::*;
use north_agent::memory::{MemoryFile, memory_id};
use north_llm::{AnthropicBackend, AnthropicConfig, ApiKey, RetryPolicy, TransportConfig};
use north_mesh::MeshStatus;
use north_test_support::{FakeServer, Reply, anthropic};
use serde_json::Value;

const GOAL: &str = "Find all Rust files and count their lines";
const SUMMARY: &str = "2 Rust files, 4 lines: src/main.rs 3, src/lib.rs 1.";

fn backend(server: &FakeServer) -> Arc<AnthropicBackend> {
    Arc::new(
        AnthropicBackend::new(AnthropicConfig {
            base_url: server.url(),
            api_key: Some(ApiKey::new(KEY)),
            transport: TransportConfig {
                retry: RetryPolicy {
                    max_retries: 1,
                    base_delay: Duration::from_millis(1),
                    max_delay: Duration::from_millis(2),
                    max_retry_after: Duration::from_secs(1),
                },
                ..Default::default()
            },
        })
        .unwrap(),
    )
}

#[tokio::test]
async fn the_mesh_runs_on_anthropic_with_native_tool_use() {
    let dir = project();
    let root = root(&dir);
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&[
        "{\"items\": [{\"description\": \"List the Rust files\", \"tool\": \"bash\"},",
        " {\"description\": \"Count their lines\", \"tool\": \"bash\"}]}",
    ])));
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .text(&["Listing."])
            .tool_use(
                "toolu_01",
                "bash",
                &["{\"cmd\": \"find . ", "-name '*.rs'\"}"],
            )
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["Two files."])));
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .tool_use(
                "toolu_02",
                "bash",
                &["{\"cmd\": \"wc -l src/main.rs", " src/lib.rs\"}"],
            )
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["4 lines in total."])));
    server.push(Reply::sse(anthropic::text_stream(&[
        &SUMMARY[..10],
        &SUMMARY[10..],
    ])));

    let mesh = mesh(
        &root,
        backend(&server),
        policy(&["find", "wc"]),
        yes(),
        "anthropic",
    );
    let ran = run(&mesh, &root, GOAL).await;
    assert_eq!(ran.report.status, MeshStatus::Completed, "{:?}", ran.events);

    let reqs: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(reqs.len(), 6);
    for r in server.requests() {
        assert_eq!(r.header("x-api-key"), Some(KEY));
    }
    // Planner: its role and the output schema in the system prompt, no tools.
    let planner_system = reqs[0]["system"][0]["text"].as_str().unwrap();
    assert!(planner_system.contains("You decompose tasks into executable steps."));
    assert!(planner_system.contains("JSON Schema"));
    assert!(reqs[0].get("tools").is_none());
    // Executor: native tools with their schemas.
    let tools = reqs[1]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["bash", "read", "write"]);
    assert_eq!(tools[0]["input_schema"]["required"][0], "cmd");
    // The tool_use came back as a tool_result with the real output.
    let msgs = reqs[2]["messages"].as_array().unwrap();
    let assistant = &msgs[msgs.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    assert!(assistant["content"].to_string().contains("\"tool_use\""));
    let result = &msgs[msgs.len() - 1]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");
    let outcome: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(outcome["ok"], true);
    assert!(
        outcome["output"]
            .as_str()
            .unwrap()
            .contains("./src/main.rs")
    );
    let second = &reqs[4]["messages"];
    assert!(second.to_string().contains("4 total"), "{second}");
    // Memory agent: its role, the log, and a correctly hashed entry.
    assert!(
        reqs[5]["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Summarize execution into durable memory.")
    );
    assert!(
        reqs[5]["messages"]
            .to_string()
            .contains("wc -l src/main.rs src/lib.rs")
    );
    let entries = MemoryFile::project(&root).load().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].summary, SUMMARY);
    assert_eq!(entries[0].id, memory_id(GOAL, SUMMARY));
    // The key never reaches what the run wrote.
    let trace = std::fs::read_to_string(
        root.join(".north/sessions")
            .join(&ran.report.session_id)
            .join("trace.jsonl"),
    )
    .unwrap();
    assert!(!trace.contains(KEY));
}
