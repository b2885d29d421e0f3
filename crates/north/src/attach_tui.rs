//! `north --attach`: the TUI on a session of a running `north serve`. The
//! UI is the same; its commands go to the server (turns, Esc, modes,
//! `/new`, `/resume`, `/rename`), the server's events and permission
//! questions come back and render as they do for a session in this
//! process. What only a session here can do (`!cmd`, `/rewind`, `/compact`,
//! `/model`, `/diff`, `/ps`, pasted images) says so.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, LoadSessionRequest, NewSessionRequest,
    PromptRequest, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionModeState, SessionNotification, SessionUpdate,
    SetSessionModeRequest, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Lines};
use futures::future::BoxFuture;
use north_acp::ext::{
    Ask, History, NorthEvent, PermissionAnswered, PermissionRefused, Rename, SessionMeta,
};
use north_agent::TurnEnd;
use north_protocol::{ApprovalDecision, Message, PermissionMode, Usage};
use north_tui::{Prompt, PromptKind, SessionInfo, Start, UiMsg, WorkerCmd};
use tokio::sync::{mpsc, oneshot};

use crate::interactive::InteractiveArgs;

/// A session as the server opened it.
struct Opened {
    id: String,
    meta: SessionMeta,
    mode: PermissionMode,
    modes: Vec<PermissionMode>,
    history: Vec<Message>,
    usage: Usage,
}

type Commands = (
    mpsc::UnboundedReceiver<WorkerCmd>,
    mpsc::UnboundedSender<UiMsg>,
);

/// Hands the UI's command channel to the client task, which has been
/// connected since before the UI started.
struct Handover(oneshot::Sender<Commands>);

impl north_tui::RemoteWorker for Handover {
    fn serve(
        self: Box<Self>,
        cmds: mpsc::UnboundedReceiver<WorkerCmd>,
        tx: mpsc::UnboundedSender<UiMsg>,
    ) -> BoxFuture<'static, ()> {
        let _ = self.0.send((cmds, tx));
        Box::pin(async {})
    }
}

/// Runs `north --attach`.
pub fn main(args: &InteractiveArgs, address: &str) -> ExitCode {
    let redactor = north_agent::redact::Redactor::from_env();
    let log = crate::logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north --attach starting");
    let log = log.as_deref();
    let runtime = match crate::acp_cmd::tokio_runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let (_approver, inbox) = north_tui::channel();
    let (ready_tx, ready_rx) = oneshot::channel();
    let (handover_tx, handover_rx) = oneshot::channel();
    let cwd = match &args.model.path {
        Some(p) => std::fs::canonicalize(p).map_err(|e| format!("--path {}: {e}", p.display())),
        None => {
            std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))
        }
    };
    let cwd = match cwd {
        Ok(c) => c,
        Err(e) => return crate::interactive::usage_error(&e),
    };
    let client = Client {
        address: address.to_string(),
        token_file: args.token_file.clone(),
        cwd,
        resume: args.resume.clone(),
        ui: inbox.sender(),
    };
    runtime.spawn(client.run(ready_tx, handover_rx));
    let opened = match runtime.block_on(ready_rx) {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return crate::interactive::usage_error(&e),
        Err(_) => return crate::interactive::usage_error("the server connection ended"),
    };
    let config = north_config::Config::load(
        &opened.meta.root,
        north_config::global_config_path().as_deref(),
        |k| std::env::var(k).ok(),
        &north_config::Overrides::default(),
        false,
    )
    .unwrap_or_default();
    let shown = match address {
        "default" => format!("unix:{}", crate::serve_cmd::default_socket().display()),
        other => other.to_string(),
    };
    let info = session_info(&opened, &shown);
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        crate::interactive::redirect_stderr(log);
    }
    let result = runtime.block_on(north_tui::run(Start {
        info,
        backend: north_tui::Backend::Remote {
            worker: Box::new(Handover(handover_tx)),
            config: Box::new(config),
            history: opened.history,
            usage: opened.usage,
        },
        inbox,
    }));
    crate::interactive::restore_stderr();
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    let code = crate::interactive::exit_code(result);
    eprintln!(
        "north: the session stays open on the server (north --attach --resume ID returns to it)"
    );
    code
}

