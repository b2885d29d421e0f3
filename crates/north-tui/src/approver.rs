//! The approver the TUI gives the agent: each request becomes a prompt in
//! the UI, and the agent waits for the user's answer on a oneshot channel.

use futures::future::BoxFuture;
use north_agent::approval::AskReason;
use north_agent::{ApprovalRequest, Approver, TurnEnd};
use north_protocol::{ApprovalDecision, Event, Message};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use north_protocol::FileDiff;

/// What a prompt asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKind {
    /// A shell command: run once, always, or deny.
    Shell {
        /// The exact command.
        command: String,
        /// Why the policy asks beyond "no rule covers it" (a path outside the
        /// project, syntax North cannot verify).
        why: Option<String>,
        /// The prefix "always allow" would store (`cargo test`), when the
        /// policy offers one.
        prefix: Option<String>,
    },
    /// A command the OS sandbox stopped (`auto` mode): run it once
    /// outside the sandbox, or not.
    Unsandboxed {
        /// The exact command.
        command: String,
        /// What the sandbox refused, from the command's output.
        evidence: String,
    },
    /// A `plan`-mode turn ended: carry the plan out (asking as usual, or
    /// accepting edits), or keep planning. Answered in the UI, not by the agent.
    PlanReady,
    /// An edit proposal: accept or reject.
    Edit {
        /// Its files and diffs.
        files: Vec<FileDiff>,
    },
    /// A capability: grant or deny.
    Capability {
        /// E.g. `net:example.com`.
        capability: String,
        /// Why it was asked for.
        reason: String,
    },
    /// A command connects to a host no grant covers, through North's
    /// proxy: this once, this session, or not (the command is refused).
    Host {
        /// The host.
        host: String,
        /// Its port.
        port: u16,
    },
}

impl PromptKind {
    /// The answer when nobody answers (the UI closed, the turn was interrupted).
    pub fn refusal(&self) -> ApprovalDecision {
        match self {
            PromptKind::Edit { .. } => ApprovalDecision::Reject,
            _ => ApprovalDecision::Deny,
        }
    }
}

/// A request waiting for the user's decision.
#[derive(Debug)]
pub struct Prompt {
    /// The tool call (or capability request) id.
    pub call_id: String,
    /// What is asked.
    pub kind: PromptKind,
    /// Where the decision goes.
    pub reply: oneshot::Sender<ApprovalDecision>,
    /// What the user says with a refusal ("reject with feedback"), put
    /// here before the decision is sent.
    pub feedback: FeedbackSlot,
    /// An edit review's proposed contents, refused hunks and the user's
    /// own edits, put here before the decision is sent.
    pub review: ReviewSlots,
}

/// Where the UI leaves the words of a refusal for the approver.
pub type FeedbackSlot = Arc<Mutex<Option<String>>>;

/// A file as the user saved it: (path, content).
pub type SavedFile = (String, String);

/// An edit review's side of the conversation with the approver: what the
/// proposal would write (for "edit before accepting") and where the UI
/// leaves the hunks the user refused and the contents they saved.
#[derive(Debug, Clone, Default)]
pub struct ReviewSlots {
    /// Each file's proposed content: (path, content).
    pub proposed: Arc<Vec<(String, String)>>,
    /// Hunks refused while the rest was accepted.
    pub hunks: Arc<Mutex<Vec<north_protocol::HunkRef>>>,
    /// Files as the user saved them in their editor: (path, content).
    pub edited: Arc<Mutex<Vec<(String, String)>>>,
}

/// Everything the UI loop receives from the agent side.
#[derive(Debug)]
pub enum UiMsg {
    /// An agent event to render.
    Event(Event),
    /// A decision is needed.
    Prompt(Prompt),
    /// The running turn ended.
    TurnDone(TurnEnd),
    /// The session's turns, for the `/rewind` picker: (turn, prompt, note).
    Turns(Vec<(u32, String, String)>),
    /// A model request failed and is retried after a pause.
    Retrying(north_llm::RetryNotice),
    /// How many background commands run now (for the status line).
    Background(usize),
    /// What the user's status line command printed, or why it showed
    /// nothing.
    StatusLine(Result<String, String>),
    /// An MCP server asks the user to fill in a form; the answer goes back
    /// on the sender.
    Form(
        north_protocol::ElicitForm,
        oneshot::Sender<north_protocol::ElicitAnswer>,
    ),
    /// The clipboard's image saved to this file (Ctrl+V), or why not.
    ClipboardImage(Result<std::path::PathBuf, String>),
    /// A new conversation started (`/new`, `/clear`).
    Started {
        /// The new session's id.
        session_id: String,
    },
    /// Another session was opened (`/resume`).
    Resumed {
        /// The session id.
        session_id: String,
        /// Its conversation so far.
        messages: Vec<Message>,
        /// Its tools, which describe its calls and results.
        tools: north_agent::Describer,
        /// Tokens it used so far, which the status line continues from.
        usage: north_protocol::Usage,
    },
    /// Something the user asked for failed outside a turn.
    Failed(String),
    /// The permission mode changed.
    ModeSet(north_protocol::PermissionMode),
    /// The session continues on another model (`/model`).
    ModelSet {
        /// Its provider.
        provider: String,
        /// The model.
        model: String,
        /// Its context window in tokens.
        context_window: u64,
    },
    /// An answer to a command outside a turn (`/undo`, `/rewind`).
    Info {
        /// The notice's title.
        title: String,
        /// Its body.
        lines: Vec<ratatui::text::Line<'static>>,
    },
}

