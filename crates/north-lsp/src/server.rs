//! One running language server over stdio: started through the spawner,
//! initialized for the project, its documents kept as unsaved versions,
//! its diagnostics kept per document, its own requests answered, and
//! every wait bounded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::Child;
use tokio::sync::{Notify, oneshot};

use crate::framing;
use crate::types::{Diagnostic, ServerDef};

/// Most diagnostics kept for one document.
const MAX_DIAGNOSTICS: usize = 200;
/// Most documents whose diagnostics are kept.
const MAX_DOCUMENTS: usize = 1000;
/// Most lines of a server's stderr written to the log.
const MAX_STDERR_LINES: usize = 200;

/// Why a server did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// It could not be started.
    #[error("cannot start `{program}`: {reason}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        reason: String,
    },
    /// It did not answer in time.
    #[error("no answer to {method} within {secs} s")]
    Timeout {
        /// The request.
        method: String,
        /// The limit.
        secs: u64,
    },
    /// It answered with an error.
    #[error("{method} failed: {message}")]
    Refused {
        /// The request.
        method: String,
        /// What it said.
        message: String,
    },
    /// It stopped (crashed, or sent what LSP is not).
    #[error("the server stopped: {0}")]
    Stopped(String),
}

/// What a server published for one document.
#[derive(Debug, Clone, Default)]
struct Published {
    /// The document version it was for (when the server says).
    version: Option<i64>,
    /// Its place in the order of everything published.
    seq: u64,
    items: Vec<Diagnostic>,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// One running server.
pub struct Server {
    language: String,
    root: PathBuf,
    outbox: tokio::sync::mpsc::UnboundedSender<Value>,
    child: tokio::sync::Mutex<Child>,
    pending: Pending,
    next_id: AtomicU64,
    /// By the document's path (servers encode URIs their own way).
    published: Arc<Mutex<HashMap<PathBuf, Published>>>,
    seq: Arc<AtomicU64>,
    changed: Arc<Notify>,
    /// Open documents: their version and the text the server has.
    open: Mutex<HashMap<String, (i64, u64)>>,
    alive: Arc<AtomicBool>,
    stopped_because: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("language", &self.language)
            .field("alive", &self.is_alive())
            .finish_non_exhaustive()
    }
}

