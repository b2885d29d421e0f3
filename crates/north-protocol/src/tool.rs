//! Tool declarations, invocations and results.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which approval a tool needs before it may take effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    /// Read-only; runs without asking.
    #[default]
    None,
    /// Runs a shell command; gated by the command allowlist or the user.
    Shell,
    /// Changes files; its proposal is reviewed before anything is written.
    Write,
    /// Reaches the network; gated by granted capabilities.
    Net,
    /// Runs outside North (an MCP server's tool): asked for every call
    /// unless an allow rule or a `tool:<name>` grant covers it.
    External,
}

/// What a tool does, as front ends file it (an editor's icon, which
/// results show command output). Each tool says its own kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ToolKind {
    /// Reads files or lists them.
    Read,
    /// Searches the project.
    Search,
    /// Changes files.
    Edit,
    /// Runs a command.
    Execute,
    /// Reaches the network.
    Fetch,
    /// Anything else (an MCP server's tool that says nothing of itself).
    #[default]
    Other,
}

/// A tool as declared to a model: name, description and JSON schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Unique name the model uses to call the tool.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the tool's arguments object.
    pub input_schema: Value,
    /// The approval the tool needs; not sent to providers.
    #[serde(default)]
    pub approval: ApprovalPolicy,
}

/// A tool invocation requested by a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned (or runtime-assigned) id, unique within a response.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments object. When a model sends arguments that are not valid
    /// JSON, decoders keep the raw text as a JSON string so the tool layer
    /// can report it instead of losing it.
    pub arguments: Value,
}

/// The structured result every tool returns: `{ok, output, error}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// Whether the tool succeeded.
    pub ok: bool,
    /// The tool's output (null on failure unless the tool has partial output).
    pub output: Value,
    /// What went wrong, when `ok` is false.
    pub error: Option<String>,
}

impl ToolOutcome {
    /// A successful outcome.
    pub fn ok(output: Value) -> Self {
        ToolOutcome {
            ok: true,
            output,
            error: None,
        }
    }

    /// A failed outcome with a message for the model.
    pub fn err(message: impl Into<String>) -> Self {
        ToolOutcome {
            ok: false,
            output: Value::Null,
            error: Some(message.into()),
        }
    }
}

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_`:
/// the characters providers accept in tool names and tool-call ids.
pub fn wire_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One file of an edit proposal as a reviewer sees it: the unified diff and
/// its line counts. Front ends render these; they never see the proposal's
/// new content or base hashes, which stay with the tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileDiff {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// Unified diff text (`--- /dev/null` for a new file).
    pub diff: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Whether the file is new.
    pub created: bool,
    /// What a language server says the change does to the file (None: no
    /// server for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<FileDiagnostics>,
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

/// One diagnostic a language server reported.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// 1-based line of its start.
    pub line: u32,
    /// 1-based column (UTF-16 units, as servers count).
    pub column: u32,
    /// How bad.
    pub severity: Severity,
    /// What the server says.
    pub message: String,
}

/// What a language server says a proposed change does to one file:
/// checked before anything is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileDiagnostics {
    /// The file, relative to the project.
    pub path: String,
    /// The server (its language: `python`).
    pub server: String,
    /// Whether the server answered.
    pub checked: bool,
    /// Why not, when it did not (timed out, stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_answer: Option<String>,
    /// Errors and warnings the change brings in.
    pub introduced: Vec<Diagnostic>,
    /// Errors and warnings it takes away.
    pub resolved: Vec<Diagnostic>,
    /// Errors and warnings there before and after.
    pub remaining: usize,
}

/// One hunk of a proposal a reviewer refused: the file and the hunk's
/// place among that file's `@@` blocks, from 0.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HunkRef {
    /// The file, as in [`FileDiff::path`].
    pub path: String,
    /// Which `@@` block of its diff.
    pub hunk: usize,
}
