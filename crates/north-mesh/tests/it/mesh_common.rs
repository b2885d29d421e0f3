//! Shared fixtures of the mesh tests: a project, a mesh on a backend, a
//! scripted backend that records requests, and readers for what a run left.
#![allow(dead_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use north_agent::redact::Redactor;
use north_agent::store::SessionStore;
use north_agent::{AgentOptions, Approver, FlagApprover};
use north_llm::{Backend, ScriptedBackend};
use north_mesh::{Mesh, MeshEvent, MeshNote, MeshOptions, MeshReport};
use north_policy::MeshPolicy;
use north_tools::ToolContext;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub const KEY: &str = "sk-ant-MESHLEAKCHECK-0123456789abcdef";

/// A project with two Rust files (3 + 1 lines) and a README.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("project");
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("README.md"), "# Demo\nA demo project.\n").unwrap();
    std::fs::write(
        p.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    std::fs::write(p.join("src/lib.rs"), "// a library\n").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "TOP SECRET OUTSIDE\n").unwrap();
    dir
}

pub fn root(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("project")
}

/// A policy allowing the commands the tests use.
pub fn policy(commands: &[&str]) -> MeshPolicy {
    MeshPolicy {
        allowed_commands: commands.iter().map(|c| (*c).to_owned()).collect(),
        ..MeshPolicy::default()
    }
}

/// `--yes`.
pub fn yes() -> Arc<dyn Approver> {
    Arc::new(FlagApprover {
        approve_edits: true,
        allow_shell: true,
        ..Default::default()
    })
}

pub fn scripted(turns: Value, record: &Path) -> Arc<dyn Backend> {
    Arc::new(
        ScriptedBackend::from_json(&turns.to_string())
            .unwrap()
            .record_to(record)
            .unwrap(),
    )
}

pub fn mesh(
    root: &Path,
    backend: Arc<dyn Backend>,
    policy: MeshPolicy,
    approver: Arc<dyn Approver>,
    provider: &str,
) -> Mesh {
    let mut redactor = Redactor::default();
    redactor.add(KEY);
    let opts = MeshOptions {
        agent: AgentOptions {
            provider: provider.into(),
            model: "test-model".into(),
            // The tests' projects are the user's own: their rules apply.
            project_trust: north_agent::trust::ProjectTrust::Trusted { store: None },
            ..Default::default()
        },
        ..Default::default()
    };
    mesh_from(root, backend, policy, approver, redactor, opts)
}

/// A mesh in `root` with exactly these options.
pub fn mesh_from(
    root: &Path,
    backend: Arc<dyn Backend>,
    policy: MeshPolicy,
    approver: Arc<dyn Approver>,
    redactor: Redactor,
    opts: MeshOptions,
) -> Mesh {
    Mesh::new(
        backend,
        ToolContext::new(root.to_path_buf()),
        policy,
        approver,
        redactor,
        opts,
    )
    .unwrap()
}

pub struct Ran {
    pub report: MeshReport,
    pub events: Vec<MeshEvent>,
}

pub async fn run(mesh: &Mesh, root: &Path, goal: &str) -> Ran {
    let session = SessionStore::new(root).create().unwrap();
    let events = Mutex::new(Vec::new());
    let emit = |e: MeshEvent| events.lock().unwrap().push(e);
    let report = mesh
        .run(session, goal, &emit, &CancellationToken::new())
        .await;
    Ran {
        report,
        events: events.into_inner().unwrap(),
    }
}

impl Ran {
    pub fn notes(&self) -> Vec<MeshNote> {
        self.events
            .iter()
            .filter_map(|e| match e {
                MeshEvent::Mesh(n) => Some(n.clone()),
                MeshEvent::Agent(_) => None,
            })
            .collect()
    }

    /// Every event as its JSON line.
    pub fn jsonl(&self) -> Vec<Value> {
        self.events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect()
    }

    /// The trace of the run's session as JSON values.
    pub fn trace(&self, root: &Path) -> Vec<Value> {
        let path = root
            .join(".north/sessions")
            .join(&self.report.session_id)
            .join("trace.jsonl");
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Results of tool calls as the executor saw them: (tool, ok, error).
    pub fn results(&self) -> Vec<(String, bool, Option<String>, Value)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                MeshEvent::Agent(north_protocol::Event::ToolResult {
                    tool, ok, details, ..
                }) => {
                    let d = details.clone().unwrap_or_default();
                    Some((
                        tool.clone(),
                        *ok,
                        d["error"].as_str().map(str::to_owned),
                        d["output"].clone(),
                    ))
                }
                _ => None,
            })
            .collect()
    }
}

/// The recorded requests.
pub fn requests(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// All text of a request's messages.
pub fn message_text(req: &Value) -> String {
    req["messages"].to_string()
}

/// A planner answer for `steps` as `(description, tool)`.
pub fn plan_turn(steps: &[(&str, Option<&str>)]) -> Value {
    let items: Vec<Value> = steps
        .iter()
        .map(|(d, t)| serde_json::json!({"description": d, "tool": t}))
        .collect();
    serde_json::json!({"text": format!("```json\n{}\n```", Value::Array(items))})
}

/// One bash call turn.
pub fn bash_turn(id: &str, cmd: &str) -> Value {
    serde_json::json!({"tool_calls": [{"id": id, "name": "bash", "args": {"cmd": cmd}}]})
}

pub fn text_turn(text: &str) -> Value {
    serde_json::json!({"text": text})
}
