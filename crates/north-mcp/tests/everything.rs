//! North's MCP client against the reference server nobody on the project
//! wrote: `@modelcontextprotocol/server-everything`, over stdio and over
//! streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::interop;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use north_mcp::config::{Scope, ServerConfig, Transport};
use north_mcp::{HubOptions, McpHub, ServerState};
use north_tools::{Registry, ToolContext};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn stdio_server(node: &std::path::Path, modules: &std::path::Path) -> ServerConfig {
    ServerConfig {
        name: "everything".into(),
        transport: Transport::Stdio {
            command: node.display().to_string(),
            args: vec![
                interop::package_entry(modules, "server-everything"),
                "stdio".into(),
            ],
            env: BTreeMap::new(),
            cwd: None,
        },
        timeout_secs: None,
        scope: Scope::User,
        disabled: false,
        oauth: None,
    }
}

fn hub_for(server: ServerConfig, root: &std::path::Path) -> Arc<McpHub> {
    let mut opts = HubOptions::new(root.to_path_buf());
    opts.defer_threshold = 1000;
    McpHub::new(vec![server], opts)
}

#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, read top to bottom"
)]
async fn exercise(hub: Arc<McpHub>, root: &std::path::Path) {
    hub.wait_ready(Duration::from_secs(60)).await;
    let status = &hub.statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert!(
        status.tools >= 5 && status.resources > 0 && status.prompts > 0,
        "{status:?}"
    );

    let mut registry = Registry::new();
    registry.add_source(hub.tool_source());
    let names = registry.names();
    assert!(
        names.contains(&"mcp__everything__echo".to_string()),
        "{names:?}"
    );
    let echo = registry
        .specs()
        .into_iter()
        .find(|s| s.name == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo.approval, north_protocol::ApprovalPolicy::External);
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");

    let ctx = ToolContext::new(root.to_path_buf());
    let out = registry
        .call(
            "mcp__everything__echo",
            json!({"message": "hi north"}),
            &ctx,
        )
        .await;
    assert!(out.ok, "{out:?}");
    assert!(out.output["text"].as_str().unwrap().contains("hi north"));

    // Structured content comes through as `structured`.
    let out = registry
        .call(
            "mcp__everything__get-structured-content",
            json!({"location": "Chicago"}),
            &ctx,
        )
        .await;
    assert!(out.ok, "{out:?}");
    assert!(
        out.output["structured"]["temperature"].is_number(),
        "{out:?}"
    );

    // An image becomes an attachment file.
    let out = registry
        .call("mcp__everything__get-tiny-image", json!({}), &ctx)
        .await;
    assert!(out.ok, "{out:?}");
    let path = out.output["attachments"][0]["path"].as_str().unwrap();
    assert!(
        std::fs::read(path).unwrap().starts_with(b"\x89PNG"),
        "{path}"
    );

    // Resource links are listed.
    let out = registry
        .call(
            "mcp__everything__get-resource-links",
            json!({"count": 2}),
            &ctx,
        )
        .await;
    assert!(out.ok, "{out:?}");
    assert_eq!(
        out.output["resources"].as_array().unwrap().len(),
        2,
        "{out:?}"
    );

    // Bad arguments are the server's error, reported as a failed call.
    let out = registry
        .call("mcp__everything__get-sum", json!({"a": "x"}), &ctx)
        .await;
    assert!(!out.ok, "{out:?}");
    assert!(out.error.is_some());

    // Resources and prompts.
    let resources = hub.resources("everything").await.unwrap();
    let text = resources
        .iter()
        .find(|r| {
            r.mime_type
                .as_deref()
                .is_some_and(|m| m.starts_with("text/"))
        })
        .expect("a text resource");
    let body = hub
        .read_resource("everything", &text.uri, &CancellationToken::new())
        .await
        .unwrap();
    assert!(!body.is_empty());
    let prompts = hub.prompts("everything").await.unwrap();
    let simple = prompts
        .iter()
        .find(|p| p.arguments.is_empty())
        .expect("a prompt without arguments");
    let messages = hub
        .get_prompt(
            "everything",
            &simple.name,
            Default::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(!messages.is_empty());

    // A prompt typed as a slash command, with a resource mentioned in it.
    let mention = format!("@everything:{}", text.uri);
    let expanded = hub
        .expand_input(
            &format!("/mcp__everything__args-prompt city=Oslo {mention}"),
            &CancellationToken::new(),
        )
        .await
        .unwrap()
        .expect("the input uses a prompt and a resource");
    assert!(
        expanded.text.starts_with("What's weather in Oslo?"),
        "{}",
        expanded.text
    );
    assert!(
        expanded.text.contains(&format!("uri=\"{}\"", text.uri)),
        "{}",
        expanded.text
    );
    assert!(
        expanded.text.contains(body.trim()),
        "the resource's text is attached"
    );
    assert_eq!(
        expanded.attached,
        vec!["/mcp__everything__args-prompt".to_string(), mention]
    );
    let free = hub
        .expand_input(
            "/mcp__everything__args-prompt Bergen",
            &CancellationToken::new(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(free.text, "What's weather in Bergen?");
    let missing = hub
        .expand_input("/mcp__everything__args-prompt", &CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("needs city"), "{missing}");
    let plain = hub
        .expand_input("mail me at someone@example:com", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        plain, None,
        "text without prompts or mentions is left alone"
    );
    assert!(
        hub.prompt_commands()
            .iter()
            .any(|(c, _)| c == "/mcp__everything__simple-prompt")
    );

    // Progress reaches the live output of the call in flight.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut live_ctx = ctx.clone();
    live_ctx.live_output = Some(tx);
    let out = registry
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            &live_ctx,
        )
        .await;
    assert!(out.ok, "{out:?}");
    let mut progress = Vec::new();
    while let Ok((_, line)) = rx.try_recv() {
        progress.push(line);
    }
    assert!(
        progress.iter().any(|l| l.starts_with("progress 1/2")),
        "{progress:?}"
    );

    // A slow call is cancelled; the server stays usable.
    let mut slow_ctx = ctx.clone();
    slow_ctx.cancel = CancellationToken::new();
    let cancel = slow_ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let out = registry
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
            &slow_ctx,
        )
        .await;
    assert!(!out.ok);
    assert!(
        out.error.as_deref().unwrap().contains("cancelled"),
        "{out:?}"
    );
    let out = registry
        .call(
            "mcp__everything__echo",
            json!({"message": "still here"}),
            &ctx,
        )
        .await;
    assert!(out.ok, "{out:?}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let Some((node, modules)) = interop::mcp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hub = hub_for(stdio_server(&node, &modules), dir.path());
    exercise(hub, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let Some((node, modules)) = interop::mcp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = interop::free_port();
    let mut server = tokio::process::Command::new(&node)
        .arg(interop::package_entry(&modules, "server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "server-everything did not listen on {port}");
    let config = ServerConfig {
        name: "everything".into(),
        transport: Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: BTreeMap::from([("X-North-Test".to_string(), "1".to_string())]),
        },
        timeout_secs: None,
        scope: Scope::User,
        disabled: false,
        oauth: None,
    };
    let hub = hub_for(config, dir.path());
    exercise(hub, dir.path()).await;
    let _ = server.kill().await;
    let _: Value = Value::Null;
}
