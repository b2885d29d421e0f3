//! What one connection asks of the hub: open, load and attach to
//! sessions, prompt, cancel, change modes, and North's session extensions.
//! Each operation answers with an ACP response or error; the connection
//! (`server`) only routes messages here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentChunk, CurrentModeUpdate, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, SessionNotification, SessionUpdate, SetSessionModeRequest,
    SetSessionModeResponse, StopReason,
};
use agent_client_protocol::{Client, Error};
use north_agent::TurnEnd;
use north_protocol::PermissionMode;
use north_runtime::SessionChoice;

use crate::clients::{Attached, Backlog};
use crate::ext;
use crate::history::{mode_state, text_block};
use crate::hub::{Hub, Opener, Served};
use crate::setup::EditorForms;

pub(crate) fn invalid(message: impl ToString) -> Error {
    Error::invalid_params().data(message.to_string())
}

pub(crate) fn internal(message: impl ToString) -> Error {
    Error::internal_error().data(message.to_string())
}

/// One connection: its number and what its client said it can do at
/// `initialize`.
#[derive(Clone)]
pub(crate) struct Conn {
    pub hub: Arc<Hub>,
    pub id: u64,
    /// Offered `fs/write_text_file`.
    pub writes: Arc<AtomicBool>,
    /// Shows forms (`elicitation.form`).
    pub forms: Arc<AtomicBool>,
    /// Asked for North's own events (`_meta.north.events`).
    pub north_events: Arc<AtomicBool>,
    /// How far behind a socket client is.
    pub backlog: Option<Arc<Backlog>>,
}

impl Conn {
    pub(crate) fn new(hub: Arc<Hub>, backlog: Option<Arc<Backlog>>) -> Conn {
        Conn {
            id: hub.client_id(),
            hub,
            writes: Arc::default(),
            forms: Arc::default(),
            north_events: Arc::default(),
            backlog,
        }
    }

    fn attached(&self, cx: &ConnectionTo<Client>) -> Attached {
        Attached {
            id: self.id,
            cx: cx.clone(),
            north_events: self.north_events.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            backlog: self.backlog.clone(),
        }
    }

    fn opener(&self, cx: &ConnectionTo<Client>) -> Opener {
        Opener {
            client: self.attached(cx),
            forms: self.forms.load(Ordering::Relaxed).then(|| EditorForms {
                cx: cx.clone(),
                session: Arc::new(OnceLock::new()),
            }),
        }
    }

    /// A session this connection is attached to.
    fn mine(&self, id: &str) -> Result<Arc<Served>, Error> {
        let served = self.hub.get(id)?;
        if served.clients.attached().iter().any(|c| c.id == self.id) {
            Ok(served)
        } else {
            Err(invalid(format!(
                "this connection is not attached to session `{id}`: attach first (`session/load` or `_north/session/attach`)"
            )))
        }
    }

    /// `session/new`.
    pub(crate) fn new_session(
        &self,
        cx: &ConnectionTo<Client>,
        req: &NewSessionRequest,
    ) -> Result<NewSessionResponse, Error> {
        let (id, served, _) = self.hub.open(
            self.opener(cx),
            &req.cwd,
            SessionChoice::New,
            &req.mcp_servers,
        )?;
        Ok(NewSessionResponse::new(id)
            .modes(mode_state(current_mode(&served)))
            .meta(north_meta(&served)))
    }

    /// `session/load`: the saved session opened (or the open one
    /// attached), its history replayed to this client.
    pub(crate) fn load(
        &self,
        cx: &ConnectionTo<Client>,
        req: &LoadSessionRequest,
    ) -> Result<LoadSessionResponse, Error> {
        let id = req.session_id.to_string();
        let (id, served, _) = self.hub.open(
            self.opener(cx),
            &req.cwd,
            SessionChoice::Resume(id),
            &req.mcp_servers,
        )?;
        replay_to(cx, &id, &served);
        Ok(LoadSessionResponse::new()
            .modes(mode_state(current_mode(&served)))
            .meta(north_meta(&served)))
    }

    /// `_north/session/attach`.
    pub(crate) fn attach(
        &self,
        cx: &ConnectionTo<Client>,
        req: &ext::Attach,
    ) -> Result<ext::Attached, Error> {
        let served = self.hub.get(&req.session_id)?;
        self.hub.attach(&served, self.attached(cx))?;
        replay_to(cx, &req.session_id, &served);
        Ok(ext::Attached {
            session_id: req.session_id.clone(),
            cwd: served.cwd.clone(),
            mode: current_mode(&served).as_str().to_string(),
            running: served.running.load(Ordering::Relaxed),
        })
    }

