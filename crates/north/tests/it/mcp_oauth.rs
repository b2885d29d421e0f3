//! MCP OAuth through the real binary against a local authorization server
//! and MCP endpoint (one test-support server speaking both): `north mcp
//! login` with a "browser" that follows the redirect, tokens in the state
//! directory with mode 0600 and nowhere else (no log, no session file), a
//! refresh once the access token has expired, `north mcp logout`, and a
//! headless run that says which command logs in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use north_test_support::{CapturedRequest, FakeServer, Reply};
use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, output, text};

/// What the authorization server has handed out.
#[derive(Default)]
struct Issued {
    refreshed: bool,
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    url_pairs(&String::from_utf8_lossy(body))
}

fn url_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            let v = v.replace('+', " ");
            let decoded = percent_decode(&v);
            (k.to_string(), decoded)
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn param<'a>(pairs: &'a [(String, String)], k: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == k)
        .map(|(_, v)| v.as_str())
}

/// One server: protected resource metadata, authorization server metadata,
/// registration, authorization (redirecting at once with a code), tokens
/// (the first expires in a second and comes with a refresh token), and an
/// MCP endpoint that wants a bearer token and answers in JSON.
fn oauth_server(server: &FakeServer, issued: Arc<Mutex<Issued>>) {
    let base = server.url();
    server.set_responder(move |req: &CapturedRequest| {
        let (path, query) = req.path.split_once('?').unwrap_or((&req.path, ""));
        match (req.method.as_str(), path) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => Reply::json(
                200,
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]})
                    .to_string(),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => Reply::json(
                200,
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"]
                })
                .to_string(),
            ),
            ("POST", "/register") => Reply::json(
                201,
                json!({"client_id": "north-test-client", "redirect_uris": []}).to_string(),
            ),
            ("GET", "/authorize") => {
                let q = url_pairs(query);
                let redirect = param(&q, "redirect_uri").unwrap_or_default();
                let state = param(&q, "state").unwrap_or_default();
                let mut r = Reply::json(302, "");
                r.headers
                    .push(("Location".into(), format!("{redirect}?code=CODE-1&state={state}")));
                r
            }
            ("POST", "/token") => {
                let f = form(&req.body);
                match param(&f, "grant_type") {
                    Some("authorization_code") => Reply::json(
                        200,
                        json!({"access_token": "ACCESS-FIRST-7f3a", "token_type": "Bearer",
                               "expires_in": 1, "refresh_token": "REFRESH-9c1d"})
                        .to_string(),
                    ),
                    Some("refresh_token") if param(&f, "refresh_token") == Some("REFRESH-9c1d") => {
                        issued.lock().unwrap().refreshed = true;
                        Reply::json(
                            200,
                            json!({"access_token": "ACCESS-SECOND-41be", "token_type": "Bearer",
                                   "expires_in": 3600})
                            .to_string(),
                        )
                    }
                    _ => Reply::json(400, json!({"error": "invalid_grant"}).to_string()),
                }
            }
            ("POST", "/mcp") => {
                let token = req
                    .header("authorization")
                    .and_then(|h| h.strip_prefix("Bearer "))
                    .unwrap_or("");
                if !token.starts_with("ACCESS-") {
                    let mut r = Reply::json(401, "{}");
                    r.headers.push((
                        "WWW-Authenticate".into(),
                        format!(
                            "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                        ),
                    ));
                    return r;
                }
                let msg: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                let id = msg.get("id").cloned();
                let method = msg["method"].as_str().unwrap_or("");
                let Some(id) = id else {
                    return Reply::json(202, "");
                };
                let result = match method {
                    "initialize" => json!({"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "oauth-test", "version": "1.0.0"}}),
                    "tools/list" => json!({"tools": [{"name": "whoami",
                        "description": "Which token the call came with",
                        "inputSchema": {"type": "object", "properties": {}}}]}),
                    "tools/call" => {
                        let which = if token == "ACCESS-SECOND-41be" {
                            "refreshed token"
                        } else {
                            "first token"
                        };
                        json!({"content": [{"type": "text", "text": format!("called with the {which}")}]})
                    }
                    _ => json!({}),
                };
                Reply::json(200, json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
            }
            _ => Reply::json(405, "{}"),
        }
    });
}

fn user_servers(sb: &Sandbox, url: &str) {
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {"docs": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
}

fn browser(sb: &Sandbox) -> String {
    let path = sb.dir.path().join("browser.sh");
    Sandbox::executable(
        &path,
        "#!/bin/sh\nexec curl -sS -L -o /dev/null --max-time 20 \"$1\"\n",
    );
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_keeps_private_tokens_refreshes_them_and_logout_forgets_them() {
    let server = FakeServer::start().await.unwrap();
    let issued = Arc::new(Mutex::new(Issued::default()));
    oauth_server(&server, issued.clone());
    let sb = Sandbox::new();
    user_servers(&sb, &format!("{}/mcp", server.url()));
    let browser = browser(&sb);

    // Headless, with no browser to open: North says which command logs in.
    let mut cmd = sb.north();
    cmd.args(["mcp", "call", "docs", "whoami"]);
    let out = output(cmd).await;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("needs you to log in: run `north mcp login docs`"),
        "{err}"
    );

    let mut cmd = sb.north();
    cmd.env("BROWSER", &browser).args(["mcp", "login", "docs"]);
    let out = output(cmd).await;
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("logged in to `docs`"), "{err}");
    let dir = sb.home().join("state/north/mcp-oauth");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one token file");
    let token_file = files[0].path();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&token_file).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "readable only by the user");
    let stored = std::fs::read_to_string(&token_file).unwrap();
    assert!(stored.contains("ACCESS-FIRST-7f3a") && stored.contains("REFRESH-9c1d"));

    // The access token lives a second: the record says it came an hour
    // ago, so the next use refreshes it (no waiting for the clock).
    let mut record: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let received = &mut record["credentials"]["token_received_at"];
    assert!(received.is_u64(), "{stored}");
    *received = json!(received.as_u64().unwrap() - 3600);
    std::fs::write(&token_file, record.to_string()).unwrap();
    let mut cmd = sb.north();
    cmd.args(["mcp", "call", "docs", "whoami"]);
    let out = output(cmd).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("called with the refreshed token"),
        "{stdout}"
    );
    assert!(issued.lock().unwrap().refreshed);
    assert!(
        std::fs::read_to_string(&token_file)
            .unwrap()
            .contains("ACCESS-SECOND-41be")
    );

    // A session that used the server: no token in its files or the log.
    let script = json!([
        {"tool_calls": [{"id": "m1", "name": "mcp__docs__whoami", "args": {}}]},
        {"text": "done"}
    ]);
    let (out, _) = sb.exec_scripted(&script, &["--grant", "tool:mcp__docs"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        sb.everything_written()
            .contains("called with the refreshed token"),
        "the session used the server"
    );
    for file in sb.files() {
        if file == token_file {
            continue;
        }
        let content =
            String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
        for secret in ["ACCESS-FIRST-7f3a", "ACCESS-SECOND-41be", "REFRESH-9c1d"] {
            assert!(
                !content.contains(secret),
                "{secret} is in {}",
                file.display()
            );
        }
    }

    let mut cmd = sb.north();
    cmd.args(["mcp", "logout", "docs"]);
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!token_file.exists(), "logout deletes the tokens");
}
