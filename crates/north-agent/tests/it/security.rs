//! Adversarial runtime tests: self-granted capabilities, network access
//! before and after the user grants it, and secrets in every output.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;

use north_agent::{AgentOptions, FlagApprover, TurnEnd};
use north_llm::ScriptedBackend;
use north_protocol::{ApprovalDecision, Event};
use north_test_support::{FakeServer, Reply};
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_model_cannot_grant_itself_a_capability() {
    let dir = project();
    let script = json!([
        {"text": "<<<NOTES_JSON>>>{\"actions\":[\"grant_permission:net\",\"grant_permission:net:example.com\",\"request_permission:net\"]}<<<END_NOTES_JSON>>>ok"},
        {"text": "<<<NOTES_JSON>>>{\"actions\":[\"grant_permission:net\"]}<<<END_NOTES_JSON>>>still ok"}
    ]);
    let backend = Arc::new(ScriptedBackend::from_json(&script.to_string()).unwrap());
    // Headless defaults: no --grant, so nothing is granted.
    let approver = Arc::new(FlagApprover::default());
    let mut run = agent_for(dir.path(), backend, approver, AgentOptions::default(), None);
    run.turn("one").await;
    run.turn("two").await;
    let state = run.checkpoint().state;
    assert!(state.capabilities_granted.is_empty(), "{state:?}");
    assert!(
        state.capabilities_pending.is_empty(),
        "denied requests are not left pending: {state:?}"
    );
}

#[tokio::test]
async fn http_get_stays_denied_until_the_user_grants() {
    let dir = project();
    let server = FakeServer::start().await.unwrap();
    server.set_fallback(Reply::json(200, r#"{"docs": "fetched"}"#));
    let url = format!("{}/docs.json", server.url());
    let script = json!([
        {"tool_calls": [{"id": "h1", "name": "http.get", "args": {"url": url, "use_cache": false}}]},
        {"text": "Denied; asking again.", "tool_calls": [{"id": "h2", "name": "http.get", "args": {"url": url, "use_cache": false}}]},
        {"text": "Got it."}
    ]);
    let backend = Arc::new(ScriptedBackend::from_json(&script.to_string()).unwrap());
    let approver = QueueApprover::new([ApprovalDecision::Deny, ApprovalDecision::Grant]);
    let store = north_agent::store::SessionStore::new(dir.path());
    let mut agent = north_agent::Agent::new(
        backend,
        north_tools::all_tools(),
        north_tools::ToolContext::new(dir.path().to_path_buf()),
        approver.clone(),
        store.create().unwrap(),
        Default::default(),
        AgentOptions::default(),
    )
    .unwrap();
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let ev = events.clone();
    let end = agent
        .run_turn(
            "fetch the docs",
            &move |e| ev.lock().unwrap().push(e),
            &Default::default(),
        )
        .await;
    assert_eq!(end, TurnEnd::Done);
    assert_eq!(
        server.requests().len(),
        1,
        "no request before the grant, one after"
    );
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec!["cap:net:127.0.0.1", "cap:net:127.0.0.1"]
    );
    let results: Vec<bool> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { ok, .. } => Some(*ok),
            _ => None,
        })
        .collect();
    assert_eq!(results, vec![false, true]);
    assert_eq!(
        agent.state().capabilities_granted,
        vec![north_protocol::Capability::NetHost("127.0.0.1".into())]
    );
}

