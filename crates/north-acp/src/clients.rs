//! The clients attached to one served session: every event goes to each
//! of them, a permission question goes to all and the first answer wins,
//! and a client that attaches later is asked what is still open.

use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::Client as AcpClient;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    RequestPermissionOutcome, RequestPermissionRequest, SessionNotification, SessionUpdate,
};
use north_protocol::{ApprovalDecision, Event};
use tokio::sync::oneshot;

use crate::ext::{NorthEvent, PermissionAnswered, PermissionRefused};
use crate::updates::update_for;

/// One connection attached to a session.
#[derive(Clone)]
pub(crate) struct Attached {
    /// The connection's number in this process.
    pub id: u64,
    pub cx: ConnectionTo<AcpClient>,
    /// The client asked for North's own events (`_north/event`) instead of
    /// `session/update`s at `initialize`.
    pub north_events: bool,
    /// The client writes accepted edits into its buffers.
    pub writes: bool,
    /// What is sent and not yet written to it (a socket client).
    pub backlog: Option<Arc<Backlog>>,
}

impl Attached {
    /// Sends `message` unless the client has fallen too far behind (it is
    /// then being dropped).
    fn send<N: agent_client_protocol::JsonRpcNotification>(&self, message: N) {
        if let Some(b) = &self.backlog
            && !b.queued()
        {
            return;
        }
        let _ = self.cx.send_notification(message);
    }
}

/// How far a socket client is behind: messages the hub sent it that its
/// connection has not written yet. Past the limit the connection is
/// dropped, so a client that stops reading never holds memory without
/// bound, and never holds up the session (sending never waits).
#[derive(Debug)]
pub struct Backlog {
    pending: std::sync::atomic::AtomicI64,
    limit: i64,
    over: tokio_util::sync::CancellationToken,
}

impl Backlog {
    /// A backlog of at most `limit` messages.
    pub fn new(limit: usize) -> Backlog {
        Backlog {
            pending: std::sync::atomic::AtomicI64::new(0),
            limit: i64::try_from(limit).unwrap_or(i64::MAX),
            over: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// One more message for the client; false once it is too far behind.
    pub(crate) fn queued(&self) -> bool {
        if self.over.is_cancelled() {
            return false;
        }
        let n = self
            .pending
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        if n > self.limit {
            tracing::warn!(
                limit = self.limit,
                "a client stopped reading; it is dropped"
            );
            self.over.cancel();
            return false;
        }
        true
    }

    /// One line written to the client. Lines the hub did not count
    /// (answers, a replayed history) never make room for later ones.
    pub fn written(&self) {
        let _ = self.pending.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| Some((n - 1).max(0)),
        );
    }

    /// Cancelled when the client is dropped.
    pub fn dropped(&self) -> tokio_util::sync::CancellationToken {
        self.over.clone()
    }
}

/// A permission question waiting for its first answer.
pub(crate) struct Pending {
    pub ask: RequestPermissionRequest,
    /// Each option's id and the decision it means.
    pub options: Vec<(String, ApprovalDecision)>,
    pub refusal: ApprovalDecision,
    /// Taken by the first answer.
    answer: Mutex<Option<oneshot::Sender<(u64, ApprovalDecision)>>>,
}

/// Why a client could not attach.
#[derive(Debug, thiserror::Error)]
#[error("session `{session}` already has {max} clients attached (the server's limit)")]
pub(crate) struct Full {
    pub session: String,
    pub max: usize,
}

/// The clients of one session.
pub(crate) struct Clients {
    /// The session id, known once the agent exists.
    pub session: OnceLock<String>,
    list: Mutex<Vec<Attached>>,
    pending: Mutex<Vec<Arc<Pending>>>,
    max: usize,
}

impl Clients {
    pub(crate) fn new(max: usize) -> Clients {
        Clients {
            session: OnceLock::new(),
            list: Mutex::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
            max,
        }
    }

    fn id(&self) -> String {
        self.session.get().cloned().unwrap_or_default()
    }