/// `file://` URI of an absolute path.
pub(crate) fn uri_of(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI (percent escapes decoded byte by byte).
pub(crate) fn path_of(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

impl Server {
    /// Starts `def` in `root` through `spawner` and initializes it,
    /// waiting up to `timeout` for its answer.
    pub async fn start(
        def: &ServerDef,
        root: &Path,
        spawner: &north_sandbox::Spawner,
        timeout: Duration,
    ) -> Result<Server, ServerError> {
        let program = def.command.first().cloned().unwrap_or_default();
        let failed = |reason: String| ServerError::Start {
            program: program.clone(),
            reason,
        };
        let mut cmd = spawner.tokio_command(std::ffi::OsStr::new(&program), root);
        cmd.args(&def.command[1..])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| failed(e.to_string()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(failed("no pipes".into()));
        };
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(log_stderr(def.language.clone(), stderr));
        }
        // One writer: North's messages and the answers to the server's own
        // requests go out in order, never interleaved.
        let (outbox, mut queue) = tokio::sync::mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(message) = queue.recv().await {
                if framing::write(&mut stdin, &message).await.is_err() {
                    break;
                }
            }
        });
        let server = Server {
            language: def.language.clone(),
            root: root.to_path_buf(),
            outbox,
            child: tokio::sync::Mutex::new(child),
            pending: Arc::default(),
            next_id: AtomicU64::new(1),
            published: Arc::default(),
            seq: Arc::default(),
            changed: Arc::default(),
            open: Mutex::default(),
            alive: Arc::new(AtomicBool::new(true)),
            stopped_because: Arc::default(),
        };
        server.spawn_reader(stdout);
        server.initialize(timeout).await?;
        Ok(server)
    }

    /// The language it serves.
    pub fn language(&self) -> &str {
        &self.language
    }

    /// Whether it still runs.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Why it stopped, when it did.
    pub fn stopped_because(&self) -> Option<String> {
        self.stopped_because.lock().ok().and_then(|s| s.clone())
    }

    fn spawn_reader(&self, stdout: tokio::process::ChildStdout) {
        let pending = self.pending.clone();
        let published = self.published.clone();
        let seq = self.seq.clone();
        let changed = self.changed.clone();
        let alive = self.alive.clone();
        let because = self.stopped_because.clone();
        let outbox = self.outbox.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let reason = loop {
                match framing::read(&mut reader).await {
                    Ok(Some(msg)) => {
                        if let Some(answer) = dispatch(&msg, &pending, &published, &seq) {
                            changed.notify_waiters();
                            if let Some(reply) = answer {
                                let _ = outbox.send(reply);
                            }
                        }
                    }
                    Ok(None) => break "it closed its output".to_string(),
                    Err(e) => break e.to_string(),
                }
            };
            alive.store(false, Ordering::SeqCst);
            if let Ok(mut b) = because.lock() {
                *b = Some(reason.clone());
            }
            if let Ok(mut p) = pending.lock() {
                for (_, tx) in p.drain() {
                    let _ = tx.send(Err(reason.clone()));
                }
            }
            changed.notify_waiters();
        });
    }

    async fn send(&self, message: &Value) -> Result<(), ServerError> {
        self.outbox.send(message.clone()).map_err(|_| {
            ServerError::Stopped(
                self.stopped_because()
                    .unwrap_or_else(|| "its input closed".into()),
            )
        })
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ServerError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// Sends a request and waits up to `timeout` for its result.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ServerError> {
        if !self.is_alive() {
            return Err(ServerError::Stopped(
                self.stopped_because().unwrap_or_default(),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(message))) => Err(ServerError::Refused {
                method: method.into(),
                message,
            }),
            Ok(Err(_)) => Err(ServerError::Stopped(
                self.stopped_because().unwrap_or_default(),
            )),
            Err(_) => {
                if let Ok(mut p) = self.pending.lock() {
                    p.remove(&id);
                }
                Err(ServerError::Timeout {
                    method: method.into(),
                    secs: timeout.as_secs().max(1),
                })
            }
        }
    }

    async fn initialize(&self, timeout: Duration) -> Result<(), ServerError> {
        let root = uri_of(&self.root);
        let name = self.root.file_name().map_or_else(
            || "project".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "north", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root,
            "rootPath": self.root.display().to_string(),
            "workspaceFolders": [{"uri": root, "name": name}],
            "capabilities": {
                "textDocument": {
                    "synchronization": {"didSave": false, "dynamicRegistration": false},
                    "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                    "definition": {"linkSupport": false},
                    "references": {},
                },
                "workspace": {"symbol": {}, "configuration": true, "workspaceFolders": true},
                "window": {"workDoneProgress": false},
            },
        });
        self.request("initialize", params, timeout).await?;
        self.notify("initialized", json!({})).await?;
        // Some servers (pyright) set their workspaces up only once told the
        // settings: North has none of its own to give.
        self.notify("workspace/didChangeConfiguration", json!({"settings": {}}))
            .await
    }

    /// Makes the server see `text` as the content of `path` (absolute),
    /// unsaved: opened the first time, changed after. The document's
    /// version and the publish count before it, for [`Server::diagnostics`].
    pub async fn sync(&self, path: &Path, text: &str) -> Result<(i64, u64), ServerError> {
        let uri = uri_of(path);
        let hash = text_hash(text);
        let before = self.seq.load(Ordering::SeqCst);
        let (known, version) = {
            let Ok(mut open) = self.open.lock() else {
                return Err(ServerError::Stopped("a lock was poisoned".into()));
            };
            let known = open.get(&uri).copied();
            // The server has this text already: what it published for
            // this version (any time) is the answer.
            if let Some((version, same)) = known
                && same == hash
            {
                return Ok((version, 0));
            }
            let version = known.map_or(1, |(v, _)| v + 1);
            open.insert(uri.clone(), (version, hash));
            (known, version)
        };
        match known {
            None => {
                let language = language_id(path, &self.language);
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
                )
                .await?;
            }
            Some(_) => {
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
                )
                .await?;
            }
        }
        Ok((version, before))
    }

    /// The diagnostics the server publishes for `path` at `version` (or
    /// after publish `after`, when it does not say versions): the latest
    /// once it has been quiet for `settle`, waiting at most `timeout`.
    /// `None`: no answer in time.
    pub async fn diagnostics(
        &self,
        path: &Path,
        version: i64,
        after: u64,
        settle: Duration,
        timeout: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let deadline = tokio::time::Instant::now() + timeout;
        let fresh = |p: &Published| p.seq > after && p.version.is_none_or(|v| v == version);
        let mut got: Option<Published> = None;
        loop {
            // Registered before the state is read: a publish in between
            // still wakes this wait.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let current = self
                .published
                .lock()
                .ok()
                .and_then(|p| p.get(path).cloned())
                .filter(fresh);
            if let Some(now) = current {
                let newer = got.as_ref().is_none_or(|g| now.seq > g.seq);
                if newer {
                    got = Some(now);
                }
            }
            let wait_until = match &got {
                // Quiet for `settle` after the last: that is the answer.
                Some(_) => (tokio::time::Instant::now() + settle).min(deadline),
                None => deadline,
            };
            if !self.is_alive() {
                return got.map(|g| g.items);
            }
            if tokio::time::timeout_at(wait_until, notified).await.is_err() {
                return got.map(|g| g.items);
            }
            if tokio::time::Instant::now() >= deadline {
                return got.map(|g| g.items);
            }
        }
    }

    /// Forgets `path` (a proposed file that was not written).
    pub async fn close(&self, path: &Path) -> Result<(), ServerError> {
        let uri = uri_of(path);
        let was_open = self
            .open
            .lock()
            .ok()
            .and_then(|mut o| o.remove(&uri))
            .is_some();
        if let Ok(mut p) = self.published.lock() {
            p.remove(path);
        }
        if was_open {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            )
            .await?;
        }
        Ok(())
    }

    /// Asks it to shut down, then makes sure it has.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self
                .request("shutdown", Value::Null, Duration::from_secs(2))
                .await;
            let _ = self.notify("exit", Value::Null).await;
        }
        let mut child = self.child.lock().await;
        if tokio::time::timeout(Duration::from_millis(500), child.wait())
            .await
            .is_err()
        {
            if let Some(pid) = child.id() {
                north_sandbox::Spawner::kill_group(pid);
            }
            let _ = child.kill().await;
        }
    }
}