/// What the status line and `/status` show of a served session.
fn session_info(o: &Opened, address: &str) -> SessionInfo {
    let root = o.meta.root.clone();
    SessionInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        mode: o.mode,
        modes: o.modes.clone(),
        provider: o.meta.provider.clone(),
        model: o.meta.model.clone(),
        session_id: o.id.clone(),
        context_window: Some(o.meta.context_window),
        catalog: north_llm::catalog::lookup(&o.meta.model),
        mcp: north_tui::McpView::default(),
        mcp_auth: north_tui::McpAuth::default(),
        commands: north_runtime::custom_commands(
            &root,
            false,
            &north_plugin::Active::of_user(&Default::default()),
            &crate::interactive::builtin_commands(),
        ),
        files: crate::interactive::file_finder(root.clone()),
        trust: Some(format!(
            "attached to the North server at {address} (its settings and trust apply)"
        )),
        instructions: Vec::new(),
        global_memory: None,
        hooks: north_config::hooks::HookSet::default(),
        hooks_not_run: Vec::new(),
        provider_models: north_tui::ModelLister::default(),
        agents: Vec::new(),
        skills: Vec::new(),
        agents_not_used: Vec::new(),
        plugins: Vec::new(),
        plugin_manager: north_tui::PluginManager::default(),
        root,
    }
}

/// The client side of the connection.
struct Client {
    address: String,
    token_file: Option<PathBuf>,
    cwd: PathBuf,
    resume: Option<String>,
    /// The UI's inbox.
    ui: mpsc::UnboundedSender<UiMsg>,
}

impl Client {
    /// The server's transport, its token presented.
    async fn connect(
        &self,
    ) -> Result<(crate::attach::LineSink, crate::attach::LineStream), String> {
        let (listen, token_path) = crate::attach::target(&self.address, self.token_file.as_deref())
            .map_err(|e| e.to_string())?;
        crate::attach::server_exists(&listen).map_err(|e| e.to_string())?;
        let token = north_acp::Token::read(&token_path).map_err(|e| e.to_string())?;
        crate::attach::connect(&listen, token.secret())
            .await
            .map_err(|e| format!("{e:#}"))
    }