/// Forwards approval requests to the UI. Flags from configuration
/// (`approve_edits`, `allow_shell`) answer without asking, as configured.
#[derive(Debug, Clone)]
pub struct TuiApprover {
    tx: mpsc::UnboundedSender<UiMsg>,
    /// Accept edits without asking.
    pub approve_edits: bool,
    /// Run commands without asking.
    pub allow_shell: bool,
    /// The words of refusals, by call id, until the agent takes them.
    feedback: Arc<Mutex<HashMap<String, String>>>,
    /// Refused hunks, by call id, until the agent takes them.
    hunks: Arc<Mutex<HashMap<String, Vec<north_protocol::HunkRef>>>>,
    /// The user's own contents of edited files, by call id.
    edited: Arc<Mutex<HashMap<String, Vec<SavedFile>>>>,
}

/// The receiving end of the UI channel, plus a sender for agent events.
#[derive(Debug)]
pub struct Inbox {
    pub(crate) tx: mpsc::UnboundedSender<UiMsg>,
    pub(crate) rx: mpsc::UnboundedReceiver<UiMsg>,
}

impl Inbox {
    /// A sender for the same channel (events from the agent task).
    pub fn sender(&self) -> mpsc::UnboundedSender<UiMsg> {
        self.tx.clone()
    }

    /// Receives the next message.
    pub async fn recv(&mut self) -> Option<UiMsg> {
        self.rx.recv().await
    }

    /// Receives a message if one is waiting.
    pub fn try_recv(&mut self) -> Option<UiMsg> {
        self.rx.try_recv().ok()
    }
}

/// A new approver and the inbox its prompts (and the agent's events) arrive in.
pub fn channel() -> (TuiApprover, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        TuiApprover {
            tx: tx.clone(),
            approve_edits: false,
            allow_shell: false,
            feedback: Default::default(),
            hunks: Default::default(),
            edited: Default::default(),
        },
        Inbox { tx, rx },
    )
}

impl TuiApprover {
    /// Keeps what the user said with a decision (the words of a refusal,
    /// refused hunks, files they edited) for the agent to take by call id.
    fn keep_answers(&self, call_id: &str, words: &FeedbackSlot, review: &ReviewSlots) {
        if let Some(words) = words.lock().ok().and_then(|mut s| s.take())
            && let Ok(mut all) = self.feedback.lock()
        {
            all.insert(call_id.to_string(), words);
        }
        let refused = review
            .hunks
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default();
        if !refused.is_empty()
            && let Ok(mut all) = self.hunks.lock()
        {
            all.insert(call_id.to_string(), refused);
        }
        let edited = review
            .edited
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default();
        if !edited.is_empty()
            && let Ok(mut all) = self.edited.lock()
        {
            all.insert(call_id.to_string(), edited);
        }
    }
}

/// Each file's proposed content, for an edit request.
fn proposed_files(request: &ApprovalRequest<'_>) -> Vec<SavedFile> {
    match request {
        ApprovalRequest::Edit { proposal, .. } => proposal
            .files
            .iter()
            .map(|f| (f.path.clone(), f.new_content.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// What the UI asks for `request`.
fn prompt_kind(request: ApprovalRequest<'_>) -> PromptKind {
    match request {
        ApprovalRequest::Shell {
            command,
            reason: AskReason::SandboxDenied(evidence),
            ..
        } => PromptKind::Unsandboxed {
            command: command.to_string(),
            evidence: evidence.clone(),
        },
        ApprovalRequest::Shell {
            command,
            reason,
            prefix,
        } => PromptKind::Shell {
            prefix: prefix.map(str::to_string),
            command: command.to_string(),
            why: match reason {
                AskReason::NotApproved => None,
                other => Some(other.to_string()),
            },
        },
        ApprovalRequest::Edit { files, .. } => PromptKind::Edit {
            files: files.to_vec(),
        },
        ApprovalRequest::Capability { capability, reason } => PromptKind::Capability {
            capability: capability.to_string(),
            reason: reason.to_string(),
        },
        ApprovalRequest::Host { host, port } => PromptKind::Host {
            host: host.to_string(),
            port,
        },
    }
}

impl Approver for TuiApprover {
    fn may_leave_sandbox(&self) -> bool {
        true
    }

    fn decide<'a>(
        &'a self,
        call_id: &'a str,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, ApprovalDecision> {
        let proposed = proposed_files(&request);
        let kind = prompt_kind(request);
        let automatic = match kind {
            PromptKind::Edit { .. } if self.approve_edits => Some(ApprovalDecision::Accept),
            _ => None,
        };
        let refusal = kind.refusal();
        let (reply, answer) = oneshot::channel();
        let slot = FeedbackSlot::default();
        let review = ReviewSlots {
            proposed: Arc::new(proposed),
            ..ReviewSlots::default()
        };
        let sent = automatic.is_none()
            && self
                .tx
                .send(UiMsg::Prompt(Prompt {
                    call_id: call_id.to_string(),
                    kind,
                    reply,
                    feedback: slot.clone(),
                    review: review.clone(),
                }))
                .is_ok();
        Box::pin(async move {
            if let Some(d) = automatic {
                return d;
            }
            if !sent {
                return refusal;
            }
            let decision = answer.await.unwrap_or(refusal);
            self.keep_answers(call_id, &slot, &review);
            decision
        })
    }

    fn feedback(&self, call_id: &str) -> Option<String> {
        self.feedback.lock().ok()?.remove(call_id)
    }

    fn edited(&self, call_id: &str) -> Vec<(String, String)> {
        self.edited
            .lock()
            .ok()
            .and_then(|mut all| all.remove(call_id))
            .unwrap_or_default()
    }

    fn refused_hunks(&self, call_id: &str) -> Vec<north_protocol::HunkRef> {
        self.hunks
            .lock()
            .ok()
            .and_then(|mut all| all.remove(call_id))
            .unwrap_or_default()
    }

    fn auto_approves_shell(&self) -> bool {
        self.allow_shell
    }
}
