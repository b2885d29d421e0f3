//! The fake HTTP server.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Where and how a response goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// No fault.
    None,
    /// Read the request, then reset the connection before any response byte.
    ResetBeforeResponse,
    /// Send headers and `n` body bytes, then reset the connection (RST).
    ResetAfter(usize),
    /// Send headers and `n` body bytes, then close cleanly without ending
    /// the chunked body (a stream cut).
    CutAfter(usize),
    /// Send headers and `n` body bytes, then send nothing more (idle stall).
    StallAfter(usize),
}

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Content type.
    pub content_type: String,
    /// Body bytes.
    pub body: Vec<u8>,
    /// Body chunk size on the wire (bytes per HTTP chunk).
    pub chunk_size: usize,
    /// Injected fault.
    pub fault: Fault,
    /// A pause after each chunk: a model's real streaming pace.
    pub pace: Option<std::time::Duration>,
}

impl Reply {
    /// A 200 `text/event-stream` response with `body`, sent event by event.
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            headers: Vec::new(),
            content_type: "text/event-stream".into(),
            body: body.into(),
            chunk_size: 0,
            fault: Fault::None,
            pace: None,
        }
    }

    /// A JSON response.
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            content_type: "application/json".into(),
            body: body.into().into_bytes(),
            chunk_size: 0,
            fault: Fault::None,
            pace: None,
        }
    }

    /// A connection reset before any response byte.
    pub fn reset() -> Self {
        Reply::json(200, "").with_fault(Fault::ResetBeforeResponse)
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends the body in HTTP chunks of `n` bytes (0 = one chunk per SSE event).
    pub fn chunked(mut self, n: usize) -> Self {
        self.chunk_size = n;
        self
    }

    /// Sends at a real model's pace: `pause` after every chunk (with
    /// [`Reply::chunked`], or after every SSE event).
    pub fn paced(mut self, pause: std::time::Duration) -> Self {
        self.pace = Some(pause);
        self
    }

    /// Injects a fault.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct CapturedRequest {
    /// HTTP method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Raw body.
    pub body: Vec<u8>,
}