    /// Connects, opens the session (said on `ready`), then serves the UI's
    /// commands once they are handed over.
    async fn run(
        self,
        ready: oneshot::Sender<Result<Opened, String>>,
        handover: oneshot::Receiver<Commands>,
    ) {
        let (sink, lines) = match self.connect().await {
            Ok(c) => c,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        let live = Arc::new(AtomicBool::new(false));
        let (ui_events, ui_updates, ui_asks, ui_answered, ui_refused) = (
            self.ui.clone(),
            self.ui.clone(),
            self.ui.clone(),
            self.ui.clone(),
            self.ui.clone(),
        );
        let echo = live.clone();
        let Client { cwd, resume, .. } = self;
        let ready = std::sync::Mutex::new(Some(ready));
        let ended = agent_client_protocol::Client
            .v1()
            .on_receive_notification(
                async move |n: NorthEvent, _cx| {
                    let _ = ui_events.send(UiMsg::Event(n.event));
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    // Another client's prompt (a replayed history is not news).
                    if echo.load(Ordering::Relaxed)
                        && let SessionUpdate::UserMessageChunk(chunk) = n.update
                        && let ContentBlock::Text(t) = chunk.content
                    {
                        let _ = ui_updates.send(UiMsg::Info {
                            title: format!("Another client asks: {}", t.text),
                            lines: Vec::new(),
                        });
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_notification(
                async move |_n: PermissionAnswered, _cx| {
                    let _ = ui_answered.send(UiMsg::Info {
                        title: "Another client answered the question".into(),
                        lines: Vec::new(),
                    });
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_notification(
                async move |_n: PermissionRefused, _cx| {
                    let _ = ui_refused.send(UiMsg::Failed(
                        "another client answered first; your answer was not used".into(),
                    ));
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |req: RequestPermissionRequest, responder, _cx| {
                    let ui = ui_asks.clone();
                    // The user may take a while: the connection goes on.
                    tokio::spawn(async move {
                        let _ = responder.respond(ask_user(&ui, req).await);
                    });
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(
                Lines::new(sink, lines),
                async move |cx: ConnectionTo<Agent>| {
                    let opened = open(&cx, cwd.clone(), resume).await;
                    let id = opened.as_ref().map(|o| o.id.clone()).ok();
                    if let Some(r) = ready.lock().ok().and_then(|mut r| r.take()) {
                        let _ = r.send(opened.map_err(|e| format!("the server: {e}")));
                    }
                    let Some(id) = id else {
                        return Ok(());
                    };
                    live.store(true, Ordering::Relaxed);
                    if let Ok((cmds, tx)) = handover.await {
                        serve(&cx, cmds, tx, id, &cwd).await;
                    }
                    Ok(())
                },
            )
            .await;
        if let Err(e) = ended {
            let _ = self.ui.send(UiMsg::Failed(format!(
                "the connection to the server ended: {e}"
            )));
        }
    }
}

/// Initializes (asking for North's events) and opens or loads the session.
async fn open(
    cx: &ConnectionTo<Agent>,
    cwd: PathBuf,
    resume: Option<String>,
) -> Result<Opened, agent_client_protocol::Error> {
    let mut meta = serde_json::Map::new();
    meta.insert("north".into(), serde_json::json!({ "events": true }));
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta))
        .block_task()
        .await?;
    let (id, modes, meta) = match resume {
        Some(id) => {
            let r = cx
                .send_request(LoadSessionRequest::new(id.clone(), cwd))
                .block_task()
                .await?;
            (id, r.modes, r.meta)
        }
        None => {
            let r = cx
                .send_request(NewSessionRequest::new(cwd))
                .block_task()
                .await?;
            (r.session_id.to_string(), r.modes, r.meta)
        }
    };
    let meta: SessionMeta = meta
        .and_then(|m| m.get("north").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| {
            agent_client_protocol::Error::internal_error()
                .data("the server is not North (no _meta.north in its answer)")
        })?;
    let (mode, modes) = modes_of(modes.as_ref());
    let (history, usage) = history(cx, &id).await?;
    Ok(Opened {
        id,
        meta,
        mode,
        modes,
        history,
        usage,
    })
}

/// The session's mode and the modes it offers.
fn modes_of(state: Option<&SessionModeState>) -> (PermissionMode, Vec<PermissionMode>) {
    let Some(state) = state else {
        return (PermissionMode::Ask, PermissionMode::ALL.to_vec());
    };
    let mode = state
        .current_mode_id
        .to_string()
        .parse()
        .unwrap_or(PermissionMode::Ask);
    let modes = state
        .available_modes
        .iter()
        .filter_map(|m| m.id.to_string().parse().ok())
        .collect();
    (mode, modes)
}

/// The session's conversation so far.
async fn history(
    cx: &ConnectionTo<Agent>,
    id: &str,
) -> Result<(Vec<Message>, Usage), agent_client_protocol::Error> {
    let answer = cx
        .send_request(History {
            session_id: id.to_string(),
        })
        .block_task()
        .await?;
    let messages = answer
        .messages
        .into_iter()
        .filter_map(|m| serde_json::from_value(m).ok())
        .collect();
    Ok((messages, answer.usage))
}

/// A permission question shown as the TUI shows its own; the user's
/// decision answered with the option that means it.
async fn ask_user(
    ui: &mpsc::UnboundedSender<UiMsg>,
    req: RequestPermissionRequest,
) -> RequestPermissionResponse {
    let cancelled = || RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled);
    let north = req.meta.as_ref().and_then(|m| m.get("north"));
    let Some(ask) = north
        .and_then(|n| n.get("ask"))
        .and_then(|a| serde_json::from_value::<Ask>(a.clone()).ok())
    else {
        return cancelled();
    };
    let decisions: Vec<(String, ApprovalDecision)> = north
        .and_then(|n| n.get("decisions"))
        .and_then(|d| d.as_object())
        .map(|d| {
            d.iter()
                .filter_map(|(id, v)| Some((id.clone(), serde_json::from_value(v.clone()).ok()?)))
                .collect()
        })
        .unwrap_or_default();
    let kind = match ask {
        Ask::Shell {
            command,
            why,
            prefix,
        } => PromptKind::Shell {
            command,
            why,
            prefix,
        },
        Ask::Edit { files } => PromptKind::Edit { files },
        Ask::Capability { capability, reason } => PromptKind::Capability { capability, reason },
        Ask::Host { host, port } => PromptKind::Host { host, port },
    };
    let (reply, answer) = oneshot::channel();
    let prompt = Prompt {
        call_id: req.tool_call.tool_call_id.to_string(),
        kind,
        reply,
        feedback: Default::default(),
        review: Default::default(),
    };
    if ui.send(UiMsg::Prompt(prompt)).is_err() {
        return cancelled();
    }
    let Ok(decision) = answer.await else {
        return cancelled();
    };
    match decisions.iter().find(|(_, d)| *d == decision) {
        Some((id, _)) => RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id.clone()),
        )),
        None => cancelled(),
    }
}

/// What a served turn's end means to the UI.
fn turn_end(answer: Result<StopReason, agent_client_protocol::Error>) -> TurnEnd {
    match answer {
        Ok(StopReason::EndTurn) => TurnEnd::Done,
        Ok(StopReason::Cancelled) => TurnEnd::Interrupted,
        Ok(StopReason::MaxTurnRequests) => TurnEnd::StepLimit,
        Ok(other) => TurnEnd::ProviderFailed(format!("the turn stopped: {other:?}")),
        Err(e) => TurnEnd::ProviderFailed(e.to_string()),
    }
}

/// Serves the UI's commands on the served session, one at a time.
async fn serve(
    cx: &ConnectionTo<Agent>,
    mut cmds: mpsc::UnboundedReceiver<WorkerCmd>,
    tx: mpsc::UnboundedSender<UiMsg>,
    mut id: String,
    cwd: &Path,
) {
    while let Some(cmd) = cmds.recv().await {
        let msg = match cmd {
            WorkerCmd::Turn(input, images, cancel) => {
                if !images.is_empty() {
                    let _ = tx.send(UiMsg::Failed(
                        "pasted images are not sent to a served session; the text was".into(),
                    ));
                }
                let request = PromptRequest::new(
                    id.clone(),
                    vec![ContentBlock::Text(TextContent::new(input))],
                );
                let running = cx.send_request(request).block_task();
                tokio::pin!(running);
                let answer = tokio::select! {
                    a = &mut running => a,
                    () = cancel.cancelled() => {
                        let _ = cx.send_notification(CancelNotification::new(id.clone()));
                        running.await
                    }
                };
                UiMsg::TurnDone(turn_end(answer.map(|r| r.stop_reason)))
            }
            WorkerCmd::Shell(..) | WorkerCmd::Compact(..) => {
                UiMsg::TurnDone(TurnEnd::PromptFailed(not_here("`!` commands and /compact")))
            }
            WorkerCmd::Rewind(_) | WorkerCmd::ListTurns => {
                UiMsg::Failed(not_here("/undo and /rewind"))
            }
            WorkerCmd::SwitchModel(_) => UiMsg::Failed(not_here("/model")),
            WorkerCmd::Diff => UiMsg::Failed(not_here("/diff")),
            WorkerCmd::Ps(_) => UiMsg::Failed(not_here("/ps")),
            WorkerCmd::Worktrees => UiMsg::Failed(not_here("/worktree")),
            WorkerCmd::MergeWorktree(_) => {
                UiMsg::TurnDone(TurnEnd::PromptFailed(not_here("/worktree merge")))
            }
            WorkerCmd::SetMode(mode) => {
                let set = cx
                    .send_request(SetSessionModeRequest::new(
                        id.clone(),
                        mode.as_str().to_string(),
                    ))
                    .block_task()
                    .await;
                match set {
                    Ok(_) => UiMsg::ModeSet(mode),
                    Err(e) => UiMsg::Failed(format!("the mode did not change: {e}")),
                }
            }
            WorkerCmd::Rename(name) => rename(cx, &id, name).await,
            WorkerCmd::New | WorkerCmd::Resume(_) => {
                let resume = match &cmd {
                    WorkerCmd::Resume(r) => Some(r.clone()),
                    _ => None,
                };
                match reopen(cx, cwd, resume).await {
                    Ok((next, msg)) => {
                        id = next;
                        msg
                    }
                    Err(e) => UiMsg::Failed(format!("the server: {e}")),
                }
            }
            // Leaving: the session stays open on the server.
            WorkerCmd::End => break,
        };
        let _ = tx.send(msg);
    }
}

/// `/new` or `/resume ID` on the server.
async fn reopen(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
    resume: Option<String>,
) -> Result<(String, UiMsg), agent_client_protocol::Error> {
    let opened = open(cx, cwd.to_path_buf(), resume.clone()).await?;
    let msg = match resume {
        None => UiMsg::Started {
            session_id: opened.id.clone(),
        },
        Some(_) => UiMsg::Resumed {
            session_id: opened.id.clone(),
            messages: opened.history,
            tools: north_agent::Describer::builtin(),
            usage: opened.usage,
        },
    };
    Ok((opened.id, msg))
}

/// `/rename NAME` on the server.
async fn rename(cx: &ConnectionTo<Agent>, id: &str, name: String) -> UiMsg {
    let renamed = cx
        .send_request(Rename {
            session_id: id.to_string(),
            name,
        })
        .block_task()
        .await;
    match renamed {
        Ok(r) => UiMsg::Info {
            title: match r.name {
                Some(n) => format!("Session named `{n}` on the server"),
                None => "Session name removed".into(),
            },
            lines: Vec::new(),
        },
        Err(e) => UiMsg::Failed(format!("cannot rename the session: {e}")),
    }
}

/// What a command only a session in this process can do says.
fn not_here(what: &str) -> String {
    format!(
        "{what}: not available in a session attached to `north serve` (run North without --attach for them)"
    )
}
