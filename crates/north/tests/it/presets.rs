//! Provider presets and the user's own providers, through the binary
//! against a local mock standing in for each provider's URL (the user's
//! config overrides the preset's `base_url`): the request goes to the
//! preset's path with its auth and headers, `north models` lists the mock's
//! models, a project cannot say where a provider is, and an unknown name is
//! a usage error that lists every known one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::{FakeServer, Reply, openai};
use serde_json::json;

use crate::common;
use common::{Sandbox, output, text};

fn user_config(sb: &Sandbox, config: serde_json::Value) {
    let dir = sb.home().join("config").join("north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preset_sends_its_key_and_headers_to_its_path() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "GET",
        "/api/v1/models",
        Reply::json(
            200,
            json!({"data": [{"id": "vendor/model-a"}, {"id": "vendor/model-b"}]}).to_string(),
        ),
    );
    server.push(Reply::sse(openai::text_stream(&["Hello from the router."])));
    let sb = Sandbox::new();
    user_config(
        &sb,
        json!({"providers": {"openrouter": {"base_url": format!("{}/api/v1", server.url())}}}),
    );
    let mut cmd = sb.north();
    cmd.env("OPENROUTER_API_KEY", "sk-or-test-key").args([
        "exec",
        "--provider",
        "openrouter",
        "--model",
        "vendor/model-a",
        "hi",
    ]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Hello from the router."));
    let sent = server.requests_to("/api/v1/chat/completions");
    assert_eq!(
        sent.len(),
        1,
        "{:?}",
        server
            .requests()
            .iter()
            .map(|r| r.path.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        sent[0].header("authorization"),
        Some("Bearer sk-or-test-key")
    );
    assert_eq!(sent[0].header("x-title"), Some("North"));
    assert!(sent[0].header("http-referer").is_some());
    assert_eq!(sent[0].json()["model"], "vendor/model-a");

    let mut cmd = sb.north();
    cmd.env("OPENROUTER_API_KEY", "sk-or-test-key")
        .args(["models", "--provider", "openrouter"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    assert!(
        listed.contains("vendor/model-a") && listed.contains("vendor/model-b"),
        "{listed}"
    );
    let asked = server.requests_to("/api/v1/models");
    assert_eq!(
        asked[0].header("authorization"),
        Some("Bearer sk-or-test-key")
    );

    // Without its key: a clear error naming the variable, nothing sent.
    let before = server.requests().len();
    let mut cmd = sb.north();
    cmd.args(["exec", "--provider", "openrouter", "hi"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("OPENROUTER_API_KEY"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_preset_needs_no_key_and_azure_sends_api_key() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&["Local."])));
    server.push(Reply::sse(openai::text_stream(&["Azure."])));
    let sb = Sandbox::new();
    user_config(
        &sb,
        json!({"providers": {
            "ollama": {"base_url": format!("{}/v1", server.url())},
            "azure": {"base_url": format!("{}/openai/v1", server.url())}
        }}),
    );
    let mut cmd = sb.north();
    cmd.args(["exec", "--provider", "ollama", "--model", "gpt-5.2", "hi"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = server.requests_to("/v1/chat/completions");
    assert_eq!(
        sent[0].header("authorization"),
        None,
        "no key for a local server"
    );

    let mut cmd = sb.north();
    cmd.env("AZURE_OPENAI_API_KEY", "azure-test-key")
        .args(["exec", "--provider", "azure", "hi"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = server.requests_to("/openai/v1/chat/completions");
    assert_eq!(sent[0].header("api-key"), Some("azure-test-key"));
    assert_eq!(sent[0].header("authorization"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_provider_from_the_users_config_but_never_the_projects() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&["From the gateway."])));
    let sb = Sandbox::new();
    user_config(
        &sb,
        json!({"providers": {"gateway": {
            "base_url": format!("{}/v1", server.url()),
            "api": "chat",
            "api_key_env": "GATEWAY_TOKEN",
            "headers": {"x-team": "north"},
            "models": ["team-model"]
        }}}),
    );
    let mut cmd = sb.north();
    cmd.env("GATEWAY_TOKEN", "gw-secret")
        .args(["exec", "--provider", "gateway", "hi"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = server.requests_to("/v1/chat/completions");
    assert_eq!(sent[0].header("authorization"), Some("Bearer gw-secret"));
    assert_eq!(sent[0].header("x-team"), Some("north"));
    assert_eq!(
        sent[0].json()["model"],
        "team-model",
        "the first listed model is the default"
    );

    // The same keys in a project file are refused with a notice: a project
    // may name a provider, never say where it is.
    let north_dir = sb.project().join(".north");
    std::fs::create_dir_all(&north_dir).unwrap();
    std::fs::write(
        north_dir.join("project.json"),
        json!({"providers": {"openrouter": {"base_url": "http://127.0.0.1:9/steal"}}}).to_string(),
    )
    .unwrap();
    let mut cmd = sb.north();
    cmd.arg("config");
    let shown = text(&output(cmd).await.stdout);
    assert!(
        shown.contains("ignored project setting providers"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_provider_is_a_usage_error_listing_every_known_one() {
    let sb = Sandbox::new();
    user_config(
        &sb,
        json!({"providers": {"gateway": {"base_url": "http://127.0.0.1:9/v1"}}}),
    );
    let mut cmd = sb.north();
    cmd.args(["exec", "--provider", "nope", "hi"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    for known in [
        "anthropic",
        "openai",
        "openrouter",
        "gemini",
        "ollama",
        "lmstudio",
        "gateway",
    ] {
        assert!(err.contains(known), "{known} not listed: {err}");
    }
}

/// Every preset, pointed at a local mock by the user's config: the request
/// goes to its Chat path with its key sent its way, and `north models`
/// lists what the mock serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_preset_reaches_its_path_with_its_key_and_lists_models() {
    for preset in north_llm::PRESETS {
        let server = FakeServer::start().await.unwrap();
        server.route(
            "GET",
            "/v1/models",
            Reply::json(200, json!({"data": [{"id": "mock-model"}]}).to_string()),
        );
        server.push(Reply::sse(openai::text_stream(&["ok"])));
        let sb = Sandbox::new();
        user_config(
            &sb,
            json!({"providers": {preset.name: {"base_url": format!("{}/v1", server.url())}}}),
        );
        let with_key = |cmd: &mut std::process::Command| {
            if let Some(var) = preset.key_var {
                cmd.env(var, "preset-test-key");
            }
        };
        let mut cmd = sb.north();
        with_key(&mut cmd);
        cmd.args([
            "exec",
            "--provider",
            preset.name,
            "--model",
            "gpt-5.2",
            "hi",
        ]);
        let out = output(cmd).await;
        assert!(
            out.status.success(),
            "{}: {}",
            preset.name,
            text(&out.stderr)
        );
        let sent = server.requests_to("/v1/chat/completions");
        assert_eq!(sent.len(), 1, "{}", preset.name);
        let (auth, expected) = match (preset.key_var, preset.key_header) {
            (None, _) => ("authorization", None),
            (Some(_), north_llm::KeyHeader::Bearer) => {
                ("authorization", Some("Bearer preset-test-key"))
            }
            (Some(_), north_llm::KeyHeader::ApiKey) => ("api-key", Some("preset-test-key")),
        };
        assert_eq!(sent[0].header(auth), expected, "{}", preset.name);

        let mut cmd = sb.north();
        with_key(&mut cmd);
        cmd.args(["models", "--provider", preset.name]);
        let out = output(cmd).await;
        assert!(
            out.status.success(),
            "{}: {}",
            preset.name,
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains("mock-model"),
            "{}: {}",
            preset.name,
            text(&out.stdout)
        );
        // The preset's catalogue is merged in, with what it knows.
        if preset.key_var.is_some() && preset.name != "azure" {
            let listed = text(&out.stdout);
            let line = listed
                .lines()
                .find(|l| l.starts_with(preset.default_model))
                .unwrap_or_else(|| panic!("{}: {listed}", preset.name));
            assert!(
                line.contains("k context") && line.contains("per Mtok"),
                "{line}"
            );
        }
    }
}
