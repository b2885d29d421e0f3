//! Context discovery against each server kind's real response shape:
//! llama.cpp `/props`, vLLM `/v1/models`, Ollama `/api/show`, and a server
//! that answers none of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use north_llm::discovery::{parse_llama_props, parse_models_list, parse_ollama_show};
use north_llm::{ApiKey, Discovered, DiscoverySource, USER_AGENT, discover_context_window};
use north_test_support::{FakeServer, Reply, discovery};
use serde_json::json;

const T: Duration = Duration::from_secs(5);

#[tokio::test]
async fn llama_cpp_props_give_the_window() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "GET",
        "/props",
        Reply::json(200, discovery::llama_props(8192).to_string()),
    );
    let found = discover_context_window(&format!("{}/v1", server.url()), "smollm2", None, T).await;
    assert_eq!(
        found,
        Some(Discovered {
            context_window: 8192,
            source: DiscoverySource::LlamaCppProps
        })
    );
    let requests = server.requests();
    let probe = requests
        .iter()
        .find(|r| r.path == "/props")
        .expect("/props was asked");
    assert_eq!(probe.method, "GET");
    assert_eq!(probe.header("user-agent"), Some(USER_AGENT));
}

#[tokio::test]
async fn vllm_models_give_max_model_len_with_the_key() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "GET",
        "/v1/models",
        Reply::json(
            200,
            discovery::vllm_models("Qwen/Qwen2.5-Coder-7B-Instruct", 32768).to_string(),
        ),
    );
    let key = ApiKey::new("vllm-secret-key");
    let found = discover_context_window(
        &format!("{}/v1", server.url()),
        "Qwen/Qwen2.5-Coder-7B-Instruct",
        Some(&key),
        T,
    )
    .await
    .unwrap();
    assert_eq!(found.context_window, 32768);
    assert_eq!(found.source, DiscoverySource::ModelsList);
    let probe = &server.requests_to("/v1/models")[0];
    assert_eq!(
        probe.header("authorization"),
        Some("Bearer vllm-secret-key")
    );
}

#[tokio::test]
async fn ollama_show_gives_num_ctx_or_its_default() {
    let server = FakeServer::start().await.unwrap();
    server.route(
        "POST",
        "/api/show",
        Reply::json(200, discovery::ollama_show(Some(16384), 32768).to_string()),
    );
    let found = discover_context_window(&format!("{}/v1", server.url()), "qwen2.5-coder", None, T)
        .await
        .unwrap();
    assert_eq!(found.context_window, 16384);
    assert_eq!(
        found.source,
        DiscoverySource::OllamaShow { num_ctx_set: true }
    );
    assert_eq!(
        server.requests_to("/api/show")[0].json(),
        json!({"model": "qwen2.5-coder"})
    );

    let server = FakeServer::start().await.unwrap();
    server.route(
        "POST",
        "/api/show",
        Reply::json(200, discovery::ollama_show(None, 32768).to_string()),
    );
    let found = discover_context_window(&format!("{}/v1", server.url()), "qwen2.5-coder", None, T)
        .await
        .unwrap();
    assert_eq!(
        (found.context_window, found.source),
        (4096, DiscoverySource::OllamaShow { num_ctx_set: false }),
        "without num_ctx Ollama runs with its default, not the trained length"
    );
}

#[tokio::test]
async fn a_server_that_answers_no_probe_gives_nothing_and_keeps_its_queue() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::json(200, "{}"));
    let found = discover_context_window(&server.url(), "claude-sonnet-4-5", None, T).await;
    assert_eq!(found, None);
    // The three probes go out together: one round trip, in any order.
    let mut paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    paths.sort();
    assert_eq!(paths, ["/api/show", "/props", "/v1/models"]);
    assert_eq!(
        server.pending(),
        1,
        "probes never take a reply queued for the model"
    );
}

#[tokio::test]
async fn an_unreachable_server_gives_nothing() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let found = discover_context_window(&format!("http://127.0.0.1:{port}/v1"), "m", None, T).await;
    assert_eq!(found, None);
}

#[test]
fn shapes_from_other_servers_are_not_mistaken() {
    assert_eq!(parse_llama_props(&json!({"n_ctx": 4096})), Some(4096));
    assert_eq!(
        parse_llama_props(&json!({"default_generation_settings": {"n_ctx": 0}})),
        None
    );
    let llama_models = json!({"object": "list", "data": [{"id": "smollm2", "meta": {"n_ctx": 8192, "n_ctx_train": 8192}}]});
    assert_eq!(parse_models_list(&llama_models, "smollm2"), Some(8192));
    let openai_models = json!({"object": "list", "data": [{"id": "gpt-5.2", "object": "model", "owned_by": "openai"}]});
    assert_eq!(parse_models_list(&openai_models, "gpt-5.2"), None);
    assert_eq!(parse_ollama_show(&json!({"object": "list"})), None);
}
