//! `north serve`'s sockets: a unix socket (0600, in a 0700 directory) and
//! optionally a WebSocket on a loopback address, both speaking ACP to the
//! one [`Hub`]. Every connection presents the capability token before any
//! message (unix: a first line `{"token": "…"}`; WebSocket: `Authorization:
//! Bearer …` on the upgrade). What is sent to a client is counted against
//! its backlog: a client that stops reading is dropped, and the session
//! never waits for it.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::Lines;
use futures::{Sink, SinkExt, Stream, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_util::sync::CancellationToken;

use crate::clients::Backlog;
use crate::hub::Hub;
use crate::server::serve_on;

/// How long a connection has to present its token.
const TOKEN_WAIT: Duration = Duration::from_secs(10);

/// Where `north serve` listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A unix socket at this path.
    Unix(PathBuf),
    /// A WebSocket on this loopback address.
    Ws(SocketAddr),
}

/// Why the server cannot listen or start.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Not `unix:PATH` or `ws://127.0.0.1:PORT`.
    #[error("`{0}` is not an address North serves on: use unix:PATH or ws://127.0.0.1:PORT")]
    Form(String),
    /// A WebSocket address outside loopback.
    #[error(
        "`{0}` is not a loopback address: North serves only on 127.0.0.1, ::1 or localhost (a remote client reaches it through an SSH tunnel)"
    )]
    NotLoopback(String),
    /// Another server answers on the socket.
    #[error("a North server already listens on {0} (stop it, or pass another --listen unix:PATH)")]
    InUse(PathBuf),
    /// A unix socket path longer than the kernel takes.
    #[error("the socket path {0} is too long for a unix socket (at most 107 bytes)")]
    TooLong(PathBuf),
    /// Reading or writing the socket's directory or the token.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Binding a WebSocket address.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

impl std::str::FromStr for Listen {
    type Err = ListenError;

    fn from_str(s: &str) -> Result<Self, ListenError> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(ListenError::Form(s.into()));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        let Some(rest) = s.strip_prefix("ws://") else {
            return Err(ListenError::Form(s.into()));
        };
        let hostport = rest.trim_end_matches('/');
        if hostport.contains('/') {
            return Err(ListenError::Form(s.into()));
        }
        let addr: SocketAddr = match hostport.strip_prefix("localhost:") {
            Some(port) => format!("127.0.0.1:{port}").parse(),
            None => hostport.parse(),
        }
        .map_err(|_| {
            // A name other than localhost: never resolved, so never remote.
            if hostport
                .rsplit_once(':')
                .is_some_and(|(h, _)| !h.is_empty())
            {
                ListenError::NotLoopback(s.into())
            } else {
                ListenError::Form(s.into())
            }
        })?;
        if !addr.ip().is_loopback() {
            return Err(ListenError::NotLoopback(s.into()));
        }
        Ok(Listen::Ws(addr))
    }
}

/// The capability token every connection presents.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A new random token (32 bytes from the kernel, as hex), written to
    /// `file` readable by the user only.
    pub fn create(file: &Path) -> Result<Token, ListenError> {
        let io = |what, source| ListenError::Io {
            what,
            path: file.to_path_buf(),
            source,
        };
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .map_err(|e| io("cannot draw a random token for", e))?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        if let Some(dir) = file.parent() {
            private_dir(dir)?;
        }
        let tmp = file.with_extension("tmp");
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(|e| io("cannot write the token to", e))?;
            std::io::Write::write_all(&mut f, token.as_bytes())
                .map_err(|e| io("cannot write the token to", e))?;
        }
        std::fs::rename(&tmp, file).map_err(|e| io("cannot write the token to", e))?;
        Ok(Token(token))
    }

    /// A token read from `file` (a client's side).
    pub fn read(file: &Path) -> Result<Token, ListenError> {
        std::fs::read_to_string(file)
            .map(|t| Token(t.trim().to_string()))
            .map_err(|source| ListenError::Io {
                what: "cannot read the server's token from",
                path: file.to_path_buf(),
                source,
            })
    }

    /// The token's text.
    pub fn secret(&self) -> &str {
        &self.0
    }

    /// Whether `given` is the token, compared in constant time.
    fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

