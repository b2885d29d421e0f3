//! The connection: `initialize`, `session/new`, `session/load`,
//! `session/prompt` (streamed as `session/update`s), `session/cancel` and
//! `session/set_mode`, each on a North [`Agent`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, CurrentModeUpdate,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, SessionMode,
    SessionModeState, SessionNotification, SessionUpdate, SetSessionModeRequest,
    SetSessionModeResponse, StopReason, TextContent, ToolCall, ToolCallStatus,
};
use agent_client_protocol::v1::schema::{McpCapabilities, McpServer};
use agent_client_protocol::{Agent as AcpRole, Client, ConnectTo, Error, Stdio};
use north_agent::TurnEnd;
use north_protocol::{ContentBlock as NorthBlock, Event, PermissionMode, Role};
use north_runtime::{LiveSession, Sessions};
use tokio_util::sync::CancellationToken;

use crate::approver::{AcpApprover, TurnCancel};
use crate::open::{AcpRuntime, EditorSession};
use crate::setup::{EditorForms, SessionSetup, editor_servers};
use crate::updates::{acp_kind, update_for};

struct Session {
    agent: Arc<tokio::sync::Mutex<LiveSession>>,
    /// The project's sessions: its MCP servers stop when this one ends.
    sessions: Arc<Sessions>,
    cancel: TurnCancel,
}

#[derive(Clone)]
struct Shared {
    runtime: Arc<AcpRuntime>,
    sessions: Arc<Mutex<HashMap<String, Session>>>,
    /// The client offered `fs/write_text_file` at `initialize`.
    editor_writes: Arc<std::sync::atomic::AtomicBool>,
    /// The client said it shows forms (`elicitation.form`) at `initialize`.
    editor_forms: Arc<std::sync::atomic::AtomicBool>,
}

fn invalid(message: impl ToString) -> Error {
    Error::invalid_params().data(message.to_string())
}

fn internal(message: impl ToString) -> Error {
    Error::internal_error().data(message.to_string())
}

fn text_block(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t.to_string()))
}

fn mode_state(current: PermissionMode) -> SessionModeState {
    let modes = PermissionMode::ALL
        .iter()
        .map(|m| {
            let name = match m {
                PermissionMode::Ask => "Ask",
                PermissionMode::AcceptEdits => "Accept edits",
                PermissionMode::Plan => "Plan (read-only)",
                PermissionMode::Auto => "Auto (commands sandboxed)",
            };
            SessionMode::new(m.as_str().to_string(), name.to_string())
        })
        .collect();
    SessionModeState::new(current.as_str().to_string(), modes)
}

impl Shared {
    fn session(
        &self,
        id: &str,
    ) -> Result<(Arc<tokio::sync::Mutex<LiveSession>>, TurnCancel), Error> {
        let sessions = self
            .sessions
            .lock()
            .map_err(|_| internal("session table poisoned"))?;
        let s = sessions
            .get(id)
            .ok_or_else(|| invalid(format!("no session `{id}` on this connection")))?;
        Ok((s.agent.clone(), s.cancel.clone()))
    }

    /// Opens a North agent for the editor and registers it.
    fn open(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: &Path,
        resume: Option<&str>,
        servers: &[McpServer],
    ) -> Result<(String, PermissionMode, Vec<SessionUpdate>), Error> {
        if !cwd.is_absolute() {
            return Err(invalid("cwd must be an absolute path"));
        }
        let cell = Arc::new(OnceLock::new());
        let cancel: TurnCancel = Arc::new(Mutex::new(CancellationToken::new()));
        let approver = Arc::new(AcpApprover {
            cx: cx.clone(),
            session: cell.clone(),
            root: cwd.to_path_buf(),
            cancel: cancel.clone(),
        });
        let forms = self
            .editor_forms
            .load(std::sync::atomic::Ordering::Relaxed)
            .then(|| EditorForms {
                cx: cx.clone(),
                session: cell.clone(),
            });
        let setup = SessionSetup {
            servers: editor_servers(servers),
            forms,
        };
        let EditorSession {
            sessions: project_sessions,
            live: mut agent,
        } = self
            .runtime
            .open(cwd, resume, approver, setup)
            .map_err(|e| internal(e.0))?;
        let id = agent.session_id().to_string();
        let _ = cell.set(id.clone());
        if self
            .editor_writes
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            agent.set_file_writer(Arc::new(crate::approver::EditorFiles {
                cx: cx.clone(),
                session: id.clone(),
            }));
        }
        let mode = agent.mode();
        let history = replay(agent.messages(), &agent.all_tools());
        let replaced = self
            .sessions
            .lock()
            .map_err(|_| internal("session table poisoned"))?
            .insert(
                id.clone(),
                Session {
                    agent: Arc::new(tokio::sync::Mutex::new(agent)),
                    sessions: Arc::new(project_sessions),
                    cancel,
                },
            );
        // Loading a session that is open ends the old one first.
        if let Some(old) = replaced {
            tokio::spawn(end(old));
        }
        Ok((id, mode, history))
    }

    /// Ends every open session (the editor went away): turns cancelled,
    /// background jobs killed, SessionEnd hooks run.
    async fn end_all(&self) {
        let sessions: Vec<Session> = match self.sessions.lock() {
            Ok(mut map) => map.drain().map(|(_, s)| s).collect(),
            Err(_) => Vec::new(),
        };
        for session in sessions {
            end(session).await;
        }
    }
}

