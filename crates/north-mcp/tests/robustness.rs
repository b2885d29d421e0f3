//! Servers that misbehave: one that crashes mid-call (reported, restarted
//! on the next use), one that floods stdout with non-protocol text (North's
//! memory stays bounded), one that never answers (the call times out).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::interop;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use north_mcp::config::{Scope, ServerConfig, Transport};
use north_mcp::{HubOptions, McpHub, ServerState};
use north_tools::{Registry, ToolContext};
use serde_json::json;

fn fake(node: &Path, name: &str, args: &[&str], timeout: Option<u64>) -> ServerConfig {
    let script = interop::interop_dir()
        .join("fake-server.mjs")
        .display()
        .to_string();
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: node.display().to_string(),
            args: std::iter::once(script)
                .chain(args.iter().map(|a| a.to_string()))
                .collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
        timeout_secs: timeout,
        scope: Scope::User,
        disabled: false,
        oauth: None,
    }
}

fn registry(hub: &Arc<McpHub>) -> Registry {
    let mut r = Registry::new();
    r.add_source(hub.tool_source());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_mid_call_is_reported_and_restarted_on_next_use() {
    let Some((node, _)) = interop::mcp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("crashed");
    let starts = dir.path().join("started");
    let server = fake(
        &node,
        "crashy",
        &[
            "crash",
            "--state",
            state.to_str().unwrap(),
            "--mark",
            starts.to_str().unwrap(),
        ],
        None,
    );
    let hub = McpHub::new(vec![server], HubOptions::new(dir.path().to_path_buf()));
    let tools = registry(&hub);
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = tools.call("mcp__crashy__work", json!({}), &ctx).await;
    assert!(!out.ok, "{out:?}");
    let error = out.error.unwrap();
    assert!(error.contains("stopped during the request"), "{error}");
    assert!(
        error.contains("simulated crash"),
        "the server's last words are quoted: {error}"
    );
    assert_eq!(hub.statuses()[0].state, ServerState::Failed);
    std::fs::remove_file(&starts).unwrap();

    let out = tools.call("mcp__crashy__work", json!({}), &ctx).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["text"], "recovered and done");
    assert!(starts.exists(), "the server was started again");
    assert_eq!(hub.statuses()[0].state, ServerState::Ready);
    hub.shutdown().await;
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_flooding_stdout_cannot_grow_norths_memory() {
    let Some((node, _)) = interop::mcp() else {
        return;
    };
    if !Path::new("/proc/self/status").exists() {
        north_test_support::missing("no /proc to read the peak memory from");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = fake(&node, "chatty", &["flood", "--mb", "400"], Some(300));
    let hub = McpHub::new(vec![server], HubOptions::new(dir.path().to_path_buf()));
    let tools = registry(&hub);
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let before = peak_rss_kib();
    let out = tools.call("mcp__chatty__flood", json!({}), &ctx).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["text"], "flood over");
    let grown = peak_rss_kib().saturating_sub(before);
    // 400 MB of junk went past; what North kept must be a small fraction.
    assert!(grown < 64 * 1024, "peak memory grew by {grown} KiB");
    // And the connection still works.
    let out = tools.call("mcp__chatty__flood", json!({}), &ctx).await;
    assert!(out.ok, "{out:?}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_and_a_cancel_is_prompt() {
    let Some((node, _)) = interop::mcp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = fake(&node, "mute", &["silent"], Some(1));
    let hub = McpHub::new(vec![server], HubOptions::new(dir.path().to_path_buf()));
    let tools = registry(&hub);
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = tools.call("mcp__mute__wait", json!({}), &ctx).await;
    assert!(!out.ok);
    assert!(
        out.error
            .as_deref()
            .unwrap()
            .contains("did not answer within 1 s"),
        "{out:?}"
    );
    // A cancelled call ends with the user's words, not the timeout's.
    let mut cancelled = ctx.clone();
    cancelled.cancel = tokio_util::sync::CancellationToken::new();
    cancelled.cancel.cancel();
    let out = tools.call("mcp__mute__wait", json!({}), &cancelled).await;
    assert!(
        out.error.as_deref().unwrap().contains("cancelled"),
        "{out:?}"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tools_wait_behind_the_search_tool_until_loaded() {
    let Some((node, _)) = interop::mcp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = fake(&node, "many", &["many", "--count", "100"], None);
    let hub = McpHub::new(vec![server], HubOptions::new(dir.path().to_path_buf()));
    hub.wait_ready(Duration::from_secs(30)).await;
    let tools = registry(&hub);
    let names: Vec<String> = tools.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(names, vec![north_mcp::SEARCH_TOOL.to_string()]);
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = tools
        .call(north_mcp::SEARCH_TOOL, json!({"query": "tool_042"}), &ctx)
        .await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["loaded"][0]["name"], "mcp__many__tool_042");
    let names: Vec<String> = tools.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        vec![
            north_mcp::SEARCH_TOOL.to_string(),
            "mcp__many__tool_042".into()
        ]
    );
    let out = tools
        .call("mcp__many__tool_042", json!({"id": "7"}), &ctx)
        .await;
    assert_eq!(out.output["text"], "record 7 from tool_042");
    hub.shutdown().await;
}
