//! The sessions one North process serves, and who is attached to each: an
//! editor on stdio (`north acp`) or any number of clients on a socket
//! (`north serve`). Sessions of one project share its MCP servers, which
//! stay warm between sessions; a session outlives the clients that leave
//! it, unless the hub ends sessions when their last client goes (stdio).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{McpServer, SessionUpdate};
use north_agent::TurnEnd;
use north_protocol::{Event, Message, PermissionMode, Usage};
use north_runtime::{LiveSession, SessionChoice, Sessions};
use tokio_util::sync::CancellationToken;

use crate::approver::{AcpApprover, EditorFiles, TurnCancel};
use crate::clients::{Attached, Clients};
use crate::history::replay;
use crate::open::AcpRuntime;
use crate::setup::{EditorForms, SessionSetup, editor_servers};

/// How long a turn waits for its project's MCP servers to connect.
const MCP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// How much a hub holds for its clients.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Clients attached to one session at once.
    pub clients_per_session: usize,
    /// Messages queued for one client; a client that falls this far
    /// behind (it stopped reading) is dropped, so it never stalls a session.
    pub queued_messages: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            clients_per_session: 16,
            queued_messages: 4096,
        }
    }
}

/// One served session.
pub(crate) struct Served {
    pub cwd: PathBuf,
    pub agent: Arc<tokio::sync::Mutex<LiveSession>>,
    /// Its project's sessions (MCP servers); shared with the project's
    /// other sessions unless the opening editor passed servers of its own.
    pub project: Arc<Sessions>,
    pub own_project: bool,
    pub cancel: TurnCancel,
    pub clients: Arc<Clients>,
    pub running: AtomicBool,
    /// Its name, as last set.
    pub name: Mutex<Option<String>>,
    /// Its mode, as last set (readable while a turn holds the agent).
    pub mode: Mutex<PermissionMode>,
    /// Its history as of the last turn's end, as updates: what a client
    /// that attaches is shown first.
    pub history: Mutex<Vec<SessionUpdate>>,
    /// The same as North's messages, with the tokens used so far.
    pub messages: Mutex<(Vec<Message>, Usage)>,
}

impl Served {
    /// Cancels the running turn, if any.
    pub(crate) fn cancel_turn(&self) {
        if let Ok(c) = self.cancel.lock() {
            c.cancel();
        }
    }

    /// What North's clients are told about it.
    pub(crate) fn meta(&self) -> crate::ext::SessionMeta {
        let project = self.project.project();
        crate::ext::SessionMeta {
            root: project.root.clone(),
            provider: project.selected.provider.clone(),
            model: project.selected.model.clone(),
            context_window: project.selected.limits.context_window,
        }
    }

    /// Runs one turn; every attached client sees its events.
    pub(crate) async fn turn(&self, input: &str) -> TurnEnd {
        let mut agent = self.agent.lock().await;
        // The first request carries the MCP servers' tools (each has its
        // connect timeout; once they are up this returns at once).
        for (name, error) in self.project.wait_ready(MCP_WAIT).await {
            tracing::warn!(server = %name, error = %error, "an MCP server is not available");
        }
        let token = CancellationToken::new();
        if let Ok(mut c) = self.cancel.lock() {
            *c = token.clone();
        }
        self.running.store(true, Ordering::Relaxed);
        let clients = self.clients.clone();
        let emit = move |e: Event| clients.event(&e);
        let end = agent.run_turn(input, &emit, &token).await;
        if let Ok(mut h) = self.history.lock() {
            *h = replay(agent.messages(), &agent.all_tools());
        }
        if let Ok(mut m) = self.messages.lock() {
            *m = (agent.messages().to_vec(), agent.total_usage());
        }
        self.running.store(false, Ordering::Relaxed);
        end
    }
}

/// What opening a session needs from the connection asking.
pub(crate) struct Opener {
    pub client: Attached,
    /// The connection's forms, when its client shows them.
    pub forms: Option<EditorForms>,
}

/// The sessions of this process.
pub struct Hub {
    runtime: Arc<AcpRuntime>,
    limits: Limits,
    sessions: Mutex<HashMap<String, Arc<Served>>>,
    /// The order sessions were opened in, for listing.
    order: Mutex<Vec<String>>,
    projects: Mutex<HashMap<PathBuf, Arc<Sessions>>>,
    next_client: AtomicU64,
    end_when_detached: bool,
}

fn internal(message: impl ToString) -> Error {
    Error::internal_error().data(message.to_string())
}

fn invalid(message: impl ToString) -> Error {
    Error::invalid_params().data(message.to_string())
}

