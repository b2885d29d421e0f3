//! `north acp` sessions end to end: what a session owns ends when the
//! editor goes away (SessionEnd hooks), and a custom agent with a model of
//! its own starts that model in an editor as in the terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::acp_client;
use acp_client::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_end_hook_runs_when_the_editor_goes_away() {
    let p = project();
    let config = p.base.join("home/config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.json"),
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command",
            "command": "cat > \"$NORTH_PROJECT_DIR/session-ended.json\""}]}]}})
        .to_string(),
    )
    .unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    client(
        agent(&p, json!([{"text": "hello"}])),
        &p.root,
        Answer::AcceptEditsRejectCommands,
        seen,
        async move |cx| {
            let session = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?;
            cx.send_request(PromptRequest::new(session.session_id, text("hi")))
                .block_task()
                .await?;
            Ok(())
        },
    )
    .await;
    // The connection is closed: North ends the session on its way out.
    let marker = p.root.join("session-ended.json");
    for _ in 0..200 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let payload = std::fs::read_to_string(&marker).expect("the SessionEnd hook ran");
    assert!(payload.contains("SessionEnd"), "{payload}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_agent_with_its_own_model_uses_it_in_an_editor() {
    use north_test_support::{FakeServer, Reply, anthropic};
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&[
        "SUB-AGENT-ANSWER-3310",
    ])));
    let p = project();
    std::fs::create_dir_all(p.root.join(".claude/agents")).unwrap();
    std::fs::write(
        p.root.join(".claude/agents/quick.md"),
        "---\nname: quick\ndescription: Answers quickly\nmodel: claude-haiku-4-5\n---\nAnswer in one line.\n",
    )
    .unwrap();
    let home = p.base.join("home");
    let env = [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join("config")),
        ("XDG_STATE_HOME", home.join("state")),
        ("XDG_DATA_HOME", home.join("data")),
    ];
    // The project's agents count once the user trusts it.
    let trusted = tokio::task::spawn_blocking({
        let (root, env) = (p.root.clone(), env.clone());
        move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_north"))
                .arg("trust")
                .arg(&root)
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .envs(env)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let script = p.base.join("delegate.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"tool_calls": [{"id": "a1", "name": "agent", "args": {"agent": "quick", "prompt": "say hi"}}]},
            {"text": "PARENT-DONE"}
        ]})
        .to_string(),
    )
    .unwrap();
    let mut config = AcpAgentConfig::new(env!("CARGO_BIN_EXE_north"))
        .args(["acp", "--script", script.to_str().unwrap()])
        .env("ANTHROPIC_API_KEY", "sk-ant-test-acp-0000000000000000")
        .env("ANTHROPIC_BASE_URL", server.url());
    for (k, v) in &env {
        config = config.env(*k, v.to_str().unwrap());
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    client(
        AcpAgent::new(config),
        &p.root,
        Answer::AcceptEditsRejectCommands,
        seen.clone(),
        async move |cx| {
            let session = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?;
            cx.send_request(PromptRequest::new(session.session_id, text("delegate")))
                .block_task()
                .await?;
            Ok(())
        },
    )
    .await;
    let asked: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["model"], "claude-haiku-4-5");
    let shown = agent_text(&seen.lock().unwrap().updates);
    assert!(shown.contains("PARENT-DONE"), "{shown}");
}
