//! Events the runtime emits and front ends render.
//!
//! Headless `--json` output prints exactly these, one object per line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::stream::{StopReason, Usage};

/// What an approval request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ApprovalKind {
    /// A shell command.
    Shell,
    /// An edit proposal (diffs).
    Edit,
    /// A capability such as `net` or `net:example.com`.
    Capability,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ApprovalDecision {
    /// Run this time; ask again next time.
    RunOnce,
    /// Persist an allow rule, then run.
    Always,
    /// Persist an allow rule for the command's prefix (`cargo test`
    /// covers `cargo test -p x`), then run.
    AlwaysPrefix,
    /// Do not run; the model gets a denied result.
    Deny,
    /// Apply the edit proposal.
    Accept,
    /// Discard the edit proposal.
    Reject,
    /// Grant the capability.
    Grant,
}

/// Category of an error event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ErrorKind {
    /// The model provider failed (after retries).
    Provider,
    /// A tool failed in a way the user should see.
    Tool,
    /// Configuration or usage problem.
    Config,
    /// The turn was interrupted by the user.
    Interrupted,
    /// Anything else.
    Internal,
}

/// What a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum NoticeKind {
    /// The model's output was cut off at the output token limit.
    OutputCut,
    /// A tool call could not be used (cut off, invalid JSON, a malformed
    /// text-protocol block); the model was told and nothing ran.
    MalformedToolCall,
    /// A NOTES block could not be used (not JSON, not a patch, or never
    /// closed); the session state is unchanged and the model was told.
    MalformedNotes,
    /// The session continues on another provider or model.
    ModelSwitched,
    /// An edit batch a killed process left half applied was settled before
    /// anything else (completed or undone, file by file).
    Recovered,
    /// The working tree could not be snapshotted, so this turn cannot be
    /// undone.
    UndoUnavailable,
    /// Content from outside the message (an MCP prompt or resource) was
    /// put into it.
    Attached,
    /// The conversation was condensed on the user's request (`/compact`).
    Compacted,
    /// The conversation is being condensed to fit the model's context: a
    /// summary request runs before the next step (it can take a while on
    /// a slow model).
    Condensing,
    /// A hook said `"continue": false`; the turn ended there.
    HookStopped,
    /// The provider ran its own web search (`web_search.provider`).
    HostedSearch,
    /// An MCP server's login: the URL to open, then how it went.
    Login,
    /// A sub-agent's worktree: what of its changes comes back, and how.
    Worktree,
}

/// A point in North's life where the user's hooks run. The names are
/// Claude Code's, so a hooks block written for it reads the same here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum HookEvent {
    /// A session starts (or resumes) in this process.
    SessionStart,
    /// The user sent a prompt; the model has not seen it yet.
    UserPromptSubmit,
    /// A tool call is about to be judged and run.
    PreToolUse,
    /// A tool call finished successfully.
    PostToolUse,
    /// A tool call failed.
    PostToolUseFailure,
    /// North is about to ask the user for a permission; a hook may answer.
    PermissionRequest,
    /// North waits for the user (an approval).
    Notification,
    /// The turn is about to end.
    Stop,
    /// A sub-agent starts its work.
    SubagentStart,
    /// A sub-agent is about to return its answer.
    SubagentStop,
    /// The conversation is about to be condensed.
    PreCompact,
    /// The conversation was condensed.
    PostCompact,
    /// The session ends in this process.
    SessionEnd,
    /// North made a git worktree (for `-w` or an isolated sub-agent); a
    /// hook prepares it (exit 2 takes it back).
    WorktreeCreate,
    /// North is about to remove a worktree it made.
    WorktreeRemove,
}

impl HookEvent {
    /// Every event, in lifecycle order.
    pub const ALL: [HookEvent; 15] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::PermissionRequest,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SessionEnd,
        HookEvent::WorktreeCreate,
        HookEvent::WorktreeRemove,
    ];

    /// The name configuration files use (`PreToolUse`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::Notification => "Notification",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::WorktreeCreate => "WorktreeCreate",
            HookEvent::WorktreeRemove => "WorktreeRemove",
        }
    }

    /// The event named `name` (exactly as configuration spells it).
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The one line a hook's run shows a person, or `None` when it ran
/// quietly: `PreToolUse hook `guard.sh` blocked: no force pushes`.
pub fn hook_line(
    event: HookEvent,
    command: &str,
    outcome: HookOutcome,
    message: Option<&str>,
) -> Option<String> {
    let what = match outcome {
        HookOutcome::Ran if message.is_none() => return None,
        HookOutcome::Ran => "says",
        HookOutcome::Blocked => "blocked",
        HookOutcome::Failed => "failed",
        HookOutcome::TimedOut => "timed out",
    };
    let mut line = format!("{event} hook `{command}` {what}");
    if let Some(m) = message {
        line.push_str(": ");
        line.push_str(m.lines().next().unwrap_or_default());
    }
    Some(line)
}

