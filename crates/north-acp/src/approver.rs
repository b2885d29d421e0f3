//! Approvals in the clients: every edit proposal, command and capability
//! the policy leaves to the user becomes a `session/request_permission` to
//! each attached client, and the first answer decides; nothing is written
//! or run before it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    Diff, PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolCallContent,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use futures::future::BoxFuture;
use north_agent::{ApprovalRequest, Approver};
use north_policy::AskReason;
use north_protocol::ApprovalDecision;
use tokio_util::sync::CancellationToken;

use crate::clients::Clients;
use crate::ext::Ask;

/// The current turn's cancellation, shared with `session/cancel`.
pub(crate) type TurnCancel = Arc<Mutex<CancellationToken>>;

/// Asks the session's clients.
pub(crate) struct AcpApprover {
    pub clients: Arc<Clients>,
    pub root: PathBuf,
    pub cancel: TurnCancel,
}

/// What is asked: the tool call as the editor shows it, the options, and
/// the decision each option means.
struct Question {
    /// What is asked, as North's clients show it.
    ask: Ask,
    fields: ToolCallUpdateFields,
    options: Vec<(PermissionOption, ApprovalDecision)>,
    refusal: ApprovalDecision,
}

fn option(id: &str, name: &str, kind: PermissionOptionKind) -> PermissionOption {
    PermissionOption::new(id.to_string(), name.to_string(), kind)
}

impl AcpApprover {
    fn question(&self, request: &ApprovalRequest<'_>) -> Question {
        match request {
            ApprovalRequest::Shell {
                command,
                reason,
                prefix,
            } => shell_question(command, reason, *prefix),
            ApprovalRequest::Edit { proposal, files } => {
                let diffs: Vec<ToolCallContent> = proposal
                    .files
                    .iter()
                    .map(|f| {
                        let path = self.root.join(&f.path);
                        let old = std::fs::read_to_string(&path).ok();
                        Diff::new(path, f.new_content.clone()).old_text(old).into()
                    })
                    .collect();
                let names: Vec<&str> = proposal.files.iter().map(|f| f.path.as_str()).collect();
                Question {
                    ask: Ask::Edit {
                        files: files.to_vec(),
                    },
                    fields: ToolCallUpdateFields::new()
                        .kind(ToolKind::Edit)
                        .title(format!("Edit {}", names.join(", ")))
                        .content(diffs),
                    options: vec![
                        (
                            option("accept", "Accept", PermissionOptionKind::AllowOnce),
                            ApprovalDecision::Accept,
                        ),
                        (
                            option("reject", "Reject", PermissionOptionKind::RejectOnce),
                            ApprovalDecision::Reject,
                        ),
                    ],
                    refusal: ApprovalDecision::Reject,
                }
            }
            ApprovalRequest::Capability { capability, reason } => {
                capability_question(&capability.to_string(), reason)
            }
            ApprovalRequest::Host { host, port } => host_question(host, *port),
        }
    }
}

/// A command the policy leaves to the user.
fn shell_question(command: &str, reason: &AskReason, prefix: Option<&str>) -> Question {
    // Never "run outside the sandbox": an editor may accept
    // requests on its own (`may_leave_sandbox` is false here).
    let mut options = vec![(
        option("allow-once", "Allow once", PermissionOptionKind::AllowOnce),
        ApprovalDecision::RunOnce,
    )];
    if !matches!(reason, AskReason::SandboxDenied(_)) {
        options.push((
            option(
                "allow-always",
                "Always allow",
                PermissionOptionKind::AllowAlways,
            ),
            ApprovalDecision::Always,
        ));
    }
    options.push((
        option("reject", "Reject", PermissionOptionKind::RejectOnce),
        ApprovalDecision::Deny,
    ));
    let title = match reason {
        AskReason::NotApproved => format!("Run `{command}`"),
        other => format!("Run `{command}` ({other})"),
    };
    Question {
        ask: Ask::Shell {
            command: command.to_string(),
            why: match reason {
                AskReason::NotApproved => None,
                other => Some(other.to_string()),
            },
            prefix: prefix.map(str::to_string),
        },
        fields: ToolCallUpdateFields::new()
            .kind(ToolKind::Execute)
            .title(title),
        options,
        refusal: ApprovalDecision::Deny,
    }
}