/// Ends one session: its turn is cancelled, then the session closes the
/// ordinary way and its project's MCP servers stop.
async fn end(session: Session) {
    if let Ok(cancel) = session.cancel.lock() {
        cancel.cancel();
    }
    let mut live = session.agent.lock().await;
    session
        .sessions
        .close(&mut live, north_agent::SessionEndReason::Exit, &|_| {})
        .await;
}

/// A saved conversation as updates, as `session/load` replays it; each
/// call described by its own tool.
fn replay(
    messages: &[north_protocol::Message],
    tools: &north_tools::Registry,
) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    let mut send = |u: SessionUpdate| updates.push(u);
    for m in messages {
        for block in &m.content {
            match (m.role, block) {
                (Role::User, NorthBlock::Text { text }) => {
                    send(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (Role::Assistant, NorthBlock::Text { text }) => {
                    send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                        text_block(text),
                    )));
                }
                (_, NorthBlock::ToolCall(call)) => {
                    let (kind, line) = tools.describe(&call.name, &call.arguments);
                    send(SessionUpdate::ToolCall(
                        ToolCall::new(call.id.clone(), line)
                            .kind(acp_kind(kind))
                            .status(ToolCallStatus::Completed),
                    ));
                }
                _ => {}
            }
        }
    }
    updates
}

/// The prompt's text: text blocks as they are, links and resources by URI.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut out = Vec::new();
    for b in blocks {
        match b {
            ContentBlock::Text(t) => out.push(t.text.clone()),
            ContentBlock::ResourceLink(l) => out.push(format!("@{}", l.uri)),
            _ => {}
        }
    }
    out.join("\n")
}

/// What North can do, told to the editor; what the editor can do (write
/// its buffers, show forms), remembered.
fn initialize(
    req: &InitializeRequest,
    writes: &std::sync::atomic::AtomicBool,
    forms: &std::sync::atomic::AtomicBool,
) -> InitializeResponse {
    let version = req.protocol_version.min(ProtocolVersion::V1);
    // Accepted edits then go to the editor's buffers.
    writes.store(
        req.client_capabilities.fs.write_text_file,
        std::sync::atomic::Ordering::Relaxed,
    );
    // Servers' forms go to an editor that shows them.
    forms.store(
        req.client_capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some()),
        std::sync::atomic::Ordering::Relaxed,
    );
    InitializeResponse::new(version)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .agent_info(Implementation::new("north", env!("CARGO_PKG_VERSION")))
}

/// Runs one prompt's turn, its events sent to the editor as session
/// updates; `session/cancel` reaches it through `cancel`.
async fn turn(
    agent: &tokio::sync::Mutex<LiveSession>,
    cancel: &TurnCancel,
    input: &str,
    id: String,
    events: ConnectionTo<Client>,
) -> TurnEnd {
    let mut agent = agent.lock().await;
    let token = CancellationToken::new();
    if let Ok(mut c) = cancel.lock() {
        *c = token.clone();
    }
    let emit = move |e: Event| {
        if let Some(u) = update_for(&e) {
            let _ = events.send_notification(SessionNotification::new(id.clone(), u));
        }
    };
    agent.run_turn(input, &emit, &token).await
}

