//! The language servers of one project: each started the first time a
//! file of its language needs it, restarted after a crash up to a limit,
//! asked about proposed text, and shut down with the session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::server::{Server, path_of, uri_of};
use crate::types::{Diagnostic, Location, ServerDef, Symbol, symbol_kind};

/// How often a crashed server is started again in one session.
const MAX_RESTARTS: u32 = 2;
/// The longest a configured timeout may be.
const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a server may take to start and initialize.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long North waits for a proposal's diagnostics.
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(8);
/// Quiet time after a publish before it is taken as the answer (servers
/// publish in stages).
const SETTLE: Duration = Duration::from_millis(400);
/// How long a definition, references or symbols request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Most locations or symbols returned.
const MAX_RESULTS: usize = 100;

/// How one attempt at a proposal's diagnostics ended.
enum Checked {
    /// With an answer, or a reason that asking again would not change.
    Answered,
    /// The server stopped while it checked.
    Stopped,
}

/// Why a definition, references or symbols request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// No server is configured for the file's language.
    #[error("no language server is configured for `{0}`")]
    NoServer(String),
    /// The server could not be started (or is not started again).
    #[error("{0}")]
    Unavailable(String),
    /// The server failed the request.
    #[error("the {server} language server: {source}")]
    Request {
        /// Its language.
        server: String,
        /// What went wrong.
        #[source]
        source: crate::ServerError,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The project path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What a server said of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnosed {
    /// No server is configured for the file's language.
    NoServer,
    /// The server answered: these diagnostics (empty: clean).
    Found {
        /// The server's language.
        server: String,
        /// What it reported.
        items: Vec<Diagnostic>,
    },
    /// The server did not answer (in time, or at all), with why.
    NoAnswer {
        /// The server's language.
        server: String,
        /// Why.
        reason: String,
    },
}

#[derive(Default)]
struct Slot {
    server: Option<Arc<Server>>,
    starts: u32,
    last_error: Option<String>,
}

/// The configured servers of a project.
pub struct Servers {
    root: PathBuf,
    defs: Vec<ServerDef>,
    spawner: north_sandbox::Spawner,
    slots: tokio::sync::Mutex<HashMap<String, Slot>>,
    /// One check at a time: a document's sync and the wait for its
    /// diagnostics belong together (parallel sub-agents share servers).
    checking: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Servers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Servers")
            .field("root", &self.root)
            .field("defs", &self.defs)
            .finish_non_exhaustive()
    }
}

impl Servers {
    /// The servers `defs` for the project at `root`, started through
    /// `spawner` when first needed.
    pub fn new(root: PathBuf, defs: Vec<ServerDef>, spawner: north_sandbox::Spawner) -> Servers {
        Servers {
            root,
            defs,
            spawner,
            slots: tokio::sync::Mutex::default(),
            checking: tokio::sync::Mutex::default(),
        }
    }

    /// The configured servers.
    pub fn defs(&self) -> &[ServerDef] {
        &self.defs
    }