/// What came of running one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum HookOutcome {
    /// It ran and let North go on.
    Ran,
    /// It blocked what it was asked about (exit 2, or a decision on stdout).
    Blocked,
    /// It could not start, or exited with another error code; North went on.
    Failed,
    /// It ran past its timeout and was killed with its process group.
    TimedOut,
}

/// The stream a piece of a command's output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One thing that happened, for a front end to render.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Event {
    /// The model's plan changed: its goals and open loops (NOTES), as they
    /// are now. A front end shows them as a checklist; an item that left
    /// the lists is done.
    Plan {
        /// Current goals.
        goals: Vec<String>,
        /// Things started and not finished.
        open_loops: Vec<String>,
    },
    /// A session started or resumed.
    SessionStarted {
        /// Session id.
        session_id: String,
        /// Provider name.
        provider: String,
        /// Model name.
        model: String,
    },
    /// A model turn started.
    TurnStarted {
        /// 1-based turn number within the session.
        turn: u32,
    },
    /// A piece of streamed assistant text.
    AssistantText {
        /// The text piece.
        text: String,
    },
    /// A piece of the model's reasoning (thinking), for a collapsed view.
    Thinking {
        /// The text piece.
        text: String,
    },
    /// The model asked for a tool; `line` is the compact intent line.
    ToolIntent {
        /// Call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// Human intent line, e.g. "Searching: `foo` in `src/`".
        line: String,
        /// What the tool does, as the tool itself says.
        #[serde(default)]
        kind: crate::ToolKind,
    },
    /// Output a running tool (a shell command) produced just now, for a
    /// live view; the tool's result still carries its whole (bounded) output.
    ToolOutput {
        /// Call id.
        call_id: String,
        /// Which stream it came from.
        stream: OutputStream,
        /// The text, possibly part of a line.
        text: String,
    },
    /// A tool finished.
    ToolResult {
        /// Call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
        /// Compact one-line summary.
        summary: String,
        /// Full structured result, for a "details" expansion.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// The runtime needs a decision from the user.
    ApprovalRequested {
        /// Call id (or capability request id).
        call_id: String,
        /// What kind of approval.
        kind: ApprovalKind,
        /// The command, the edited paths, or the capability.
        subject: String,
    },
    /// The decision taken for an approval request.
    ApprovalDecided {
        /// Call id.
        call_id: String,
        /// The decision.
        decision: ApprovalDecision,
    },
    /// What language servers say a proposed change does, file by file,
    /// before it is reviewed (and before anything is written).
    Diagnostics {
        /// Call id.
        call_id: String,
        /// The files a server checked (or did not answer for).
        files: Vec<crate::FileDiagnostics>,
    },
    /// A proposed change as unified diffs, for review.
    Diff {
        /// Call id.
        call_id: String,
        /// Unified diff text, grouped by file.
        diff: String,
    },
    /// Token usage of one model request and the session total.
    Usage {
        /// This request.
        usage: Usage,
        /// The session so far.
        total: Usage,
    },
    /// A model response (one step of a turn) ended, and why.
    ModelStopped {
        /// The step, as in [`Event::TurnStarted`].
        turn: u32,
        /// Why the model stopped.
        reason: StopReason,
    },
    /// Something the user should know that is not an error: the answer was
    /// cut off, a tool call was unusable, the model changed.
    Notice {
        /// What it is about.
        kind: NoticeKind,
        /// One line for the user.
        message: String,
    },
    /// Something a sub-agent did (the `agent` tool), as its own event.
    Agent {
        /// The `agent` call the sub-agent is running for.
        call_id: String,
        /// The agent's name.
        agent: String,
        /// What happened in it.
        event: Box<Event>,
    },
    /// One of the user's hooks ran (`hook` in `exec --json`).
    Hook {
        /// The lifecycle event it ran at.
        event: HookEvent,
        /// Its command, as configured.
        command: String,
        /// What came of it.
        outcome: HookOutcome,
        /// What it said: the reason of a block, the error of a failure.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// An error the user should see.
    Error {
        /// Category.
        kind: ErrorKind,
        /// One-line cause.
        message: String,
    },
    /// The model turn ended.
    TurnEnd {
        /// Why it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
        /// Usage of the turn.
        usage: Usage,
    },
}