impl CapturedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (Null if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Computes a reply from the request, for servers that must react to content.
pub type Responder = Arc<dyn Fn(&CapturedRequest) -> Reply + Send + Sync>;

/// Paths model clients probe for a server's context size (llama.cpp,
/// `/v1/models`, Ollama). Unless a route answers them they get a 404 and
/// never take a queued reply, so a client that probes first still gets the
/// replies a test queued for its model requests.
pub const DISCOVERY_PATHS: &[&str] = &["/props", "/v1/models", "/api/show"];

#[derive(Default)]
struct Shared {
    routes: Mutex<Vec<(String, String, Reply)>>,
    replies: Mutex<VecDeque<Reply>>,
    responder: Mutex<Option<Responder>>,
    fallback: Mutex<Option<Reply>>,
    requests: Mutex<Vec<CapturedRequest>>,
}

/// A fake provider server on 127.0.0.1.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeServer {
    /// Starts a server on an ephemeral loopback port (inside a tokio runtime).
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = serve(conn, s).await;
                });
            }
        });
        Ok(FakeServer { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues replies, served in order, one per request.
    pub fn push(&self, reply: Reply) -> &Self {
        if let Ok(mut q) = self.shared.replies.lock() {
            q.push_back(reply);
        }
        self
    }

    /// The reply for requests when the queue is empty (default: a 500 error).
    pub fn set_fallback(&self, reply: Reply) {
        if let Ok(mut f) = self.shared.fallback.lock() {
            *f = Some(reply);
        }
    }

    /// Answers requests (when the queue is empty) from their content.
    pub fn set_responder(
        &self,
        responder: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static,
    ) {
        if let Ok(mut r) = self.shared.responder.lock() {
            *r = Some(Arc::new(responder));
        }
    }

    /// Answers every `method` request to `path` with `reply` (not consumed;
    /// routes win over the queue).
    pub fn route(&self, method: &str, path: &str, reply: Reply) -> &Self {
        if let Ok(mut r) = self.shared.routes.lock() {
            r.push((method.to_ascii_uppercase(), path.to_string(), reply));
        }
        self
    }

    /// Requests received so far whose path is `path`.
    pub fn requests_to(&self, path: &str) -> Vec<CapturedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<CapturedRequest> {
        self.shared
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Replies still queued.
    pub fn pending(&self) -> usize {
        self.shared.replies.lock().map(|q| q.len()).unwrap_or(0)
    }
}

async fn read_request(conn: &mut TcpStream) -> std::io::Result<Option<CapturedRequest>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = conn.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let path = first.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = conn.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Ok(Some(CapturedRequest {
        method,
        path,
        headers,
        body,
    }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Splits the body into wire chunks: fixed size, or one per SSE event.
fn chunks(body: &[u8], size: usize) -> Vec<&[u8]> {
    if body.is_empty() {
        return Vec::new();
    }
    if size > 0 {
        return body.chunks(size).collect();
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < body.len() {
        if body[i] == b'\n' && body[i + 1] == b'\n' {
            out.push(&body[start..i + 2]);
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    if start < body.len() {
        out.push(&body[start..]);
    }
    out
}

fn reset(conn: TcpStream) {
    // Linger 0 makes close send RST instead of FIN.
    let _ = conn.set_zero_linger();
    drop(conn);
}

async fn serve(mut conn: TcpStream, shared: Arc<Shared>) -> std::io::Result<()> {
    let Some(req) = read_request(&mut conn).await? else {
        return Ok(());
    };
    let routed = shared.routes.lock().ok().and_then(|routes| {
        routes
            .iter()
            .find(|(m, p, _)| *m == req.method && *p == req.path)
            .map(|(_, _, reply)| reply.clone())
    });
    let probe = routed.is_none() && DISCOVERY_PATHS.contains(&req.path.as_str());
    let responder = shared.responder.lock().ok().and_then(|r| r.clone());
    let computed = match (&routed, probe) {
        (None, false) => responder.map(|f| f(&req)),
        _ => None,
    };
    if let Ok(mut r) = shared.requests.lock() {
        r.push(req);
    }
    let is_routed = routed.is_some();
    let queued = || {
        if is_routed || probe {
            return None;
        }
        shared.replies.lock().ok().and_then(|mut q| q.pop_front())
    };
    let not_found = || {
        probe.then(|| {
            Reply::json(
                404,
                r#"{"error":{"message":"File Not Found","type":"not_found_error"}}"#,
            )
        })
    };
    let reply = routed
        .or_else(queued)
        .or_else(not_found)
        .or(computed)
        .or_else(|| shared.fallback.lock().ok().and_then(|f| f.clone()))
        .unwrap_or_else(|| {
            Reply::json(
                500,
                r#"{"type":"error","error":{"type":"api_error","message":"fake server: no reply queued"}}"#,
            )
        });
    if reply.fault == Fault::ResetBeforeResponse {
        reset(conn);
        return Ok(());
    }
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).await?;
    conn.flush().await?;
    let limit = match reply.fault {
        Fault::ResetAfter(n) | Fault::CutAfter(n) | Fault::StallAfter(n) => n.min(reply.body.len()),
        _ => reply.body.len(),
    };
    for chunk in chunks(&reply.body[..limit], reply.chunk_size) {
        conn.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await?;
        conn.write_all(chunk).await?;
        conn.write_all(b"\r\n").await?;
        conn.flush().await?;
        // Let the client see each chunk separately, as a real stream would.
        match reply.pace {
            Some(pause) => tokio::time::sleep(pause).await,
            None => tokio::task::yield_now().await,
        }
    }
    match reply.fault {
        Fault::ResetAfter(_) => reset(conn),
        Fault::CutAfter(_) => {
            conn.shutdown().await?;
        }
        Fault::StallAfter(_) => {
            // Hold the connection open and silent until the client gives up.
            let mut sink = [0u8; 64];
            loop {
                match conn.read(&mut sink).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
        Fault::None | Fault::ResetBeforeResponse => {
            conn.write_all(b"0\r\n\r\n").await?;
            conn.flush().await?;
        }
    }
    Ok(())
}