    /// The server for `rel` (a project path), if one is configured.
    pub fn def_for(&self, rel: &str) -> Option<&ServerDef> {
        let ext = Path::new(rel).extension()?.to_str()?;
        self.defs
            .iter()
            .find(|d| d.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }

    /// The running server for `def`, started (again) when needed.
    async fn server(&self, def: &ServerDef) -> Result<Arc<Server>, String> {
        let mut slots = self.slots.lock().await;
        let slot = slots.entry(def.language.clone()).or_default();
        if let Some(s) = &slot.server
            && s.is_alive()
        {
            return Ok(s.clone());
        }
        if let Some(s) = slot.server.take() {
            slot.last_error = s.stopped_because();
            tracing::warn!(server = %def.language, reason = ?slot.last_error, "language server stopped");
        }
        if slot.starts > MAX_RESTARTS {
            return Err(format!(
                "the {} language server stopped {} times and is not started again this session (last: {})",
                def.language,
                slot.starts,
                slot.last_error.as_deref().unwrap_or("unknown")
            ));
        }
        slot.starts += 1;
        let timeout = def.timeout.unwrap_or(START_TIMEOUT).min(MAX_TIMEOUT);
        match Server::start(def, &self.root, &self.spawner, timeout).await {
            Ok(s) => {
                let s = Arc::new(s);
                slot.server = Some(s.clone());
                Ok(s)
            }
            Err(e) => {
                slot.last_error = Some(e.to_string());
                Err(format!("the {} language server: {e}", def.language))
            }
        }
    }

    /// What the server of `rel`'s language says of `text` as its content
    /// (never written: the server sees an unsaved version). A server that
    /// stops while it checks (one that dies under load) is started again
    /// and asked once more, within its restarts: one crash does not cost
    /// the review its answer.
    pub async fn diagnose(&self, rel: &str, text: &str) -> Diagnosed {
        let Some(def) = self.def_for(rel) else {
            return Diagnosed::NoServer;
        };
        let _one_at_a_time = self.checking.lock().await;
        match self.diagnose_once(def, rel, text).await {
            (_, Checked::Stopped) => self.diagnose_once(def, rel, text).await.0,
            (said, Checked::Answered) => said,
        }
    }

    /// One attempt of [`Servers::diagnose`], and whether the server
    /// stopped while it checked.
    async fn diagnose_once(&self, def: &ServerDef, rel: &str, text: &str) -> (Diagnosed, Checked) {
        let no_answer = |reason: String| Diagnosed::NoAnswer {
            server: def.language.clone(),
            reason,
        };
        let server = match self.server(def).await {
            Ok(s) => s,
            Err(e) => return (no_answer(e), Checked::Answered),
        };
        let stopped = |server: &Server| {
            (
                no_answer(format!(
                    "the {} language server stopped: {}",
                    def.language,
                    server.stopped_because().unwrap_or_default()
                )),
                Checked::Stopped,
            )
        };
        let path = self.root.join(rel);
        let (version, after) = match server.sync(&path, text).await {
            Ok(v) => v,
            Err(_) if !server.is_alive() => return stopped(&server),
            Err(e) => return (no_answer(e.to_string()), Checked::Answered),
        };
        let timeout = def.timeout.unwrap_or(DIAGNOSTICS_TIMEOUT).min(MAX_TIMEOUT);
        match server
            .diagnostics(&path, version, after, SETTLE, timeout)
            .await
        {
            Some(items) => (
                Diagnosed::Found {
                    server: def.language.clone(),
                    items,
                },
                Checked::Answered,
            ),
            None if !server.is_alive() => stopped(&server),
            None => (
                no_answer(format!(
                    "the {} language server gave no diagnostics within {} s",
                    def.language,
                    timeout.as_secs_f32()
                )),
                Checked::Answered,
            ),
        }
    }

    /// The running server of `rel`'s language, if one runs (never started
    /// for this).
    async fn running(&self, rel: &str) -> Option<Arc<Server>> {
        let def = self.def_for(rel)?;
        let slots = self.slots.lock().await;
        slots
            .get(&def.language)
            .and_then(|s| s.server.clone())
            .filter(|s| s.is_alive())
    }

    /// Tells the server of `rel` what was written (after an accepted
    /// edit), without waiting for anything.
    pub async fn written(&self, rel: &str, text: &str) {
        if let Some(server) = self.running(rel).await {
            let _ = server.sync(&self.root.join(rel), text).await;
        }
    }

    /// The server of `rel` forgets it (a proposed new file not written).
    pub async fn closed(&self, rel: &str) {
        if let Some(server) = self.running(rel).await {
            let _ = server.close(&self.root.join(rel)).await;
        }
    }

    /// The server of `rel` with the file open as it is on disk.
    async fn opened(&self, rel: &str) -> Result<(Arc<Server>, PathBuf), LspError> {
        let def = self
            .def_for(rel)
            .ok_or_else(|| LspError::NoServer(rel.to_string()))?;
        let server = self.server(def).await.map_err(LspError::Unavailable)?;
        let path = self.root.join(rel);
        let text = std::fs::read_to_string(&path).map_err(|source| LspError::Read {
            path: rel.to_string(),
            source,
        })?;
        server
            .sync(&path, &text)
            .await
            .map_err(|source| LspError::Request {
                server: def.language.clone(),
                source,
            })?;
        Ok((server, path))
    }

    /// Sends `method` about `rel` at `line`:`column` to its server; a
    /// server that stops while it answers is started again and asked once
    /// more (within its restarts), as for a proposal's diagnostics.
    async fn at(
        &self,
        rel: &str,
        method: &str,
        line: u32,
        column: u32,
        context: Option<Value>,
    ) -> Result<Vec<Location>, LspError> {
        match self
            .at_once(rel, method, line, column, context.clone())
            .await
        {
            Err((e, Checked::Stopped)) => {
                tracing::warn!(%method, error = %e, "language server stopped while answering; asking again");
                self.at_once(rel, method, line, column, context)
                    .await
                    .map_err(|(e, _)| e)
            }
            other => other.map_err(|(e, _)| e),
        }
    }

    /// One attempt of [`Servers::at`], and whether the server stopped.
    async fn at_once(
        &self,
        rel: &str,
        method: &str,
        line: u32,
        column: u32,
        context: Option<Value>,
    ) -> Result<Vec<Location>, (LspError, Checked)> {
        let (server, path) = self.opened(rel).await.map_err(|e| (e, Checked::Answered))?;
        let mut params = position(&path, line, column);
        if let Some(c) = context {
            params["context"] = c;
        }
        let v = server
            .request(method, params, REQUEST_TIMEOUT)
            .await
            .map_err(|source| {
                let checked = if server.is_alive() {
                    Checked::Answered
                } else {
                    Checked::Stopped
                };
                let e = LspError::Request {
                    server: server.language().to_string(),
                    source,
                };
                (e, checked)
            })?;
        Ok(self.locations(&v))
    }

    /// Where the symbol at `line`:`column` (1-based) of `rel` is defined.
    pub async fn definition(
        &self,
        rel: &str,
        line: u32,
        column: u32,
    ) -> Result<Vec<Location>, LspError> {
        self.at(rel, "textDocument/definition", line, column, None)
            .await
    }

    /// Where the symbol at `line`:`column` of `rel` is used.
    pub async fn references(
        &self,
        rel: &str,
        line: u32,
        column: u32,
    ) -> Result<Vec<Location>, LspError> {
        let context = json!({"includeDeclaration": true});
        self.at(rel, "textDocument/references", line, column, Some(context))
            .await
    }

    /// The diagnostics of `rel` as it is on disk.
    pub async fn file_diagnostics(&self, rel: &str) -> Diagnosed {
        match std::fs::read_to_string(self.root.join(rel)) {
            Ok(text) => self.diagnose(rel, &text).await,
            Err(e) => Diagnosed::NoAnswer {
                server: String::new(),
                reason: format!("cannot read {rel}: {e}"),
            },
        }
    }

    /// The workspace's symbols matching `query`, from every configured
    /// server that runs (or can start).
    pub async fn symbols(&self, query: &str) -> Result<Vec<Symbol>, LspError> {
        let mut out = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        for def in &self.defs {
            let server = match self.server(def).await {
                Ok(s) => s,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            match server
                .request("workspace/symbol", json!({"query": query}), REQUEST_TIMEOUT)
                .await
            {
                Ok(Value::Array(items)) => {
                    for item in items.iter().take(MAX_RESULTS) {
                        let location = item.get("location").and_then(|l| self.location(l));
                        if let (Some(name), Some(location)) =
                            (item.get("name").and_then(Value::as_str), location)
                        {
                            out.push(Symbol {
                                name: name.to_string(),
                                kind: symbol_kind(item["kind"].as_u64().unwrap_or(0)).into(),
                                location,
                            });
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => errors.push(format!("{}: {e}", def.language)),
            }
        }
        if out.is_empty() && !errors.is_empty() {
            return Err(LspError::Unavailable(errors.join("; ")));
        }
        out.truncate(MAX_RESULTS);
        Ok(out)
    }

    fn location(&self, v: &Value) -> Option<Location> {
        let uri = v.get("uri").or_else(|| v.get("targetUri"))?.as_str()?;
        let range = v.get("range").or_else(|| v.get("targetSelectionRange"))?;
        let abs = path_of(uri)?;
        let path = abs
            .strip_prefix(&self.root)
            .map_or_else(|_| abs.display().to_string(), |p| p.display().to_string());
        let at = |f: &str| {
            range["start"][f]
                .as_u64()
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX).saturating_add(1))
        };
        Some(Location {
            path,
            line: at("line")?,
            column: at("character")?,
        })
    }

    fn locations(&self, v: &Value) -> Vec<Location> {
        match v {
            Value::Array(items) => items
                .iter()
                .filter_map(|i| self.location(i))
                .take(MAX_RESULTS)
                .collect(),
            Value::Object(_) => self.location(v).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Shuts every running server down.
    pub async fn shutdown(&self) {
        let servers: Vec<Arc<Server>> = self
            .slots
            .lock()
            .await
            .values_mut()
            .filter_map(|s| s.server.take())
            .collect();
        for s in servers {
            s.shutdown().await;
        }
    }
}

/// LSP's `TextDocumentPositionParams` for a 1-based position.
fn position(path: &Path, line: u32, column: u32) -> Value {
    json!({
        "textDocument": {"uri": uri_of(path)},
        "position": {"line": line.saturating_sub(1), "character": column.saturating_sub(1)},
    })
}
