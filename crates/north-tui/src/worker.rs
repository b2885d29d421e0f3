//! The agent's side of the interactive loop: one task that owns the
//! agent and runs what the UI asks (turns, `!` commands, `/resume`,
//! `/undo`, `/compact`, `/model`, `/diff`, mode changes) one at a time,
//! sending events and answers back.

use north_agent::TurnEnd;
use north_runtime::LiveSession;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approver::UiMsg;

/// Where `/new`, `/resume` and `/model NAME` open what they open: the
/// project's sessions in North's runtime, with the approver and redactor
/// every session of this terminal uses.
pub struct SessionSource {
    /// The project's sessions.
    pub sessions: std::sync::Arc<north_runtime::Sessions>,
    /// Who answers approvals (this UI).
    pub approver: std::sync::Arc<dyn north_agent::Approver>,
    /// What is scrubbed from logs and transcripts.
    pub redactor: north_agent::redact::Redactor,
}

impl SessionSource {
    /// Opens another session in `mode` (the mode is the user's choice, not
    /// the session's): `Some(id)` for `/resume`, `None` for a new one.
    fn open(
        &self,
        id: Option<&str>,
        mode: north_protocol::PermissionMode,
    ) -> Result<LiveSession, north_runtime::RuntimeError> {
        self.sessions.open(north_runtime::SessionSpec {
            choice: match id {
                Some(id) => north_runtime::SessionChoice::Resume(id.to_string()),
                None => north_runtime::SessionChoice::New,
            },
            approver: self.approver.clone(),
            redactor: self.redactor.clone(),
            mode: Some(mode),
        })
    }
}

/// What the UI asks of the session's side, one at a time. Each is
/// answered with [`UiMsg`]s: a turn-like one (`Turn`, `Shell`, `Compact`)
/// always ends with [`UiMsg::TurnDone`].
pub enum WorkerCmd {
    /// A message, the image files pasted with it, its cancel token.
    Turn(String, Vec<std::path::PathBuf>, CancellationToken),
    /// `!command`, run by the user.
    Shell(String, CancellationToken),
    /// `/resume ID`.
    Resume(String),
    /// `/new`.
    New,
    /// `/undo`, `/rewind`.
    Rewind(crate::rewind::RewindRequest),
    /// The turns for the `/rewind` picker.
    ListTurns,
    /// Shift+Tab, `/mode`.
    SetMode(north_protocol::PermissionMode),
    /// `/compact [focus]`.
    Compact(Option<String>, CancellationToken),
    /// `/model NAME`.
    SwitchModel(String),
    /// `/diff`.
    Diff,
    /// The user leaves: `SessionEnd` hooks run, then the worker stops.
    End,
    /// `/ps [kill ID]`.
    Ps(Option<String>),
    /// `/rename NAME`.
    Rename(String),
    /// `/worktree`: North's worktrees of this repository.
    Worktrees,
    /// `/worktree merge NAME`: one's changes, reviewed into this tree.
    MergeWorktree(String),
}

/// The rows of `/diff`'s answer.
fn diff_lines(diff: &north_agent::SessionDiff) -> Vec<ratatui::text::Line<'static>> {
    use ratatui::text::{Line, Span};
    let mut lines = crate::diff::render(&crate::diff::parse_unified(&diff.diff), 120);
    for path in &diff.not_shown {
        lines.push(Line::from(Span::styled(
            format!("{path} (changed; binary, large or a link: not shown)"),
            crate::style::dim(),
        )));
    }
    lines
}

/// `/ps`: each background command with its state and last line.
fn ps_info(jobs: &[north_agent::JobSummary], killed: Option<&str>) -> UiMsg {
    use north_agent::JobState;
    use ratatui::text::{Line, Span};
    let lines = jobs
        .iter()
        .map(|j| {
            let state = match j.state {
                JobState::Running => "running".to_string(),
                JobState::Exited(Some(c)) => format!("exited {c}"),
                JobState::Exited(None) => "ended by a signal".to_string(),
                JobState::Killed => "killed".to_string(),
            };
            Line::from(vec![
                Span::styled(format!("{} ", j.id), crate::style::code()),
                Span::raw(format!("{state} · `{}`", j.command)),
                Span::styled(format!("  {}", j.last_line), crate::style::dim()),
            ])
        })
        .collect();
    let running = jobs.iter().filter(|j| j.state == JobState::Running).count();
    UiMsg::Info {
        title: match killed {
            Some(id) => format!("Background · {id} killed · {running} running"),
            None if jobs.is_empty() => {
                "Background · none (the model starts one with shell_run background: true)".into()
            }
            None => format!("Background · {running} running (/ps kill ID stops one)"),
        },
        lines,
    }
}

