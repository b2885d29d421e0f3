//! What an [`Agent`](super::Agent) is made of, by concept: the services it
//! calls (model, tools and their context, the approver, the trace) and the
//! conversation it holds (the session on disk, the messages the model sees,
//! the session state, usage, what waits for the next message). The turn
//! step (`step.rs`) and the dispatch of calls (`dispatch.rs`) work on them.

use std::sync::Arc;

use north_llm::Backend;
use north_protocol::{ContentBlock, Message, ModelRef, State, Usage};
use north_tools::{Registry, ToolContext};

use crate::approval::Approver;
use crate::redact::Redactor;
use crate::store::{Session, SessionLog, Tracer};

/// The services an agent calls; set at construction.
pub(super) struct Services {
    /// The model.
    pub(super) backend: Arc<dyn Backend>,
    /// The tools of the current mode.
    pub(super) tools: Registry,
    /// The session-wide tool context: services only; each call gets its own
    /// copy ([`ToolContext::for_call`]).
    pub(super) ctx: ToolContext,
    /// Who decides approvals.
    pub(super) approver: Arc<dyn Approver>,
    /// The session's trace.
    pub(super) tracer: Tracer,
    /// What is scrubbed from logs and traces.
    pub(super) redactor: Redactor,
}

/// The conversation an agent holds and keeps durable.
pub(super) struct Conversation {
    /// The session on disk.
    pub(super) session: Session,
    /// The session's append-only log (holds the session's lock).
    pub(super) log: SessionLog,
    /// What the model sees.
    pub(super) messages: Vec<Message>,
    /// Bumped whenever the messages change other than by appending.
    pub(super) revision: u64,
    /// How many leading messages are on disk exactly as in memory.
    pub(super) clean: usize,
    /// Goals, open loops, grants, memory tags.
    pub(super) state: State,
    /// Tokens used in the session.
    pub(super) total: Usage,
    /// Log bytes written when the last snapshot was taken (0: none yet).
    pub(super) snapshot_at: u64,
    /// The last snapshot's size.
    pub(super) snapshot_bytes: u64,
    /// The model a resumed checkpoint was written by, when it was another
    /// one; announced at the next turn.
    pub(super) resumed_from: Option<(ModelRef, usize)>,
    /// Images and documents for the next user message (`@shot.png`,
    /// `@doc.pdf`, `--image`).
    pub(super) pending_images: Vec<ContentBlock>,
    /// Set by NOTES actions: `Some(true)` condense now, `Some(false)` if
    /// worthwhile.
    pub(super) condense_requested: Option<bool>,
    /// Commands the user ran with `!` this process (for their call ids).
    pub(super) user_commands: u64,
}

impl Conversation {
    /// A conversation on `session` with nothing in it yet (a resume loads
    /// its history afterwards).
    pub(super) fn open(session: Session, log: SessionLog) -> Conversation {
        Conversation {
            session,
            log,
            messages: Vec::new(),
            revision: 0,
            clean: 0,
            state: State::default(),
            total: Usage::default(),
            snapshot_at: 0,
            snapshot_bytes: 0,
            resumed_from: None,
            pending_images: Vec::new(),
            condense_requested: None,
            user_commands: 0,
        }
    }
}