/// A capability the model asked for, for this session.
fn capability_question(capability: &str, reason: &str) -> Question {
    Question {
        ask: Ask::Capability {
            capability: capability.to_string(),
            reason: reason.to_string(),
        },
        fields: ToolCallUpdateFields::new()
            .kind(ToolKind::Fetch)
            .title(format!("Grant `{capability}` for this session ({reason})")),
        options: vec![
            (
                option("grant", "Grant", PermissionOptionKind::AllowOnce),
                ApprovalDecision::Grant,
            ),
            (
                option("deny", "Deny", PermissionOptionKind::RejectOnce),
                ApprovalDecision::Deny,
            ),
        ],
        refusal: ApprovalDecision::Deny,
    }
}

/// A command connecting to a host no grant covers, through North's proxy.
fn host_question(host: &str, port: u16) -> Question {
    Question {
        ask: Ask::Host {
            host: host.to_string(),
            port,
        },
        fields: ToolCallUpdateFields::new()
            .kind(ToolKind::Fetch)
            .title(format!("A command connects to {host}:{port} — allow it?")),
        options: vec![
            (
                option("once", "Allow once", PermissionOptionKind::AllowOnce),
                ApprovalDecision::RunOnce,
            ),
            (
                option(
                    "session",
                    "Allow this session",
                    PermissionOptionKind::AllowAlways,
                ),
                ApprovalDecision::Grant,
            ),
            (
                option(
                    "project",
                    "Always for this project",
                    PermissionOptionKind::AllowAlways,
                ),
                ApprovalDecision::Always,
            ),
            (
                option("deny", "Deny", PermissionOptionKind::RejectOnce),
                ApprovalDecision::Deny,
            ),
        ],
        refusal: ApprovalDecision::Deny,
    }
}

impl Approver for AcpApprover {
    fn decide<'a>(
        &'a self,
        call_id: &'a str,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, ApprovalDecision> {
        let q = self.question(&request);
        let session = self.clients.session.get().cloned().unwrap_or_default();
        let decisions: serde_json::Map<String, serde_json::Value> = q
            .options
            .iter()
            .map(|(o, d)| (o.option_id.to_string(), serde_json::json!(d)))
            .collect();
        let mut meta = serde_json::Map::new();
        meta.insert(
            "north".into(),
            serde_json::json!({ "ask": q.ask, "decisions": decisions }),
        );
        let ask = RequestPermissionRequest::new(
            session,
            ToolCallUpdate::new(call_id.to_string(), q.fields),
            q.options.iter().map(|(o, _)| o.clone()).collect(),
        )
        .meta(meta);
        let options = q
            .options
            .iter()
            .map(|(o, d)| (o.option_id.to_string(), *d))
            .collect();
        let cancel = self
            .cancel
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        let (pending, answer) = self.clients.ask(ask, options, q.refusal);
        let clients = self.clients.clone();
        Box::pin(async move {
            let decision = tokio::select! {
                a = answer => a.map_or(q.refusal, |(_, d)| d),
                // A cancelled turn refuses what it was waiting for.
                () = cancel.cancelled() => q.refusal,
            };
            clients.settled(&pending);
            decision
        })
    }

    fn is_interactive(&self) -> bool {
        true
    }

    /// An editor may answer permission requests on its own (an
    /// "always allow" setting, an agent of its own): it is never offered a
    /// run outside the sandbox.
    fn may_leave_sandbox(&self) -> bool {
        false
    }
}

/// Accepted edits written into an attached editor's buffers
/// (`fs/write_text_file`), so unsaved changes there are edited rather than
/// overwritten on disk.
pub(crate) struct EditorFiles {
    pub clients: Arc<Clients>,
}

impl north_tools::FileWriter for EditorFiles {
    fn write<'a>(
        &'a self,
        path: &'a std::path::Path,
        content: &'a str,
    ) -> BoxFuture<'a, std::io::Result<()>> {
        let session = self.clients.session.get().cloned().unwrap_or_default();
        let request = agent_client_protocol::v1::schema::WriteTextFileRequest::new(
            session,
            path.to_path_buf(),
            content.to_string(),
        );
        let editor = self.clients.attached().into_iter().find(|c| c.writes);
        Box::pin(async move {
            let Some(editor) = editor else {
                return Err(std::io::Error::other(
                    "the editor that writes this session's files is no longer attached; attach it again and retry",
                ));
            };
            editor
                .cx
                .send_request(request)
                .block_task()
                .await
                .map(|_| ())
                .map_err(|e| std::io::Error::other(e.to_string()))
        })
    }
}