/// A session another North process serves (`north --attach`): the UI's
/// commands go to it, and what it says comes back as [`UiMsg`]s.
pub trait RemoteWorker: Send {
    /// Serves the UI's commands until [`WorkerCmd::End`] or the UI goes.
    fn serve(
        self: Box<Self>,
        cmds: mpsc::UnboundedReceiver<WorkerCmd>,
        tx: mpsc::UnboundedSender<UiMsg>,
    ) -> futures::future::BoxFuture<'static, ()>;
}

pub(crate) async fn worker(
    mut agent: LiveSession,
    source: SessionSource,
    mut cmds: mpsc::UnboundedReceiver<WorkerCmd>,
    tx: mpsc::UnboundedSender<UiMsg>,
) {
    while let Some(cmd) = cmds.recv().await {
        let counts_jobs = matches!(cmd, WorkerCmd::Turn(..) | WorkerCmd::Ps(_));
        match cmd {
            WorkerCmd::Turn(input, images, cancel) => {
                turn(&mut agent, &input, images, &cancel, &tx).await;
            }
            WorkerCmd::Shell(command, cancel) => {
                let end = agent
                    .run_user_command(&command, &emitter(&tx), &cancel)
                    .await;
                let _ = tx.send(UiMsg::TurnDone(end));
            }
            WorkerCmd::Rewind(req) => {
                let _ = tx.send(crate::rewind::run(&mut agent, req));
            }
            WorkerCmd::SetMode(mode) => {
                let set = agent.set_mode(mode).map(|()| UiMsg::ModeSet(mode));
                let _ = tx.send(set.unwrap_or_else(|e| UiMsg::Failed(e.to_string())));
            }
            WorkerCmd::ListTurns => {
                let _ = tx.send(crate::rewind::list(&agent));
            }
            WorkerCmd::Compact(focus, cancel) => {
                let end = match agent
                    .compact(focus.as_deref(), &emitter(&tx), &cancel)
                    .await
                {
                    Ok(_) => TurnEnd::Done,
                    Err(end) => end,
                };
                let _ = tx.send(UiMsg::TurnDone(end));
            }
            WorkerCmd::SwitchModel(name) => {
                let _ = tx.send(switch_model(&mut agent, &source, &name, &tx));
            }
            WorkerCmd::Diff => {
                let _ = tx.send(diff(&agent).await);
            }
            WorkerCmd::Rename(name) => {
                let _ = tx.send(rename(&mut agent, &name));
            }
            WorkerCmd::Ps(kill) => {
                let _ = tx.send(ps(&mut agent, kill.as_deref()));
            }
            WorkerCmd::Worktrees => {
                let _ = tx.send(crate::worktrees::list(&source.sessions.project().root));
            }
            WorkerCmd::MergeWorktree(name) => {
                let root = source.sessions.project().root.clone();
                let said = crate::worktrees::merge(&mut agent, &root, &name, &emitter(&tx)).await;
                let _ = tx.send(said);
                let _ = tx.send(UiMsg::TurnDone(TurnEnd::Done));
            }
            WorkerCmd::End => {
                agent
                    .close(north_agent::SessionEndReason::Exit, &|_| {})
                    .await;
                break;
            }
            WorkerCmd::New => switch(&mut agent, &source, None, &tx).await,
            WorkerCmd::Resume(id) => switch(&mut agent, &source, Some(&id), &tx).await,
        }
        if counts_jobs {
            let _ = tx.send(UiMsg::Background(agent.background_running()));
        }
    }
}

/// `/new` (`id` None: the current session closes, as `/clear` ends it)
/// or `/resume ID`: the UI continues on the other session.
async fn switch(
    agent: &mut LiveSession,
    source: &SessionSource,
    id: Option<&str>,
    tx: &mpsc::UnboundedSender<UiMsg>,
) {
    let Some(next) = open_next(source, id, agent, tx) else {
        return;
    };
    if id.is_none() {
        agent
            .close(north_agent::SessionEndReason::Clear, &emitter(tx))
            .await;
    }
    *agent = next;
    let session_id = agent.session_id().to_string();
    let _ = tx.send(match id {
        None => {
            agent.started_by_clear();
            UiMsg::Started { session_id }
        }
        Some(_) => UiMsg::Resumed {
            session_id,
            messages: agent.messages().to_vec(),
            tools: agent.describer(),
            usage: agent.total_usage(),
        },
    });
}

