//! The login: discovery and registration (rmcp's authorization manager),
//! the user's browser at the authorization URL, and the code received on a
//! loopback callback, exchanged for tokens the token file keeps.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationRequest, AuthorizationSession, OAuthClientConfig,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{CallbackProblem, OAuthError, TokenFile};
use crate::config::OAuthConfig;

/// How long North waits for the browser to come back.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// Who the user's browser is: `$BROWSER`, else the desktop's opener.
fn browser_command() -> Option<String> {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.trim().is_empty());
    if let Some(b) = var("BROWSER") {
        return Some(b);
    }
    if cfg!(target_os = "macos") {
        return Some("open".into());
    }
    if var("DISPLAY").is_some() || var("WAYLAND_DISPLAY").is_some() {
        let on_path = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("xdg-open").is_file()));
        if on_path {
            return Some("xdg-open".into());
        }
    }
    None
}

/// Whether a login can open a browser here (else North says which command
/// to run rather than wait for a page nobody sees).
pub fn can_open_browser() -> bool {
    browser_command().is_some()
}

/// Opens `url` in the user's browser through North's spawner; the
/// browser's own variables (display, `$BROWSER`'s PATH) are passed, no key.
fn open_browser(url: &str) -> bool {
    // Only a web page: an authorization endpoint from a server's metadata
    // must not get the desktop to open a local file or a launcher.
    let web = url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "https" | "http"));
    let Some(browser) = browser_command().filter(|_| web) else {
        return false;
    };
    let cwd = std::env::temp_dir();
    let mut cmd = north_tools::Spawner::desktop().std_command("sh".as_ref(), &cwd);
    // `$BROWSER` may carry arguments; the URL goes as one argument.
    cmd.arg("-c")
        .arg(format!("{browser} \"$1\""))
        .arg("north-browser")
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for name in [
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "DBUS_SESSION_BUS_ADDRESS",
    ] {
        if let Ok(v) = std::env::var(name) {
            cmd.env(name, v);
        }
    }
    match cmd.spawn() {
        Ok(mut child) => {
            // Reaped in the background: a browser may outlive the login.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}

/// The page the browser shows once North has the code.
fn page(ok: bool, detail: &str) -> String {
    let (title, body) = if ok {
        (
            "Signed in",
            "North has what it needs. You can close this tab.",
        )
    } else {
        ("Sign-in failed", detail)
    };
    let html = format!(
        "<!doctype html><title>North: {title}</title><h1>North: {title}</h1><p>{}</p>",
        body.replace('<', "&lt;")
    );
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
        html.len()
    )
}

/// Waits on `listener` for the browser's return to `/callback` and
/// returns that URL (its query holds the code and state).
async fn await_callback(
    listener: tokio::net::TcpListener,
    redirect: &str,
) -> Result<String, OAuthError> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| OAuthError::Callback(CallbackProblem::Io(e)))?;
        let mut buf = vec![0u8; 8192];
        let mut len = 0;
        // The request line is all North needs; a browser sends it first.
        while len < buf.len() {
            let Ok(Ok(n)) =
                tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf[len..])).await
            else {
                break;
            };
            if n == 0 {
                break;
            }
            len += n;
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buf[..len]);
        let target = head
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or("");
        if !target.starts_with("/callback") {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let url = format!("{}{}", redirect.trim_end_matches("/callback"), target);
        let parsed =
            url::Url::parse(&url).map_err(|e| OAuthError::Callback(CallbackProblem::Url(e)))?;
        let param = |k: &str| {
            parsed
                .query_pairs()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = param("error") {
            let detail = match param("error_description") {
                Some(d) => format!("{error}: {d}"),
                None => error,
            };
            let _ = stream.write_all(page(false, &detail).as_bytes()).await;
            return Err(OAuthError::Denied(detail));
        }
        if param("code").is_none() {
            let _ = stream
                .write_all(page(false, "the callback carried no code").as_bytes())
                .await;
            continue;
        }
        let _ = stream.write_all(page(true, "").as_bytes()).await;
        return Ok(url);
    }
}

/// What a login needs to know about the server.
pub struct LoginTarget<'a> {
    /// The server's name (for messages).
    pub name: &'a str,
    /// Its MCP endpoint.
    pub url: &'a str,
    /// Its entry's `oauth` block, `${VAR}`s expanded.
    pub config: Option<&'a OAuthConfig>,
    /// The `WWW-Authenticate` challenge that asked for it, if any.
    pub challenge: Option<&'a str>,
}

/// The loopback listener the browser comes back to (`port` 0: any free
/// one), and the redirect URL that names it.
async fn callback_listener(port: u16) -> Result<(tokio::net::TcpListener, String), OAuthError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|source| OAuthError::Callback(CallbackProblem::Listen { port, source }))?;
    let port = listener
        .local_addr()
        .map_err(|e| OAuthError::Callback(CallbackProblem::Io(e)))?
        .port();
    Ok((listener, format!("http://127.0.0.1:{port}/callback")))
}

/// Logs in to `target`: discovery, registration, the browser, the code,
/// the tokens (saved in `store`). `announce` tells the user the URL (it is
/// always shown, in case no browser opens).
pub async fn login(
    target: &LoginTarget<'_>,
    store: &TokenFile,
    announce: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), OAuthError> {
    crate::install_tls_provider();
    let config = target.config.cloned().unwrap_or_default();
    let (listener, redirect) = callback_listener(config.callback_port.unwrap_or(0)).await?;

    let mut manager = AuthorizationManager::new(target.url)
        .await
        .map_err(OAuthError::from_auth)?;
    manager.set_credential_store(store.clone());
    let metadata = super::resolve_metadata(&manager, target.url, target.challenge).await?;
    let takes_metadata_documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    manager.set_metadata(metadata);
    let scopes = if config.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        config.scopes.clone()
    };
    // Pre-registered, else a metadata document, else registration — and a
    // secret the server gives at registration is kept for refreshes.
    let (client_id, secret) = match (&config.client_id, &config.client_metadata_url) {
        (Some(id), _) => (id.clone(), config.client_secret.clone()),
        (None, Some(url)) if takes_metadata_documents => (url.clone(), None),
        _ => {
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered: OAuthClientConfig = manager
                .register_client("North", &redirect, &refs)
                .await
                .map_err(OAuthError::from_auth)?;
            (registered.client_id, registered.client_secret)
        }
    };
    store
        .set_client_secret(if config.client_id.is_some() {
            None // the user's own secret stays in their environment
        } else {
            secret.clone()
        })
        .map_err(OAuthError::Store)?;
    let mut request = AuthorizationRequest::new(redirect.clone())
        .with_initial_scope_selection()
        .with_scopes(scopes)
        .with_client_name("North")
        .with_preregistered_client(client_id);
    if let Some(secret) = secret {
        request = request.with_client_secret(secret);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| OAuthError::from_auth(e))?;
    let auth_url = session.get_authorization_url().to_string();
    let opened = open_browser(&auth_url);
    announce(&if opened {
        format!(
            "{}: opened your browser to log in (if it did not open, visit {auth_url})",
            target.name
        )
    } else {
        format!("{}: to log in, open {auth_url}", target.name)
    });
    let callback = tokio::time::timeout(LOGIN_WAIT, await_callback(listener, &redirect))
        .await
        .map_err(|_| {
            OAuthError::Callback(CallbackProblem::TimedOut {
                minutes: LOGIN_WAIT.as_secs() / 60,
            })
        })??;
    session
        .handle_callback_url(&callback)
        .await
        .map_err(OAuthError::from_auth)?;
    Ok(())
}