/// A directory only the user can enter (created if missing).
fn private_dir(dir: &Path) -> Result<(), ListenError> {
    let io = |what, source| ListenError::Io {
        what,
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create", e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io("cannot make private", e))
}

/// A listening server.
pub struct Server {
    hub: Arc<Hub>,
    token: Token,
    unix: Option<(PathBuf, UnixListener)>,
    ws: Option<TcpListener>,
}

impl Server {
    /// Listens where `listen` says, with `token`.
    pub async fn bind(
        hub: Arc<Hub>,
        token: Token,
        listen: &[Listen],
    ) -> Result<Server, ListenError> {
        let mut server = Server {
            hub,
            token,
            unix: None,
            ws: None,
        };
        for l in listen {
            match l {
                Listen::Unix(path) => server.unix = Some((path.clone(), bind_unix(path).await?)),
                Listen::Ws(addr) => {
                    server.ws = Some(TcpListener::bind(addr).await.map_err(|source| {
                        ListenError::Bind {
                            addr: *addr,
                            source,
                        }
                    })?);
                }
            }
        }
        Ok(server)
    }

    /// Where it listens, as `unix:PATH` and `ws://ADDR`.
    pub fn addresses(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((path, _)) = &self.unix {
            out.push(format!("unix:{}", path.display()));
        }
        if let Some(addr) = self.ws.as_ref().and_then(|l| l.local_addr().ok()) {
            out.push(format!("ws://{addr}"));
        }
        out
    }

    /// Serves until `stop`; then every session ends, the MCP servers stop
    /// and the socket file is removed.
    pub async fn run(self, stop: CancellationToken) {
        let Server {
            hub,
            token,
            unix,
            ws,
        } = self;
        let limit = hub.limits().queued_messages;
        let unix_loop = async {
            let Some((_, listener)) = &unix else {
                return std::future::pending().await;
            };
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(unix_client(hub.clone(), token.clone(), stream, limit));
                    }
                    Err(e) => refused_for_now(&e).await,
                }
            }
        };
        let ws_loop = async {
            let Some(listener) = &ws else {
                return std::future::pending().await;
            };
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(ws_client(hub.clone(), token.clone(), stream, limit));
                    }
                    Err(e) => refused_for_now(&e).await,
                }
            }
        };
        tokio::select! {
            () = unix_loop => {}
            () = ws_loop => {}
            () = stop.cancelled() => {}
        }
        hub.shutdown().await;
        if let Some((path, _)) = unix {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A failed accept (out of file descriptors, most often): said, and a
/// pause before the next, so the loop never spins.
async fn refused_for_now(e: &std::io::Error) {
    tracing::warn!(error = %e, "a connection could not be accepted");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Binds the unix socket: its directory private, a stale socket file
/// (no server answers) replaced, a live one refused.
async fn bind_unix(path: &Path) -> Result<UnixListener, ListenError> {
    if path.as_os_str().len() > 107 {
        return Err(ListenError::TooLong(path.to_path_buf()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        private_dir(dir)?;
    }
    if path.exists() {
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            return Err(ListenError::InUse(path.to_path_buf()));
        }
        let _ = std::fs::remove_file(path);
    }
    let io = |what, source| ListenError::Io {
        what,
        path: path.to_path_buf(),
        source,
    };
    let listener = UnixListener::bind(path).map_err(|e| io("cannot listen on", e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| io("cannot make private", e))?;
    Ok(listener)
}

/// The writing half of a connection of one ACP message per line (a Unix
/// socket's lines, a WebSocket's text frames), for servers and clients.
pub type LineSink = Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>;
/// The reading half of such a connection.
pub type LineStream = Pin<Box<dyn Stream<Item = std::io::Result<String>> + Send>>;

/// The sending side of a connection: lines wait in a queue for the writer
/// task, which counts each one written against the client's backlog and
/// stops when the client is dropped. The task ends with the returned guard.
fn outgoing<W, F>(backlog: Arc<Backlog>, mut write: W) -> (LineSink, AbortOnDrop)
where
    W: FnMut(String) -> F + Send + 'static,
    F: std::future::Future<Output = std::io::Result<()>> + Send,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let dropped = backlog.dropped();
    let writer = tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                l = rx.recv() => l,
                () = dropped.cancelled() => None,
            };
            let Some(line) = line else { break };
            let written = tokio::select! {
                w = write(line) => w,
                () = dropped.cancelled() => break,
            };
            if written.is_err() {
                break;
            }
            backlog.written();
        }
    });
    let sink = futures::sink::unfold(
        tx,
        async |tx: mpsc::UnboundedSender<String>, line: String| {
            tx.send(line)
                .map(|()| tx)
                .map_err(|_| std::io::Error::other("the client went away"))
        },
    );
    (Box::pin(sink), AbortOnDrop(writer))
}