/// `/ps` (and `/ps kill ID`): the background commands.
fn ps(agent: &mut LiveSession, kill: Option<&str>) -> UiMsg {
    if let Some(id) = kill
        && !agent.kill_background(id)
    {
        return UiMsg::Failed(format!("no background command `{id}`"));
    }
    ps_info(&agent.background_jobs(), kill)
}

/// Opens the session `/new` (`id` None) or `/resume ID` asks for, in the
/// current mode; a failure is said in the UI.
fn open_next(
    source: &SessionSource,
    id: Option<&str>,
    agent: &LiveSession,
    tx: &mpsc::UnboundedSender<UiMsg>,
) -> Option<LiveSession> {
    match source.open(id, agent.mode()) {
        Ok(next) => Some(next),
        Err(e) => {
            let _ = tx.send(UiMsg::Failed(match id {
                None => format!("cannot start a new conversation: {e}"),
                Some(id) => format!("cannot resume {id}: {e}"),
            }));
            None
        }
    }
}

/// Agent events, sent on to the UI.
fn emitter(tx: &mpsc::UnboundedSender<UiMsg>) -> impl Fn(north_protocol::Event) + Send + Sync {
    let events = tx.clone();
    move |e| {
        let _ = events.send(UiMsg::Event(e));
    }
}

/// One turn: the images attached first, retries shown in the status line
/// while North waits.
async fn turn(
    agent: &mut LiveSession,
    input: &str,
    images: Vec<std::path::PathBuf>,
    cancel: &tokio_util::sync::CancellationToken,
    tx: &mpsc::UnboundedSender<UiMsg>,
) {
    for path in images {
        if let Err(e) = agent.attach_image_file(&path) {
            let _ = tx.send(UiMsg::Failed(format!(
                "{} not attached: {e}",
                path.display()
            )));
        }
    }
    let retries = tx.clone();
    let observer: north_llm::RetryObserver = std::sync::Arc::new(move |n| {
        let _ = retries.send(UiMsg::Retrying(n.clone()));
    });
    let emit = emitter(tx);
    let end = north_llm::observe_retries(observer, agent.run_turn(input, &emit, cancel)).await;
    let _ = tx.send(UiMsg::TurnDone(end));
}

/// `/model NAME`: the session goes on with another model.
fn switch_model(
    agent: &mut LiveSession,
    source: &SessionSource,
    name: &str,
    tx: &mpsc::UnboundedSender<UiMsg>,
) -> UiMsg {
    match source.sessions.switch_model(name) {
        Ok(switch) => {
            let context_window = switch.context_budget;
            agent.switch_model(switch, &emitter(tx));
            let model = agent.model();
            UiMsg::ModelSet {
                provider: model.provider,
                model: model.model,
                context_window,
            }
        }
        Err(e) => UiMsg::Failed(format!("cannot switch to {name}: {e}")),
    }
}

/// `/diff`: what this session changed.
async fn diff(agent: &LiveSession) -> UiMsg {
    match agent.session_diff().await {
        Ok(d) if d.paths.is_empty() => UiMsg::Info {
            title: "Diff · this session changed no file".into(),
            lines: Vec::new(),
        },
        Ok(d) => UiMsg::Info {
            title: format!(
                "Diff · this session changed {} file{} (/undo or /rewind take changes back)",
                d.paths.len(),
                if d.paths.len() == 1 { "" } else { "s" }
            ),
            lines: diff_lines(&d),
        },
        Err(e) => UiMsg::Failed(e.to_string()),
    }
}

/// `/rename NAME` (an empty name removes it).
fn rename(agent: &mut LiveSession, name: &str) -> UiMsg {
    match agent.rename_session(name) {
        Ok(Some(name)) => UiMsg::Info {
            title: format!("Session named `{name}` · north --resume '{name}' continues it"),
            lines: Vec::new(),
        },
        Ok(None) => UiMsg::Info {
            title: "Session name removed".into(),
            lines: Vec::new(),
        },
        Err(e) => UiMsg::Failed(format!("cannot rename the session: {e}")),
    }
}