impl Hub {
    /// A hub whose sessions end with their last client (one editor on
    /// stdio: `keep_sessions` false) or stay open for clients to attach
    /// again (a server).
    pub fn new(runtime: Arc<AcpRuntime>, limits: Limits, keep_sessions: bool) -> Arc<Hub> {
        Arc::new(Hub {
            runtime,
            limits,
            sessions: Mutex::new(HashMap::new()),
            order: Mutex::new(Vec::new()),
            projects: Mutex::new(HashMap::new()),
            next_client: AtomicU64::new(1),
            end_when_detached: !keep_sessions,
        })
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A number for a new connection.
    pub(crate) fn client_id(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// The open session `id`.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Served>, Error> {
        self.sessions
            .lock()
            .map_err(|_| internal("session table poisoned"))?
            .get(id)
            .cloned()
            .ok_or_else(|| {
                invalid(format!(
                    "no open session `{id}` (list them with `_north/session/list`)"
                ))
            })
    }

    /// Every open session, oldest first.
    pub(crate) fn all(&self) -> Vec<(String, Arc<Served>)> {
        let order = self.order.lock().map(|o| o.clone()).unwrap_or_default();
        let Ok(map) = self.sessions.lock() else {
            return Vec::new();
        };
        order
            .into_iter()
            .filter_map(|id| map.get(&id).map(|s| (id, s.clone())))
            .collect()
    }

    /// The project's warm sessions at `cwd`, started on first use.
    fn project(&self, cwd: &Path, forms: Option<EditorForms>) -> Result<Arc<Sessions>, Error> {
        if let Some(p) = self.projects.lock().ok().and_then(|p| p.get(cwd).cloned()) {
            return Ok(p);
        }
        let setup = SessionSetup {
            servers: Vec::new(),
            forms,
        };
        let started = Arc::new(
            self.runtime
                .project(cwd, setup)
                .map_err(|e| internal(e.0))?,
        );
        let mut projects = self
            .projects
            .lock()
            .map_err(|_| internal("project table poisoned"))?;
        Ok(projects.entry(cwd.to_path_buf()).or_insert(started).clone())
    }

    /// Opens a session (new, resumed or forked) in `cwd` and attaches the
    /// opener; an open session being resumed is attached instead. Returns
    /// the session and whether it was opened here.
    pub(crate) fn open(
        &self,
        opener: Opener,
        cwd: &Path,
        choice: SessionChoice,
        servers: &[McpServer],
    ) -> Result<(String, Arc<Served>, bool), Error> {
        if !cwd.is_absolute() {
            return Err(invalid("cwd must be an absolute path"));
        }
        if let SessionChoice::Resume(id) = &choice
            && let Ok(open) = self.get(id)
        {
            self.attach(&open, opener.client)?;
            return Ok((id.clone(), open, false));
        }
        let servers = editor_servers(servers);
        let own_project = !servers.is_empty();
        let project = if own_project {
            let setup = SessionSetup {
                servers,
                forms: opener.forms.clone(),
            };
            Arc::new(
                self.runtime
                    .project(cwd, setup)
                    .map_err(|e| internal(e.0))?,
            )
        } else {
            self.project(cwd, opener.forms.clone())?
        };
        let clients = Arc::new(Clients::new(self.limits.clients_per_session));
        let cancel: TurnCancel = Arc::new(Mutex::new(CancellationToken::new()));
        let approver = Arc::new(AcpApprover {
            clients: clients.clone(),
            root: cwd.to_path_buf(),
            cancel: cancel.clone(),
        });
        let mut agent = match self.runtime.session(&project, choice, approver) {
            Ok(a) => a,
            Err(e) => {
                if own_project {
                    tokio::spawn(async move { project.shutdown().await });
                }
                return Err(internal(e.0));
            }
        };
        let id = agent.session_id().to_string();
        let _ = clients.session.set(id.clone());
        if let Some(cell) = opener.forms.as_ref().map(|f| &f.session) {
            let _ = cell.set(id.clone());
        }
        if opener.client.writes {
            agent.set_file_writer(Arc::new(EditorFiles {
                clients: clients.clone(),
            }));
        }
        let history = replay(agent.messages(), &agent.all_tools());
        let messages = (agent.messages().to_vec(), agent.total_usage());
        let mode = agent.mode();
        let served = Arc::new(Served {
            cwd: cwd.to_path_buf(),
            agent: Arc::new(tokio::sync::Mutex::new(agent)),
            project,
            own_project,
            cancel,
            clients,
            running: AtomicBool::new(false),
            name: Mutex::new(None),
            mode: Mutex::new(mode),
            history: Mutex::new(history),
            messages: Mutex::new(messages),
        });
        self.attach(&served, opener.client)?;
        self.sessions
            .lock()
            .map_err(|_| internal("session table poisoned"))?
            .insert(id.clone(), served.clone());
        if let Ok(mut order) = self.order.lock() {
            order.push(id.clone());
        }
        Ok((id, served, true))
    }

    /// Attaches a client to an open session.
    pub(crate) fn attach(&self, served: &Arc<Served>, client: Attached) -> Result<(), Error> {
        served.clients.attach(client).map_err(invalid)
    }

    /// Connection `client` went away: it leaves every session; with
    /// `end_when_detached`, a session it leaves empty ends.
    pub(crate) async fn detach(&self, client: u64) {
        let mut ending = Vec::new();
        for (id, served) in self.all() {
            let left = served.clients.detach(client);
            if left == 0 && self.end_when_detached {
                ending.push(id);
            }
        }
        for id in ending {
            self.close(&id).await;
        }
    }

    /// Ends session `id`: its turn cancelled, then closed the ordinary way
    /// (SessionEnd hooks, background jobs); its own MCP servers stop.
    pub(crate) async fn close(&self, id: &str) -> bool {
        let removed = self.sessions.lock().ok().and_then(|mut m| m.remove(id));
        if let Ok(mut order) = self.order.lock() {
            order.retain(|o| o != id);
        }
        let Some(served) = removed else {
            return false;
        };
        served.cancel_turn();
        let mut live = served.agent.lock().await;
        if served.own_project {
            served
                .project
                .close(&mut live, north_agent::SessionEndReason::Exit, &|_| {})
                .await;
        } else {
            live.close(north_agent::SessionEndReason::Exit, &|_| {})
                .await;
        }
        true
    }

    /// Ends every session and stops every project's MCP servers (the
    /// server stops, or the one editor went away).
    pub async fn shutdown(&self) {
        let ids: Vec<String> = self.all().into_iter().map(|(id, _)| id).collect();
        for id in ids {
            self.close(&id).await;
        }
        let projects: Vec<Arc<Sessions>> = self
            .projects
            .lock()
            .map(|mut p| p.drain().map(|(_, s)| s).collect())
            .unwrap_or_default();
        for p in projects {
            p.shutdown().await;
        }
    }
}