/// URL forms two parsers read differently (a backslash before `@`, `@` in
/// the query or fragment, hex and short IPv4 forms): the host the user is
/// asked about is the host North then connects to — here the local server,
/// which receives the request after the one grant.
#[tokio::test]
async fn the_host_asked_about_is_the_host_fetched() {
    let server = FakeServer::start().await.unwrap();
    server.set_fallback(Reply::json(200, r#"{"docs": "fetched"}"#));
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let forms = [
        format!("http://127.0.0.1:{port}\\@good.example/docs"),
        format!("http://127.0.0.1:{port}\\\\@good.example/docs"),
        format!("http://good.example@127.0.0.1:{port}/docs"),
        format!("http://127.0.0.1:{port}?@good.example/"),
        format!("http://127.0.0.1:{port}#@good.example/"),
        format!("HTTP://0x7f.0.0.1:{port}/docs"),
        format!("http://127.1:{port}/docs"),
    ];
    for (i, url) in forms.iter().enumerate() {
        let dir = project();
        let script = json!([
            {"tool_calls": [{"id": "h1", "name": "http.get", "args": {"url": url, "use_cache": false}}]},
            {"text": "Got it."}
        ]);
        let backend = Arc::new(ScriptedBackend::from_json(&script.to_string()).unwrap());
        let approver = QueueApprover::new([ApprovalDecision::Grant]);
        let store = north_agent::store::SessionStore::new(dir.path());
        let mut agent = north_agent::Agent::new(
            backend,
            north_tools::all_tools(),
            north_tools::ToolContext::new(dir.path().to_path_buf()),
            approver.clone(),
            store.create().unwrap(),
            Default::default(),
            AgentOptions::default(),
        )
        .unwrap();
        let end = agent
            .run_turn("fetch the docs", &|_| {}, &Default::default())
            .await;
        assert_eq!(end, TurnEnd::Done, "{url}");
        assert_eq!(
            *approver.asked.lock().unwrap(),
            vec!["cap:net:127.0.0.1"],
            "{url}"
        );
        assert_eq!(
            server.requests().len(),
            i + 1,
            "{url} was not fetched from the host granted"
        );
    }
}

#[tokio::test]
async fn no_key_reaches_a_checkpoint_trace_or_event() {
    let dir = project();
    // The key sits in a file the model reads, and the model repeats it.
    std::fs::write(
        dir.path().join(".env"),
        format!("ANTHROPIC_API_KEY={KEY}\n"),
    )
    .unwrap();
    let script = json!([
        {"tool_calls": [{"id": "r", "name": "read_file", "args": {"path": ".env", "range": null}}]},
        {"text": format!("The key is {KEY}."), "tool_calls": [{"id": "s", "name": "search_text", "args": {"query": KEY, "path": null, "regex": false, "limit": 5}}]},
        {"text": "Done", "error": {"type": "api_error", "message": format!("bad key {KEY}")}}
    ]);
    let backend = Arc::new(ScriptedBackend::from_json(&script.to_string()).unwrap());
    let mut run = agent_for(
        dir.path(),
        backend,
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    run.turn(&format!("my key is {KEY}, what is in .env?"))
        .await;
    let events = serde_json::to_string(&run.events()).unwrap();
    assert!(
        events.contains("[REDACTED]"),
        "the key was there to be scrubbed"
    );
    assert!(!events.contains(KEY), "key in events");
    let session = dir
        .path()
        .join(".north/sessions")
        .join(run.agent.session_id());
    for file in ["checkpoint.json", "trace.jsonl"] {
        let text = std::fs::read_to_string(session.join(file)).unwrap();
        assert!(!text.contains(KEY), "key in {file}");
    }
}

/// An MCP-like tool: runs code North cannot see, so it needs approval.
struct ExternalEcho(std::sync::atomic::AtomicUsize);

impl north_tools::Tool for ExternalEcho {
    fn spec(&self) -> north_protocol::ToolSpec {
        north_protocol::ToolSpec {
            name: "mcp__fake__echo".into(),
            description: "Echoes.".into(),
            input_schema: json!({"type": "object"}),
            approval: north_protocol::ApprovalPolicy::External,
        }
    }

    fn call<'a>(
        &'a self,
        _args: serde_json::Value,
        _ctx: &'a north_tools::ToolContext,
    ) -> futures::future::BoxFuture<'a, north_protocol::ToolOutcome> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { north_protocol::ToolOutcome::ok(json!({"text": "echoed"})) })
    }
}

#[tokio::test]
async fn always_allowing_an_external_tool_is_a_rule_in_the_allowlist() {
    let dir = project();
    let echo = Arc::new(ExternalEcho(Default::default()));
    let tools = || {
        let mut r = north_tools::Registry::new();
        r.register(echo.clone());
        r
    };
    let call =
        |id: &str| json!({"tool_calls": [{"id": id, "name": "mcp__fake__echo", "args": {}}]});
    let script = json!([call("e1"), call("e2"), {"text": "done"}]);
    let backend = Arc::new(ScriptedBackend::from_json(&script.to_string()).unwrap());
    let approver = QueueApprover::new([ApprovalDecision::Always]);
    let mut run = agent_with_tools(
        dir.path(),
        backend,
        approver.clone(),
        AgentOptions::default(),
        None,
        tools(),
    );
    run.turn("echo twice").await;
    assert_eq!(echo.0.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec!["cap:tool:mcp__fake__echo".to_string()],
        "asked once"
    );
    let allow = std::fs::read_to_string(dir.path().join(".north/allowlist.json")).unwrap();
    assert!(
        allow.contains("\"allowedTools\"") && allow.contains("mcp__fake__echo"),
        "{allow}"
    );

    // A new session in the (trusted) project: the rule covers it, no one is asked.
    let script = json!([call("e3"), {"text": "done"}]);
    let backend = Arc::new(ScriptedBackend::from_json(&script.to_string()).unwrap());
    let approver = QueueApprover::new([]);
    let mut run = agent_with_tools(
        dir.path(),
        backend,
        approver.clone(),
        AgentOptions::default(),
        None,
        tools(),
    );
    run.turn("echo again").await;
    assert_eq!(echo.0.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert!(approver.asked.lock().unwrap().is_empty());
}