/// How a turn's end reads in ACP.
fn stop_reason(end: TurnEnd) -> Result<StopReason, Error> {
    match end {
        TurnEnd::Done => Ok(StopReason::EndTurn),
        TurnEnd::StepLimit => Ok(StopReason::MaxTurnRequests),
        TurnEnd::Interrupted => Ok(StopReason::Cancelled),
        TurnEnd::ProviderFailed(m) | TurnEnd::PromptFailed(m) => Err(internal(m)),
    }
}

/// `session/set_mode`: between turns only (a running turn holds the
/// agent, and this never waits for it); the editor hears the new mode.
fn set_mode(
    shared: &Shared,
    req: &SetSessionModeRequest,
    cx: &ConnectionTo<Client>,
) -> Result<SetSessionModeResponse, Error> {
    let id = req.session_id.to_string();
    let mode: PermissionMode = req.mode_id.to_string().parse().map_err(invalid)?;
    let (agent, _) = shared.session(&id)?;
    let Ok(mut agent) = agent.try_lock() else {
        return Err(invalid(
            "the mode changes between turns; wait for this one to end",
        ));
    };
    agent.set_mode(mode).map_err(invalid)?;
    let _ = cx.send_notification(SessionNotification::new(
        id,
        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str().to_string())),
    ));
    Ok(SetSessionModeResponse::new())
}

/// `session/load`: the session reopened, its history replayed to the
/// editor as updates.
fn load(
    shared: &Shared,
    req: &LoadSessionRequest,
    cx: &ConnectionTo<Client>,
) -> Result<LoadSessionResponse, Error> {
    let id = req.session_id.to_string();
    let (id, mode, history) = shared.open(cx, &req.cwd, Some(&id), &req.mcp_servers)?;
    for update in history {
        let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
    }
    Ok(LoadSessionResponse::new().modes(mode_state(mode)))
}

/// `session/cancel`: the session's running turn stops.
fn cancel_turn(shared: &Shared, id: &str) {
    if let Ok((_, cancel)) = shared.session(id)
        && let Ok(c) = cancel.lock()
    {
        c.cancel();
    }
}

/// Serves one editor connection on stdin/stdout until it closes.
pub async fn serve(runtime: Arc<AcpRuntime>) -> Result<(), Error> {
    serve_on(runtime, Stdio::new()).await
}

/// Serves one editor connection on `transport`.
pub async fn serve_on(
    runtime: Arc<AcpRuntime>,
    transport: impl ConnectTo<AcpRole> + 'static,
) -> Result<(), Error> {
    let shared = Shared {
        runtime,
        sessions: Arc::new(Mutex::new(HashMap::new())),
        editor_writes: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        editor_forms: Arc::new(std::sync::atomic::AtomicBool::new(false)),
    };
    let writes = shared.editor_writes.clone();
    let forms = shared.editor_forms.clone();
    let ended = shared.clone();
    let [s_new, s_load, s_prompt, s_cancel, s_mode] = std::array::from_fn(|_| shared.clone());
    let served = AcpRole
        .v1()
        .name("north")
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| {
                responder.respond(initialize(&req, &writes, &forms))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, cx: ConnectionTo<Client>| match s_new
                .open(&cx, &req.cwd, None, &req.mcp_servers)
            {
                Ok((id, mode, _)) => {
                    responder.respond(NewSessionResponse::new(id).modes(mode_state(mode)))
                }
                Err(e) => responder.respond_with_error(e),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx: ConnectionTo<Client>| match load(
                &s_load, &req, &cx,
            ) {
                Ok(loaded) => responder.respond(loaded),
                Err(e) => responder.respond_with_error(e),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let id = req.session_id.to_string();
                let (agent, cancel) = match s_prompt.session(&id) {
                    Ok(s) => s,
                    Err(e) => return responder.respond_with_error(e),
                };
                let input = prompt_text(&req.prompt);
                let events = cx.clone();
                // The turn runs outside the dispatch loop, which must stay
                // free for permission answers and `session/cancel`.
                cx.spawn(async move {
                    match stop_reason(turn(&agent, &cancel, &input, id, events).await) {
                        Ok(reason) => responder.respond(PromptResponse::new(reason)),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                cancel_turn(&s_cancel, &n.session_id.to_string());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest, responder, cx: ConnectionTo<Client>| {
                match set_mode(&s_mode, &req, &cx) {
                    Ok(done) => responder.respond(done),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await;
    // The editor went away: every session it opened ends here.
    ended.end_all().await;
    served
}