    /// The attached clients, now.
    pub(crate) fn attached(&self) -> Vec<Attached> {
        self.list.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Attaches a client (again: the same connection is attached once) and
    /// asks it the questions still open.
    pub(crate) fn attach(self: &Arc<Self>, client: Attached) -> Result<(), Full> {
        {
            let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
            if list.iter().any(|c| c.id == client.id) {
                return Ok(());
            }
            if list.len() >= self.max {
                return Err(Full {
                    session: self.id(),
                    max: self.max,
                });
            }
            list.push(client.clone());
        }
        let open: Vec<Arc<Pending>> = self.pending.lock().map(|p| p.clone()).unwrap_or_default();
        for pending in open {
            self.ask_one(&client, pending);
        }
        Ok(())
    }

    /// Detaches connection `id`; how many clients are left.
    pub(crate) fn detach(&self, id: u64) -> usize {
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|c| c.id != id);
        list.len()
    }

    /// An event of the session, to every client in the form it asked for.
    pub(crate) fn event(&self, event: &Event) {
        let update = update_for(event);
        let id = self.id();
        for c in self.attached() {
            if c.north_events {
                c.send(NorthEvent {
                    session_id: id.clone(),
                    event: event.clone(),
                });
            } else if let Some(u) = &update {
                c.send(SessionNotification::new(id.clone(), u.clone()));
            }
        }
    }

    /// An update for every client.
    pub(crate) fn update_all(&self, update: &SessionUpdate) {
        let id = self.id();
        for c in self.attached() {
            c.send(SessionNotification::new(id.clone(), update.clone()));
        }
    }

    /// An update for the clients other than `except` (what that one sent).
    pub(crate) fn update_others(&self, update: &SessionUpdate, except: u64) {
        let id = self.id();
        for c in self.attached().into_iter().filter(|c| c.id != except) {
            c.send(SessionNotification::new(id.clone(), update.clone()));
        }
    }

    /// Asks every attached client (and whoever attaches before it is
    /// answered); the first answer is the decision, with the number of the
    /// client that gave it.
    pub(crate) fn ask(
        self: &Arc<Self>,
        ask: RequestPermissionRequest,
        options: Vec<(String, ApprovalDecision)>,
        refusal: ApprovalDecision,
    ) -> (Arc<Pending>, oneshot::Receiver<(u64, ApprovalDecision)>) {
        let (tx, rx) = oneshot::channel();
        let pending = Arc::new(Pending {
            ask,
            options,
            refusal,
            answer: Mutex::new(Some(tx)),
        });
        if let Ok(mut open) = self.pending.lock() {
            open.push(pending.clone());
        }
        for client in self.attached() {
            self.ask_one(&client, pending.clone());
        }
        (pending, rx)
    }

    /// The question is settled (answered, or its turn cancelled).
    pub(crate) fn settled(&self, pending: &Arc<Pending>) {
        if let Ok(mut open) = self.pending.lock() {
            open.retain(|p| !Arc::ptr_eq(p, pending));
        }
        if let Ok(mut answer) = pending.answer.lock() {
            answer.take();
        }
    }

    fn ask_one(self: &Arc<Self>, client: &Attached, pending: Arc<Pending>) {
        let clients = self.clone();
        let client = client.clone();
        // Outside the connection's dispatch loop, which must stay free to
        // receive the answer.
        tokio::spawn(async move {
            let answer = client
                .cx
                .send_request(pending.ask.clone())
                .block_task()
                .await;
            let Ok(answer) = answer else {
                // The client went away; the others (or a later one) answer.
                return;
            };
            let (option, decision) = match &answer.outcome {
                RequestPermissionOutcome::Selected(sel) => {
                    let id = sel.option_id.to_string();
                    let decision = pending
                        .options
                        .iter()
                        .find(|(o, _)| *o == id)
                        .map_or(pending.refusal, |(_, d)| *d);
                    (Some(id), decision)
                }
                _ => (None, pending.refusal),
            };
            let first = pending
                .answer
                .lock()
                .ok()
                .and_then(|mut a| a.take())
                .map(|tx| tx.send((client.id, decision)).is_ok())
                .unwrap_or(false);
            clients.answered(&client, &pending, first, option);
        });
    }

    /// Tells the others that `by` answered, or `by` that it was too late.
    fn answered(&self, by: &Attached, pending: &Pending, first: bool, option: Option<String>) {
        let session = self.id();
        let call = pending.ask.tool_call.tool_call_id.to_string();
        if first {
            for c in self.attached().into_iter().filter(|c| c.id != by.id) {
                c.send(PermissionAnswered {
                    session_id: session.clone(),
                    tool_call_id: call.clone(),
                    option_id: option.clone(),
                });
            }
        } else {
            by.send(PermissionRefused {
                session_id: session,
                tool_call_id: call,
                reason: "already answered: another client answered this question first".into(),
            });
        }
    }
}