/// A server's stderr, to the log: read to its end (a server is never
/// stopped by a full pipe), lines cut at 1 KiB, the first lines only.
async fn log_stderr(language: String, stderr: tokio::process::ChildStderr) {
    use tokio::io::AsyncReadExt;
    let mut stderr = stderr;
    let mut buf = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    let mut n = 0;
    while let Ok(read) = stderr.read(&mut buf).await {
        if read == 0 {
            break;
        }
        for &b in &buf[..read] {
            if b == b'\n' {
                if n < MAX_STDERR_LINES {
                    tracing::info!(server = %language, "{}", String::from_utf8_lossy(&line));
                }
                n += 1;
                line.clear();
            } else if line.len() < 1024 {
                line.push(b);
            }
        }
    }
}

/// A short hash of a document's text (to tell the same text again).
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// LSP's `languageId` for a file.
fn language_id(path: &Path, language: &str) -> String {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    match ext {
        "ts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "py" | "pyi" => "python",
        "rs" => "rust",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" => "cpp",
        _ => language,
    }
    .to_string()
}

/// Handles one message from the server: a response (to its waiter), a
/// notification (diagnostics kept), or a request of its own (its answer,
/// to send back). `None` when it changed nothing a waiter cares for.
fn dispatch(
    msg: &Value,
    pending: &Pending,
    published: &Mutex<HashMap<PathBuf, Published>>,
    seq: &AtomicU64,
) -> Option<Option<Value>> {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let id = id.as_u64()?;
            let tx = pending.lock().ok()?.remove(&id)?;
            let answer = match msg.get("error") {
                Some(e) => Err(e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string()),
                None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(answer);
            None
        }
        (Some(method), Some(id)) => {
            // The server's own requests: configuration sections North does
            // not have are null; everything else is acknowledged.
            let result = match method {
                "workspace/configuration" => {
                    let n = msg["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; n])
                }
                // North never lets a server edit files.
                "workspace/applyEdit" => {
                    json!({"applied": false, "failureReason": "North applies only reviewed edits"})
                }
                _ => Value::Null,
            };
            Some(Some(json!({"jsonrpc": "2.0", "id": id, "result": result})))
        }
        (Some("textDocument/publishDiagnostics"), None) => {
            let params = msg.get("params")?;
            let path = path_of(params.get("uri")?.as_str()?)?;
            let items: Vec<Diagnostic> = params
                .get("diagnostics")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(crate::types::diagnostic)
                        .take(MAX_DIAGNOSTICS)
                        .collect()
                })
                .unwrap_or_default();
            let n = seq.fetch_add(1, Ordering::SeqCst) + 1;
            let entry = Published {
                version: params.get("version").and_then(Value::as_i64),
                seq: n,
                items,
            };
            let mut all = published.lock().ok()?;
            // A server that publishes for endless documents is not followed.
            if all.len() < MAX_DOCUMENTS || all.contains_key(&path) {
                all.insert(path, entry);
            }
            Some(None)
        }
        _ => None,
    }
}
