//! The editor side of the ACP tests: a project, `north acp` on a script,
//! and a client built on the protocol crate's own client side that records
//! what it sees and answers permission requests as a test says.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]
pub use std::path::{Path, PathBuf};
pub use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
pub use agent_client_protocol::v1::ConnectionTo;
pub use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities,
    InitializeRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, TextContent,
    ToolCallContent, ToolKind, WriteTextFileRequest, WriteTextFileResponse,
};
pub use agent_client_protocol::{AcpAgent, AcpAgentConfig, Agent};
pub use serde_json::{Value, json};

pub struct Project {
    pub _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub root: PathBuf,
}

pub fn project() -> Project {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    Project {
        _dir: dir,
        base,
        root,
    }
}

pub fn agent(p: &Project, turns: Value) -> AcpAgent {
    let script = p.base.join(format!("script-{}.json", fastrand_name()));
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let home = p.base.join("home");
    AcpAgent::new(
        AcpAgentConfig::new(env!("CARGO_BIN_EXE_north"))
            .args(["acp", "--script", script.to_str().unwrap()])
            .env("HOME", home.to_str().unwrap())
            .env("XDG_CONFIG_HOME", home.join("config").to_str().unwrap())
            .env("XDG_STATE_HOME", home.join("state").to_str().unwrap())
            .env("XDG_DATA_HOME", home.join("data").to_str().unwrap()),
    )
}

pub fn fastrand_name() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

pub fn text(t: &str) -> Vec<ContentBlock> {
    vec![ContentBlock::Text(TextContent::new(t.to_string()))]
}

/// What the client saw.
#[derive(Default)]
pub struct Seen {
    pub updates: Vec<SessionUpdate>,
    pub permissions: Vec<RequestPermissionRequest>,
    /// a.txt's content when each permission was asked.
    pub file_when_asked: Vec<String>,
    /// `fs/write_text_file` requests: what North wrote into "the editor".
    pub editor_writes: Vec<(PathBuf, String)>,
}

/// How the client answers permission requests.
#[derive(Clone, Copy, PartialEq)]
pub enum Answer {
    /// Accept edits, reject commands.
    AcceptEditsRejectCommands,
    /// Cancel the turn.
    Cancel,
    /// Accept edits, and offer `fs/write_text_file` (an editor with buffers).
    AcceptIntoBuffers,
}

pub fn selected(id: &str) -> RequestPermissionResponse {
    RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new(id.to_string()),
    ))
}

/// Runs a client against `north acp`: `script` gets the connection.
pub async fn client<T: Send + 'static>(
    agent: AcpAgent,
    root: &Path,
    answer: Answer,
    seen: Arc<Mutex<Seen>>,
    script: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<T, agent_client_protocol::Error>,
) -> T {
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen);
    let file = root.join("a.txt");
    agent_client_protocol::Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                s1.lock().unwrap().updates.push(n.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, cx: ConnectionTo<Agent>| {
                let kind = req.tool_call.fields.kind;
                let session = req.session_id.clone();
                {
                    let mut s = s2.lock().unwrap();
                    s.file_when_asked
                        .push(std::fs::read_to_string(&file).unwrap_or_default());
                    s.permissions.push(req);
                }
                match (answer, kind) {
                    (Answer::Cancel, _) => {
                        cx.send_notification(CancelNotification::new(session))?;
                        responder.respond(RequestPermissionResponse::new(
                            RequestPermissionOutcome::Cancelled,
                        ))
                    }
                    (_, Some(ToolKind::Edit)) => responder.respond(selected("accept")),
                    _ => responder.respond(selected("reject")),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: WriteTextFileRequest, responder, _cx| {
                // The editor's buffer takes it; the disk is not touched.
                s3.lock()
                    .unwrap()
                    .editor_writes
                    .push((req.path, req.content));
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async move |cx: ConnectionTo<Agent>| {
            let mut init = InitializeRequest::new(ProtocolVersion::V1);
            if answer == Answer::AcceptIntoBuffers {
                init = init.client_capabilities(
                    ClientCapabilities::new()
                        .fs(FileSystemCapabilities::new().write_text_file(true)),
                );
            }
            cx.send_request(init).block_task().await?;
            script(cx).await
        })
        .await
        .unwrap()
}

pub fn agent_text(updates: &[SessionUpdate]) -> String {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}
