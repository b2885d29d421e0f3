//! Shared test fixtures: a project on disk, a queue-driven approver, an event log.
#![allow(dead_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use north_agent::redact::Redactor;
use north_agent::store::SessionStore;
use north_agent::{Agent, AgentOptions, ApprovalRequest, Approver};
use north_llm::Backend;
use north_protocol::{ApprovalDecision, Event};
use north_tools::{ToolContext, north_tools};

/// Decides from a queue; records what it was asked. Empty queue = refuse.
#[derive(Default)]
pub struct QueueApprover {
    pub decisions: Mutex<VecDeque<ApprovalDecision>>,
    pub asked: Mutex<Vec<String>>,
}

impl QueueApprover {
    pub fn new(decisions: impl IntoIterator<Item = ApprovalDecision>) -> Arc<Self> {
        Arc::new(QueueApprover {
            decisions: Mutex::new(decisions.into_iter().collect()),
            asked: Mutex::default(),
        })
    }
}

impl Approver for QueueApprover {
    fn decide<'a>(
        &'a self,
        _call_id: &'a str,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, ApprovalDecision> {
        let (what, refuse) = match request {
            ApprovalRequest::Shell { command, .. } => {
                (format!("shell:{command}"), ApprovalDecision::Deny)
            }
            ApprovalRequest::Edit { proposal, .. } => (
                format!(
                    "edit:{}",
                    proposal
                        .files
                        .iter()
                        .map(|f| f.path.clone())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                ApprovalDecision::Reject,
            ),
            ApprovalRequest::Capability { capability, .. } => {
                (format!("cap:{capability}"), ApprovalDecision::Deny)
            }
            ApprovalRequest::Host { host, port } => {
                (format!("host:{host}:{port}"), ApprovalDecision::Deny)
            }
        };
        self.asked.lock().unwrap().push(what);
        let d = self.decisions.lock().unwrap().pop_front().unwrap_or(refuse);
        Box::pin(async move { d })
    }
}

/// A project with a few files.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(
        p.join("README.md"),
        "# Demo\nA demo project for North tests.\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(
        p.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    std::fs::write(p.join("src/lib.rs"), "// TODO: add a library\n").unwrap();
    dir
}

pub struct Run {
    pub agent: Agent,
    pub events: Arc<Mutex<Vec<Event>>>,
    pub root: PathBuf,
}

pub fn agent_for(
    root: &Path,
    backend: Arc<dyn Backend>,
    approver: Arc<dyn Approver>,
    opts: AgentOptions,
    resume: Option<&str>,
) -> Run {
    agent_with_tools(root, backend, approver, opts, resume, north_tools())
}

/// As [`agent_for`], with `tools` instead of North's own.
pub fn agent_with_tools(
    root: &Path,
    backend: Arc<dyn Backend>,
    approver: Arc<dyn Approver>,
    opts: AgentOptions,
    resume: Option<&str>,
    tools: north_tools::Registry,
) -> Run {
    let store = SessionStore::new(root);
    let session = match resume {
        Some(id) => store.open(id).unwrap(),
        None => store.create().unwrap(),
    };
    let mut redactor = Redactor::default();
    redactor.add(KEY);
    let ctx = ToolContext::new(root.to_path_buf());
    // The tests' projects are the user's own: their allow rules apply.
    let mut opts = opts;
    if !opts.project_trust.applies() {
        opts.project_trust = north_agent::trust::ProjectTrust::Trusted { store: None };
    }
    let agent = Agent::new(backend, tools, ctx, approver, session, redactor, opts).unwrap();
    Run {
        agent,
        events: Arc::default(),
        root: root.to_path_buf(),
    }
}

pub const KEY: &str = "sk-ant-AGENTLEAKCHECK-1234567890abcdef";

impl Run {
    pub async fn turn(&mut self, input: &str) -> north_agent::TurnEnd {
        let events = self.events.clone();
        let emit = move |e: Event| events.lock().unwrap().push(e);
        self.agent
            .run_turn(input, &emit, &tokio_util::sync::CancellationToken::new())
            .await
    }

    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    pub fn trace_kinds(&self) -> Vec<String> {
        let path = self
            .root
            .join(".north/sessions")
            .join(self.agent.session_id())
            .join("trace.jsonl");
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    /// The session as stored: the snapshot with the log replayed over it.
    pub fn checkpoint(&self) -> north_protocol::Checkpoint {
        SessionStore::new(&self.root)
            .open(self.agent.session_id())
            .unwrap()
            .load_checkpoint()
            .unwrap()
            .unwrap()
    }
}

/// A session under `root` on a scripted backend playing `turns`, with
/// North's tools and no approvals queued; every request the model would
/// receive is recorded (read them with [`recorded`]).
pub fn scripted_session(root: &Path, turns: serde_json::Value) -> (Run, PathBuf) {
    let record = root.join("requests.jsonl");
    let backend = north_llm::ScriptedBackend::from_json(&turns.to_string())
        .unwrap()
        .record_to(&record)
        .unwrap();
    let run = agent_for(
        root,
        Arc::new(backend),
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
    );
    (run, record)
}

/// The requests a scripted backend recorded, one JSON value each.
pub fn recorded(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A scripted backend replaying `turns`, recording every request to `rec`.
pub fn scripted(turns: serde_json::Value, rec: &Path) -> Arc<north_llm::ScriptedBackend> {
    Arc::new(
        north_llm::ScriptedBackend::from_json(&turns.to_string())
            .unwrap()
            .record_to(rec)
            .unwrap(),
    )
}

/// The session's directory under `.north/sessions`.
pub fn session_dir(run: &Run) -> PathBuf {
    run.root
        .join(".north/sessions")
        .join(run.agent.session_id())
}

/// Every record of the session's `trace.jsonl`.
pub fn trace(run: &Run) -> Vec<serde_json::Value> {
    std::fs::read_to_string(session_dir(run).join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `checkpoint.json` exactly as written (the compact snapshot).
pub fn snapshot_file(run: &Run) -> north_protocol::Checkpoint {
    serde_json::from_str(
        &std::fs::read_to_string(session_dir(run).join("checkpoint.json")).unwrap(),
    )
    .unwrap()
}

/// The current UNIX time in seconds.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}