    /// `session/prompt`: the others see the prompt; the turn's events go
    /// to every client. Queued behind a running turn of the session.
    pub(crate) fn prompt(&self, id: &str, input: &str) -> Result<Arc<Served>, Error> {
        let served = self.mine(id)?;
        served.clients.update_others(
            &SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(input))),
            self.id,
        );
        Ok(served)
    }

    /// `session/cancel`.
    pub(crate) fn cancel(&self, id: &str) {
        if let Ok(served) = self.mine(id) {
            served.cancel_turn();
        }
    }

    /// `session/set_mode`: between turns only (a running turn holds the
    /// agent, and this never waits for it); every client hears the new mode.
    pub(crate) fn set_mode(
        &self,
        req: &SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let id = req.session_id.to_string();
        let mode: PermissionMode = req.mode_id.to_string().parse().map_err(invalid)?;
        let served = self.mine(&id)?;
        let Ok(mut agent) = served.agent.try_lock() else {
            return Err(invalid(
                "the mode changes between turns; wait for this one to end",
            ));
        };
        agent.set_mode(mode).map_err(invalid)?;
        if let Ok(mut m) = served.mode.lock() {
            *m = mode;
        }
        let update =
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str().to_string()));
        served.clients.update_all(&update);
        Ok(SetSessionModeResponse::new())
    }

    /// `_north/session/list`.
    pub(crate) fn list(&self) -> ext::SessionList {
        let sessions = self
            .hub
            .all()
            .into_iter()
            .map(|(id, s)| ext::SessionInfo {
                session_id: id,
                cwd: s.cwd.clone(),
                name: s.name.lock().ok().and_then(|n| n.clone()),
                clients: s.clients.attached().len(),
                running: s.running.load(Ordering::Relaxed),
            })
            .collect();
        ext::SessionList { sessions }
    }

    /// `_north/session/history`.
    pub(crate) fn history(&self, req: &ext::History) -> Result<ext::HistoryAnswer, Error> {
        let served = self.mine(&req.session_id)?;
        let (messages, usage) = served
            .messages
            .lock()
            .map(|m| m.clone())
            .map_err(|_| internal("history poisoned"))?;
        Ok(ext::HistoryAnswer {
            messages: messages
                .iter()
                .filter_map(|m| serde_json::to_value(m).ok())
                .collect(),
            usage,
        })
    }

    /// `_north/session/rename`.
    pub(crate) fn rename(&self, req: &ext::Rename) -> Result<ext::Renamed, Error> {
        let served = self.mine(&req.session_id)?;
        let Ok(agent) = served.agent.try_lock() else {
            return Err(invalid(
                "a session is renamed between turns; wait for this one to end",
            ));
        };
        let name = agent.rename_session(&req.name).map_err(invalid)?;
        if let Ok(mut n) = served.name.lock() {
            n.clone_from(&name);
        }
        Ok(ext::Renamed { name })
    }

    /// `_north/session/fork`: the copy is opened and this client attached.
    pub(crate) fn fork(
        &self,
        cx: &ConnectionTo<Client>,
        req: &ext::Fork,
    ) -> Result<ext::Forked, Error> {
        let served = self.mine(&req.session_id)?;
        let (id, _, _) = self.hub.open(
            self.opener(cx),
            &served.cwd,
            SessionChoice::Fork(req.session_id.clone()),
            &[],
        )?;
        Ok(ext::Forked { session_id: id })
    }

    /// `_north/session/export`: what is saved, as Markdown.
    pub(crate) fn export(&self, req: &ext::Export) -> Result<ext::Exported, Error> {
        let served = self.mine(&req.session_id)?;
        let store = north_agent::store::SessionStore::new(&served.project.project().root);
        let replayed = store
            .open(&req.session_id)
            .and_then(|s| s.transcript())
            .map_err(internal)?;
        Ok(ext::Exported {
            markdown: north_agent::store::markdown(&req.session_id, &replayed),
        })
    }

    /// `_north/session/close`.
    pub(crate) async fn close(&self, req: &ext::Close) -> Result<ext::Closed, Error> {
        self.mine(&req.session_id)?;
        self.hub.close(&req.session_id).await;
        Ok(ext::Closed {})
    }
}

/// `_meta.north` of a session's answers.
fn north_meta(served: &Served) -> serde_json::Map<String, serde_json::Value> {
    let mut meta = serde_json::Map::new();
    meta.insert(
        "north".into(),
        serde_json::to_value(served.meta()).unwrap_or_default(),
    );
    meta
}

/// The session's mode as last set.
fn current_mode(served: &Served) -> PermissionMode {
    served
        .mode
        .lock()
        .map(|m| *m)
        .unwrap_or(PermissionMode::Ask)
}

/// The session's history, to one client.
fn replay_to(cx: &ConnectionTo<Client>, id: &str, served: &Served) {
    let history = served.history.lock().map(|h| h.clone()).unwrap_or_default();
    for update in history {
        let _ = cx.send_notification(SessionNotification::new(id.to_string(), update));
    }
}

/// How a turn's end reads in ACP.
pub(crate) fn stop_reason(end: TurnEnd) -> Result<StopReason, Error> {
    match end {
        TurnEnd::Done => Ok(StopReason::EndTurn),
        TurnEnd::StepLimit => Ok(StopReason::MaxTurnRequests),
        TurnEnd::Interrupted => Ok(StopReason::Cancelled),
        TurnEnd::ProviderFailed(m) | TurnEnd::PromptFailed(m) => Err(internal(m)),
    }
}
