//! `http.get`: capability gating (runtime-contracts §4), the SQLite TTL
//! cache, body bounds, redirects and timeouts — against a local HTTP server
//! on 127.0.0.1 that counts the requests it receives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use north_protocol::{ApprovalPolicy, ToolOutcome};
use north_tools::net::tools::HttpGet;
use north_tools::net::{HttpClient, HttpConfig};
use north_tools::{Tool, ToolContext};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A tiny HTTP/1.1 server: a few fixed routes, one request per connection.
struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Server {
    async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let line = String::from_utf8_lossy(&request);
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let (status, headers, body): (&str, String, Vec<u8>) = match path.as_str() {
                        "/hello" => (
                            "200 OK",
                            "Content-Type: text/plain\r\n".into(),
                            b"hello world".to_vec(),
                        ),
                        "/big" => ("200 OK", String::new(), vec![b'x'; 3 * 1024 * 1024]),
                        "/binary" => (
                            "200 OK",
                            "Content-Type: application/octet-stream\r\n".into(),
                            vec![0, 1, 2, 3],
                        ),
                        "/missing" => ("404 Not Found", String::new(), b"no such page".to_vec()),
                        "/redirect-same" => {
                            ("302 Found", "Location: /hello\r\n".into(), Vec::new())
                        }
                        "/redirect-other" => (
                            "302 Found",
                            format!("Location: http://localhost:{}/hello\r\n", port_of(&line)),
                            Vec::new(),
                        ),
                        "/loop" => ("302 Found", "Location: /loop\r\n".into(), Vec::new()),
                        "/slow" => {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                            ("200 OK", String::new(), Vec::new())
                        }
                        _ => ("404 Not Found", String::new(), Vec::new()),
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Server { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The port from the request's Host header.
fn port_of(request: &str) -> String {
    request
        .lines()
        .find_map(|l| {
            l.strip_prefix("host: ")
                .or_else(|| l.strip_prefix("Host: "))
        })
        .and_then(|h| h.trim().rsplit(':').next())
        .unwrap_or("80")
        .to_owned()
}

fn config() -> HttpConfig {
    HttpConfig {
        use_env_proxy: false,
        ..HttpConfig::default()
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    cache: std::path::PathBuf,
}

fn fixture(capabilities: &[&str], config: HttpConfig) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("http-cache.sqlite");
    let mut ctx = ToolContext::new(dir.path().to_owned());
    ctx.capabilities = capabilities
        .iter()
        .map(|s| north_protocol::Capability::lenient(s))
        .collect();
    ctx.http = Arc::new(HttpClient::with_config(Some(cache.clone()), config));
    Fixture {
        _dir: dir,
        ctx,
        cache,
    }
}

async fn get(ctx: &ToolContext, url: &str, use_cache: bool) -> ToolOutcome {
    HttpGet::default()
        .call(json!({"url": url, "use_cache": use_cache}), ctx)
        .await
}

#[tokio::test]
async fn the_spec_declares_net_approval() {
    let spec = HttpGet::new().spec();
    assert_eq!(spec.name, "http.get");
    assert_eq!(spec.approval, ApprovalPolicy::Net);
    assert_eq!(spec.input_schema["required"], json!(["url"]));
}

#[tokio::test]
async fn denied_without_a_net_capability_and_no_request_is_made() {
    let server = Server::start().await;
    for caps in [
        &[][..],
        &["fs"][..],
        &["net:example.com"][..],
        &["network"][..],
    ] {
        let f = fixture(caps, config());
        let out = get(&f.ctx, &server.url("/hello"), true).await;
        assert!(!out.ok, "{caps:?}");
        assert!(out.error.as_deref().unwrap().contains("denied"), "{out:?}");
    }
    assert_eq!(server.hits(), 0);
}

#[tokio::test]
async fn allowed_with_net_where_a_grant_names_the_loopback_host() {
    let server = Server::start().await;
    // `net` alone never reaches loopback: one private-address rule for
    // every fetcher.
    let f = fixture(&["net"], config());
    let out = get(&f.ctx, &server.url("/hello"), true).await;
    assert!(!out.ok);
    assert!(
        out.error
            .as_deref()
            .unwrap()
            .contains("loopback or private address"),
        "{out:?}"
    );
    assert_eq!(server.hits(), 0);
    let f = fixture(&["net", "net:127.0.0.1"], config());
    let out = get(&f.ctx, &server.url("/hello"), true).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["status"], 200);
    assert_eq!(out.output["body"], "hello world");
    assert_eq!(out.output["content_type"], "text/plain");
    assert_eq!(out.output["from_cache"], false);
    assert_eq!(out.output["truncated"], false);
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn domain_scoped_grants_are_exact() {
    let server = Server::start().await;
    let f = fixture(&["net:127.0.0.1"], config());
    assert!(get(&f.ctx, &server.url("/hello"), true).await.ok);
    // Another host, even one resolving to the same address, is not covered.
    let f = fixture(&["net:localhost"], config());
    let out = get(&f.ctx, &server.url("/hello"), true).await;
    assert!(!out.ok);
    assert!(out.error.unwrap().contains("net:127.0.0.1"));
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn with_an_allowlist_net_allows_only_listed_hosts_and_domain_grants_override() {
    let server = Server::start().await;
    let mut f = fixture(&["net"], config());
    f.ctx.net_allowlist = Some(vec!["example.com".to_owned()]);
    let out = get(&f.ctx, &server.url("/hello"), true).await;
    assert!(!out.ok);
    assert!(out.error.unwrap().contains("loopback or private address"));
    assert_eq!(server.hits(), 0);

    // Listing a loopback host does not name it: a private address needs
    // a grant for its host.
    f.ctx.net_allowlist = Some(vec!["example.com".to_owned(), "127.0.0.1".to_owned()]);
    let out = get(&f.ctx, &server.url("/hello"), false).await;
    assert!(!out.ok);
    assert!(out.error.unwrap().contains("loopback or private address"));

    // `net:<domain>` overrides the allowlist; without `net` too.
    f.ctx.net_allowlist = Some(vec!["example.com".to_owned()]);
    f.ctx.capabilities = vec![north_protocol::Capability::lenient("net:127.0.0.1")];
    assert!(get(&f.ctx, &server.url("/hello"), false).await.ok);
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_fresh_cache_hit_makes_no_request() {
    let server = Server::start().await;
    let f = fixture(&["net", "net:127.0.0.1"], config());
    let first = get(&f.ctx, &server.url("/hello"), true).await;
    let second = get(&f.ctx, &server.url("/hello"), true).await;
    assert_eq!(server.hits(), 1);
    assert_eq!(second.output["from_cache"], true);
    assert_eq!(second.output["body"], first.output["body"]);

    // use_cache=false fetches again (and refreshes the entry).
    let third = get(&f.ctx, &server.url("/hello"), false).await;
    assert_eq!(third.output["from_cache"], false);
    assert_eq!(server.hits(), 2);

    // The cache is on disk: a new client on the same file hits it.
    let mut ctx = f.ctx.clone();
    ctx.http = Arc::new(HttpClient::with_config(Some(f.cache.clone()), config()));
    let fourth = get(&ctx, &server.url("/hello"), true).await;
    assert_eq!(fourth.output["from_cache"], true);
    assert_eq!(server.hits(), 2);

    // A cached response is not served once the capability is gone.
    ctx.capabilities.clear();
    assert!(!get(&ctx, &server.url("/hello"), true).await.ok);
}

#[tokio::test]
async fn cache_entries_expire_after_the_ttl() {
    let server = Server::start().await;
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let now_ms = Arc::new(AtomicU64::new(start));
    let clock = now_ms.clone();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_owned());
    ctx.capabilities = vec![
        north_protocol::Capability::Net,
        north_protocol::Capability::NetHost("127.0.0.1".into()),
    ];
    let config = HttpConfig {
        ttl: Duration::from_secs(60),
        ..config()
    };
    ctx.http = Arc::new(
        HttpClient::with_config(Some(dir.path().join("cache.db")), config)
            .with_clock(move || UNIX_EPOCH + Duration::from_millis(clock.load(Ordering::SeqCst))),
    );
    get(&ctx, &server.url("/hello"), true).await;
    now_ms.fetch_add(59_000, Ordering::SeqCst);
    assert_eq!(
        get(&ctx, &server.url("/hello"), true).await.output["from_cache"],
        true
    );
    assert_eq!(server.hits(), 1);
    now_ms.fetch_add(2_000, Ordering::SeqCst);
    let out = get(&ctx, &server.url("/hello"), true).await;
    assert_eq!(out.output["from_cache"], false);
    assert_eq!(server.hits(), 2);
    // The refetch starts a new TTL window.
    now_ms.fetch_add(30_000, Ordering::SeqCst);
    assert_eq!(
        get(&ctx, &server.url("/hello"), true).await.output["from_cache"],
        true
    );
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn bodies_are_bounded() {
    let server = Server::start().await;
    let f = fixture(
        &["net", "net:127.0.0.1"],
        HttpConfig {
            max_body_bytes: 1000,
            ..config()
        },
    );
    let out = get(&f.ctx, &server.url("/big"), true).await;
    assert!(out.ok);
    assert_eq!(out.output["truncated"], true);
    assert_eq!(out.output["bytes"], 1000);
    assert_eq!(out.output["body"].as_str().unwrap().len(), 1000);
    let cached = get(&f.ctx, &server.url("/big"), true).await;
    assert_eq!(cached.output["truncated"], true);
    assert_eq!(cached.output["from_cache"], true);
}

#[tokio::test]
async fn binary_bodies_are_flagged_not_inlined() {
    let server = Server::start().await;
    let f = fixture(&["net", "net:127.0.0.1"], config());
    let out = get(&f.ctx, &server.url("/binary"), true).await;
    assert!(out.ok);
    assert_eq!(out.output["body"], Value::Null);
    assert_eq!(out.output["binary"], true);
    assert_eq!(out.output["bytes"], 4);
}

#[tokio::test]
async fn error_statuses_fail_and_are_not_cached() {
    let server = Server::start().await;
    let f = fixture(&["net", "net:127.0.0.1"], config());
    let out = get(&f.ctx, &server.url("/missing"), true).await;
    assert!(!out.ok);
    assert_eq!(out.output["status"], 404);
    assert_eq!(out.output["body"], "no such page");
    assert!(out.error.unwrap().contains("404"));
    get(&f.ctx, &server.url("/missing"), true).await;
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn redirects_are_followed_only_to_allowed_hosts() {
    let server = Server::start().await;
    let f = fixture(&["net:127.0.0.1"], config());
    let out = get(&f.ctx, &server.url("/redirect-same"), true).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["body"], "hello world");
    assert!(
        out.output["final_url"]
            .as_str()
            .unwrap()
            .ends_with("/hello")
    );

    let out = get(&f.ctx, &server.url("/redirect-other"), true).await;
    assert!(!out.ok);
    assert!(
        out.error.unwrap().contains("localhost"),
        "redirect target must be checked"
    );

    let out = get(&f.ctx, &server.url("/loop"), true).await;
    assert!(out.error.unwrap().contains("too many redirects"));
}

#[tokio::test]
async fn only_http_and_https_urls() {
    let f = fixture(&["net", "net:127.0.0.1"], config());
    for url in [
        "file:///etc/passwd",
        "ftp://127.0.0.1/x",
        "not a url",
        "http://",
        "data:text/plain,hi",
    ] {
        let out = get(&f.ctx, url, true).await;
        assert!(!out.ok, "{url}");
    }
    let out = HttpGet::new().call(json!({"url": 5}), &f.ctx).await;
    assert!(out.error.unwrap().contains("url"));
}

#[tokio::test]
async fn slow_servers_time_out() {
    let server = Server::start().await;
    let f = fixture(
        &["net", "net:127.0.0.1"],
        HttpConfig {
            timeout: Duration::from_millis(300),
            ..config()
        },
    );
    let out = get(&f.ctx, &server.url("/slow"), true).await;
    assert!(!out.ok);
    assert!(out.error.unwrap().contains("timed out"));
}

#[tokio::test]
async fn cancellation_stops_a_request() {
    let server = Server::start().await;
    let f = fixture(&["net", "net:127.0.0.1"], config());
    let cancel = f.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let out = get(&f.ctx, &server.url("/slow"), true).await;
    assert!(out.error.unwrap().contains("cancelled"));
}

/// A web of fixed pages behind the context, as a library user might put
/// one: it counts what it is asked.
struct Pages {
    asked: AtomicUsize,
    config: HttpConfig,
}

impl north_tools::services::Web for Pages {
    fn config(&self) -> &HttpConfig {
        &self.config
    }

    fn fetch<'a>(
        &'a self,
        url: &'a str,
        _max_age: Option<Duration>,
        _access: &'a north_policy::NetAccess<'a>,
    ) -> futures::future::BoxFuture<
        'a,
        Result<north_tools::net::HttpResponse, north_tools::net::NetError>,
    > {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Ok(north_tools::net::HttpResponse {
                url: url.to_owned(),
                final_url: url.to_owned(),
                status: 200,
                content_type: Some("text/plain".into()),
                body: b"a page from the fixture".to_vec(),
                truncated: false,
                from_cache: false,
                fetched_at: SystemTime::now(),
            })
        })
    }
}

#[tokio::test]
async fn another_web_behind_the_context_serves_the_tool_and_is_asked_only_what_the_grants_allow() {
    let pages = Arc::new(Pages {
        asked: AtomicUsize::new(0),
        config: config(),
    });
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_owned());
    ctx.http = pages.clone();
    // No grant: the tool refuses before the web is asked.
    let out = get(&ctx, "https://docs.example.org/page", false).await;
    assert!(!out.ok);
    assert!(out.error.as_deref().unwrap().contains("denied"), "{out:?}");
    assert_eq!(pages.asked.load(Ordering::SeqCst), 0);
    // A grant for the host: the fixture's page is the result.
    ctx.capabilities = vec![north_protocol::Capability::lenient("net:docs.example.org")];
    let out = get(&ctx, "https://docs.example.org/page", false).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["body"], "a page from the fixture");
    // Another host is still refused without asking.
    let out = get(&ctx, "https://elsewhere.example.org/", false).await;
    assert!(!out.ok, "{out:?}");
    assert_eq!(pages.asked.load(Ordering::SeqCst), 1);
}
