//! `web_fetch` and `web_search` through the real binary against local
//! servers: Markdown instead of HTML, a grant per domain (asked again on a
//! redirect elsewhere), loopback only when named, and search only where the
//! user configured a backend.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::recorded::{tool_names, tool_result};
use north_test_support::{FakeServer, Reply};
use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, text};

const PAGE: &str = "<html><head><title>Docs</title><style>.x{color:red}</style></head><body>\
<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>\
<h1>Async in Rust</h1><p>Futures are lazy: nothing happens until they are polled.</p>\
<script>window.SECRET_TRACKER = 'EXFIL-SCRIPT-3391';</script></body></html>";

fn html(body: &str) -> Reply {
    let mut r = Reply::json(200, body);
    r.content_type = "text/html; charset=utf-8".into();
    r
}

fn fetch_turns(url: &str) -> Value {
    json!([
        {"tool_calls": [{"id": "w1", "name": "web_fetch", "args": {"url": url, "prompt": "how futures run"}}]},
        {"text": "read it"}
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_reaches_the_model_as_markdown_without_its_scripts() {
    let server = FakeServer::start().await.unwrap();
    server.route("GET", "/docs", html(PAGE));
    let url = format!("{}/docs", server.url());
    let (out, requests) = tokio::task::spawn_blocking(move || {
        let sb = Sandbox::new();
        sb.exec_scripted(&fetch_turns(&url), &["--grant", "net:127.0.0.1"], &[])
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(tool_names(&requests[0]).contains(&"web_fetch".to_string()));
    let seen = tool_result(&requests[1], "w1").to_string();
    assert!(seen.contains("# Async in Rust"), "{seen}");
    assert!(seen.contains("Futures are lazy: nothing happens until they are polled."));
    for gone in ["EXFIL-SCRIPT-3391", "color:red", "<p>", "About"] {
        assert!(!seen.contains(gone), "{gone} reached the model");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_grant_the_fetch_is_refused_and_the_model_is_told_which_grant_allows_it() {
    let server = FakeServer::start().await.unwrap();
    server.route("GET", "/docs", html(PAGE));
    let url = format!("{}/docs", server.url());
    let (plain, net_only) = tokio::task::spawn_blocking(move || {
        let sb = Sandbox::new();
        let plain = sb.exec_scripted(&fetch_turns(&url), &[], &[]);
        // `net` alone never reaches loopback.
        let net_only = sb.exec_scripted(&fetch_turns(&url), &["--grant", "net"], &[]);
        (plain, net_only)
    })
    .await
    .unwrap();
    let told = plain.1[1].to_string();
    assert!(told.contains("--grant net:127.0.0.1"), "{told}");
    assert!(!told.contains("Futures are lazy"));
    let told = net_only.1[1].to_string();
    assert!(told.contains("loopback or private address"), "{told}");
    assert!(!told.contains("Futures are lazy"));
    assert!(
        server.requests_to("/docs").is_empty(),
        "a refused fetch reached the server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_domain_asks_again() {
    let server = FakeServer::start().await.unwrap();
    let port = server.url().rsplit(':').next().unwrap().to_string();
    server.route(
        "GET",
        "/hop",
        Reply::json(302, "").header("location", &format!("http://localhost:{port}/docs")),
    );
    server.route("GET", "/docs", html(PAGE));
    let url = format!("{}/hop", server.url());
    let (out, requests) = tokio::task::spawn_blocking(move || {
        let sb = Sandbox::new();
        sb.exec_scripted(&fetch_turns(&url), &["--grant", "net:127.0.0.1"], &[])
    })
    .await
    .unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(3),
        "{}",
        text(&out.stderr)
    );
    let told = tool_result(&requests[1], "w1").to_string();
    assert!(told.contains("net:localhost"), "{told}");
    assert!(
        !told.contains("Futures are lazy"),
        "the redirect was followed without a grant"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_asks_the_users_searxng_backend_and_is_not_offered_without_one() {
    let server = FakeServer::start().await.unwrap();
    server.set_responder(|req| {
        if req.path.starts_with("/search?") && req.path.contains("format=json") {
            Reply::json(
                200,
                json!({"results": [
                    {"title": "Tokio tutorial", "url": "https://tokio.rs/tokio/tutorial", "content": "Learn async Rust with Tokio."},
                    {"title": "Async book", "url": "https://rust-lang.github.io/async-book/", "content": "The async book."}
                ]})
                .to_string(),
            )
        } else {
            Reply::json(404, "{}")
        }
    });
    let endpoint = format!("{}/search", server.url());
    let (without, with) = tokio::task::spawn_blocking(move || {
        let sb = Sandbox::new();
        let turns = json!([
            {"tool_calls": [{"id": "s1", "name": "web_search", "args": {"query": "rust async"}}]},
            {"text": "found"}
        ]);
        let without = sb.exec_scripted(&json!([{"text": "hi"}]), &[], &[]);
        let dir = sb.home().join("config/north");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            json!({"web_search": {"searxng_url": endpoint}}).to_string(),
        )
        .unwrap();
        let with = sb.exec_scripted(&turns, &["--grant", "net:127.0.0.1"], &[]);
        (without, with)
    })
    .await
    .unwrap();
    assert!(!tool_names(&without.1[0]).contains(&"web_search".to_string()));
    assert!(with.0.status.success(), "{}", text(&with.0.stderr));
    assert!(tool_names(&with.1[0]).contains(&"web_search".to_string()));
    let seen = with.1[1].to_string();
    for want in [
        "Tokio tutorial",
        "https://tokio.rs/tokio/tutorial",
        "Async book",
    ] {
        assert!(seen.contains(want), "{want} not in {seen}");
    }
    let asked = server.requests();
    assert!(
        asked.iter().any(|r| r.path.contains("q=rust+async")),
        "{asked:?}"
    );
}

fn provider_search_config(sb: &Sandbox) {
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        json!({"web_search": {"provider": true}}).to_string(),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_providers_own_search_is_asked_for_and_its_blocks_go_back_to_anthropic() {
    use north_test_support::anthropic;
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .web_search(
                "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                "tokio 1.40 release notes",
                &[("https://tokio.rs/blog/2024-10", "Tokio 1.40")],
            )
            .text(&["Tokio 1.40 added…"])
            .tool_use("r1", "read_file", &[r#"{"path": "README.md"}"#])
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["done"])));
    let sb = Sandbox::new();
    provider_search_config(&sb);
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-0000000000000000")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "exec",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
        ])
        .arg("what changed in tokio 1.40?");
    let out = common::output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let asked = server.requests();
    assert_eq!(asked.len(), 2);
    let first = asked[0].json();
    let tools = first["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t["type"] == "web_search_20250305" && t["name"] == "web_search"),
        "{tools:?}"
    );
    assert_eq!(
        tools.iter().filter(|t| t["name"] == "web_search").count(),
        1,
        "no SearXNG tool of the same name"
    );
    // The search and its results go back as the API sent them, before the
    // text and the call they led to.
    let second = asked[1].json();
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    let kinds: Vec<&str> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "server_tool_use",
            "web_search_tool_result",
            "text",
            "tool_use"
        ]
    );
    assert_eq!(
        assistant["content"][0]["input"]["query"],
        "tokio 1.40 release notes"
    );
    assert_eq!(
        assistant["content"][1]["content"][0]["url"],
        "https://tokio.rs/blog/2024-10"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("the provider searched the web: tokio 1.40 release notes"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_responses_api_gets_its_search_tool_and_chat_says_it_has_none() {
    use north_test_support::{openai, responses};
    let sb = Sandbox::new();
    provider_search_config(&sb);
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        responses::StreamBuilder::new()
            .web_search("rust 2024 edition")
            .text(&["It shipped in 1.85."])
            .build(),
    ));
    let mut cmd = sb.north();
    cmd.env("OPENAI_API_KEY", "sk-test-0000000000000000")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args(["exec", "--provider", "openai", "--model", "gpt-5.2"])
        .args([
            "--openai-api",
            "responses",
            "when did the 2024 edition ship?",
        ]);
    let out = common::output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[0].json();
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["type"] == "web_search"),
        "{body}"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("the provider searched the web: rust 2024 edition"),
        "{err}"
    );
    assert!(text(&out.stdout).contains("It shipped in 1.85."));

    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(openai::text_stream(&["ok"])));
    let mut cmd = sb.north();
    cmd.env("OPENAI_API_KEY", "sk-test-0000000000000000")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args(["exec", "--provider", "openai", "--model", "gpt-4o"])
        .args(["--openai-api", "chat", "hi"]);
    let out = common::output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("web_search.provider: openai has no search of its own here"),
        "{err}"
    );
    let body = server.requests()[0].json();
    assert!(!body.to_string().contains("web_search"), "{body}");
}