/// The incoming lines, ended when the client is dropped (which ends its
/// connection).
fn until_dropped(lines: LineStream, backlog: &Backlog) -> LineStream {
    let dropped = backlog.dropped();
    Box::pin(lines.take_until(async move { dropped.cancelled().await }))
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The refusal a client without the right token reads before the close.
const REFUSED: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unauthorized: a wrong or missing token (the server's token file holds it)"}}"#;

/// A unix socket client: its first line is the token, then ACP lines.
async fn unix_client(hub: Arc<Hub>, token: Token, stream: tokio::net::UnixStream, limit: usize) {
    let backlog = Arc::new(Backlog::new(limit));
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut first = String::new();
    let read_first = tokio::time::timeout(TOKEN_WAIT, async {
        // At most a few KiB before the token is known.
        (&mut reader).take(4096).read_line(&mut first).await
    });
    let given = match read_first.await {
        Ok(Ok(_)) => serde_json::from_str::<serde_json::Value>(&first)
            .ok()
            .and_then(|v| v.get("token").and_then(|t| t.as_str()).map(String::from)),
        _ => None,
    };
    if !given.is_some_and(|g| token.matches(&g)) {
        tracing::warn!("a unix socket client was refused: wrong or missing token");
        let _ = write.write_all(format!("{REFUSED}\n").as_bytes()).await;
        let _ = write.shutdown().await;
        return;
    }
    let incoming: LineStream = Box::pin(futures::stream::unfold(reader, async |mut r| {
        let mut line = String::new();
        match r.read_line(&mut line).await {
            Ok(0) => None,
            Ok(_) => Some((Ok(line.trim_end_matches(['\n', '\r']).to_string()), r)),
            Err(e) => Some((Err(e), r)),
        }
    }));
    let incoming = until_dropped(incoming, &backlog);
    let write = Arc::new(tokio::sync::Mutex::new(write));
    let (outgoing, _writer) = outgoing(backlog.clone(), move |line: String| {
        let write = write.clone();
        async move {
            let mut w = write.lock().await;
            w.write_all(line.as_bytes()).await?;
            w.write_all(b"\n").await?;
            w.flush().await
        }
    });
    if let Err(e) = serve_on(hub, Lines::new(outgoing, incoming), Some(backlog)).await {
        tracing::info!(error = %e, "a unix socket client's connection ended");
    }
}

/// A WebSocket client: the token on the upgrade, then one ACP message per
/// text frame.
#[allow(
    clippy::result_large_err,
    reason = "the refusal's type is tungstenite's handshake callback's"
)]
async fn ws_client(hub: Arc<Hub>, token: Token, stream: tokio::net::TcpStream, limit: usize) {
    let backlog = Arc::new(Backlog::new(limit));
    let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let given = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given.is_some_and(|g| token.matches(g.trim())) {
            Ok(resp)
        } else {
            tracing::warn!("a WebSocket client was refused: wrong or missing token");
            let mut refused = ErrorResponse::new(Some(
                "unauthorized: a wrong or missing token (send Authorization: Bearer TOKEN)".into(),
            ));
            *refused.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::UNAUTHORIZED;
            Err(refused)
        }
    };
    let ws = match tokio::time::timeout(
        TOKEN_WAIT,
        tokio_tungstenite::accept_hdr_async(stream, check),
    )
    .await
    {
        Ok(Ok(ws)) => ws,
        _ => return,
    };
    let (sink, source) = ws.split();
    let incoming: LineStream = Box::pin(source.filter_map(async |m| match m {
        Ok(Message::Text(t)) => Some(Ok(t.as_str().to_string())),
        Ok(Message::Binary(b)) => Some(Ok(String::from_utf8_lossy(&b).into_owned())),
        Ok(_) => None,
        Err(e) => Some(Err(std::io::Error::other(e))),
    }));
    let incoming = until_dropped(incoming, &backlog);
    let sink = Arc::new(tokio::sync::Mutex::new(sink));
    let (outgoing, _writer) = outgoing(backlog.clone(), move |line: String| {
        let sink = sink.clone();
        async move {
            sink.lock()
                .await
                .send(Message::text(line))
                .await
                .map_err(std::io::Error::other)
        }
    });
    if let Err(e) = serve_on(hub, Lines::new(outgoing, incoming), Some(backlog)).await {
        tracing::info!(error = %e, "a WebSocket client's connection ended");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_outside_loopback_are_refused() {
        for a in [
            "ws://0.0.0.0:4000",
            "ws://192.168.1.2:4000",
            "ws://[::]:4000",
            "ws://example.com:4000",
        ] {
            assert!(
                matches!(a.parse::<Listen>(), Err(ListenError::NotLoopback(_))),
                "{a}"
            );
        }
        for a in ["ws://127.0.0.1:4000", "ws://[::1]:4000", "ws://localhost:0"] {
            assert!(matches!(a.parse::<Listen>(), Ok(Listen::Ws(_))), "{a}");
        }
        assert!(matches!("unix:/x/y".parse::<Listen>(), Ok(Listen::Unix(_))));
        for a in [
            "http://127.0.0.1:1",
            "unix:",
            "ws://127.0.0.1:1/path",
            "127.0.0.1:1",
        ] {
            assert!(
                matches!(a.parse::<Listen>(), Err(ListenError::Form(_))),
                "{a}"
            );
        }
    }

    #[test]
    fn tokens_compare_whole() {
        let t = Token("abcd".into());
        assert!(t.matches("abcd"));
        assert!(!t.matches("abc"));
        assert!(!t.matches("abce"));
        assert!(!t.matches(""));
    }
}
