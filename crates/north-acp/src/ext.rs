//! North's extensions to ACP, where ACP has no message: the sessions a
//! server holds (list, attach, rename, fork, export, close), North's own
//! events for clients that render them, and how a shared permission
//! question was settled. Method names start with `_north/`, as ACP reserves
//! names starting with `_` for extensions.

use agent_client_protocol::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use north_protocol::Event;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `_north/event`: one of North's own events, sent instead of
/// `session/update` to a client that asked at `initialize`
/// (`_meta: {"north": {"events": true}}`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcNotification)]
#[notification(method = "_north/event")]
#[serde(rename_all = "camelCase")]
pub struct NorthEvent {
    /// The session it happened in.
    pub session_id: String,
    /// What happened.
    pub event: Event,
}

/// `_north/permission_answered`: another client answered a permission
/// question this client was asked; it can close its prompt.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcNotification)]
#[notification(method = "_north/permission_answered")]
#[serde(rename_all = "camelCase")]
pub struct PermissionAnswered {
    /// The session.
    pub session_id: String,
    /// The tool call the question was about.
    pub tool_call_id: String,
    /// The option chosen (none: the question was cancelled).
    pub option_id: Option<String>,
}

/// `_north/permission_refused`: this client's answer came after another's
/// and was not used.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcNotification)]
#[notification(method = "_north/permission_refused")]
#[serde(rename_all = "camelCase")]
pub struct PermissionRefused {
    /// The session.
    pub session_id: String,
    /// The tool call the question was about.
    pub tool_call_id: String,
    /// Why.
    pub reason: String,
}

/// `_north/session/list`: the sessions this server holds open.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/list", response = SessionList)]
pub struct ListSessions {}

/// One open session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Its id.
    pub session_id: String,
    /// Its project directory.
    pub cwd: std::path::PathBuf,
    /// Its name, when it has one.
    pub name: Option<String>,
    /// How many clients are attached.
    pub clients: usize,
    /// A turn is running.
    pub running: bool,
}

/// The answer to `_north/session/list`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
pub struct SessionList {
    /// Open sessions, oldest first.
    pub sessions: Vec<SessionInfo>,
}

/// `_north/session/attach`: this client joins an open session; its
/// history is replayed to this client only, then it receives every event.
/// (`session/load` of an open session does the same.)
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/attach", response = Attached)]
#[serde(rename_all = "camelCase")]
pub struct Attach {
    /// The session.
    pub session_id: String,
}

/// The answer to `_north/session/attach`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct Attached {
    /// The session.
    pub session_id: String,
    /// Its project directory.
    pub cwd: std::path::PathBuf,
    /// Its permission mode.
    pub mode: String,
    /// A turn is running.
    pub running: bool,
}

/// `_north/session/rename`: names the session (an empty name removes it).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/rename", response = Renamed)]
#[serde(rename_all = "camelCase")]
pub struct Rename {
    /// The session.
    pub session_id: String,
    /// The new name: letters, digits, spaces, `-`, `_`, `.` (at most 64).
    pub name: String,
}

/// The answer to `_north/session/rename`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
pub struct Renamed {
    /// The name now (none: removed).
    pub name: Option<String>,
}

/// `_north/session/fork`: a new open session continuing a copy of this
/// one's history; the caller is attached to it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/fork", response = Forked)]
#[serde(rename_all = "camelCase")]
pub struct Fork {
    /// The session to copy.
    pub session_id: String,
}

/// The answer to `_north/session/fork`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct Forked {
    /// The new session.
    pub session_id: String,
}

/// `_north/session/export`: the session's whole transcript as Markdown,
/// as `north sessions export` writes it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/export", response = Exported)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    /// The session.
    pub session_id: String,
}

/// The answer to `_north/session/export`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
pub struct Exported {
    /// The transcript.
    pub markdown: String,
}

/// `_north/session/close`: ends an open session for every client (its
/// turn cancelled, its hooks and background jobs ended as at exit).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/close", response = Closed)]
#[serde(rename_all = "camelCase")]
pub struct Close {
    /// The session.
    pub session_id: String,
}

/// The answer to `_north/session/close`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
pub struct Closed {}

/// What a permission question asks, as North's own clients show it: in
/// `session/request_permission`'s `_meta.north.ask`, beside
/// `_meta.north.decisions` (each option id's North decision). Other
/// clients use the ACP fields.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ask {
    /// A shell command the policy leaves to the user.
    Shell {
        /// The exact command.
        command: String,
        /// Why beyond "no rule covers it" (none: that).
        why: Option<String>,
        /// The family "always allow" would cover.
        prefix: Option<String>,
    },
    /// An edit proposal.
    Edit {
        /// Each file's diff, as a reviewer sees it.
        files: Vec<north_protocol::FileDiff>,
    },
    /// A capability the model asked for.
    Capability {
        /// E.g. `net:example.com`.
        capability: String,
        /// Why.
        reason: String,
    },
    /// A command connecting, through North's proxy, to a host no grant
    /// covers.
    Host {
        /// The host.
        host: String,
        /// Its port.
        port: u16,
    },
}

/// What North tells its own clients about a session they open or load, in
/// the answer's `_meta.north`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionMeta {
    /// The project directory.
    pub root: std::path::PathBuf,
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The model's context window in tokens.
    pub context_window: u64,
}

/// `_north/session/history`: the session's conversation as of its last
/// turn's end, as North stores it (what a North client shows on attach).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "_north/session/history", response = HistoryAnswer)]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// The session.
    pub session_id: String,
}

/// The answer to `_north/session/history`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
pub struct HistoryAnswer {
    /// The messages (`north sessions show --json`'s form).
    pub messages: Vec<serde_json::Value>,
    /// Tokens used so far.
    pub usage: north_protocol::Usage,
}
