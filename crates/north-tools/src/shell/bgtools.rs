//! `shell_output` and `shell_kill`: reading and stopping the background
//! commands `shell_run` started (`background: true`). Neither runs
//! anything new, so neither asks.

use std::time::Duration;

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::background::JobState;
use crate::args::ArgsSchema;
use crate::{Tool, ToolContext};

/// The longest a read may wait.
const MAX_WAIT: Duration = Duration::from_secs(120);

/// Arguments of `shell_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellOutputArgs {
    /// The id `shell_run` returned.
    pub id: String,
    /// Wait up to this many ms for the command to exit (what it prints
    /// meanwhile is returned either way); null: 0, read at once.
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// Arguments of `shell_kill`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellKillArgs {
    /// The id `shell_run` returned.
    pub id: String,
}

fn state_json(state: JobState) -> Value {
    match state {
        JobState::Running => json!({"state": "running"}),
        JobState::Exited(code) => json!({"state": "exited", "exitCode": code}),
        JobState::Killed => json!({"state": "killed"}),
    }
}

fn unknown(ctx: &ToolContext, id: &str) -> ToolOutcome {
    let ids: Vec<String> = ctx.shell.jobs().list().into_iter().map(|j| j.id).collect();
    ToolOutcome::err(format!(
        "no background command `{id}`; known: {}",
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    ))
}

/// `shell_output {id, wait_ms?}`.
pub(crate) struct ShellOutput {
    args: ArgsSchema,
}

impl ShellOutput {
    /// The tool.
    pub fn new() -> Self {
        ShellOutput {
            args: ArgsSchema::of::<ShellOutputArgs>(),
        }
    }
}

impl Default for ShellOutput {
    fn default() -> Self {
        ShellOutput::new()
    }
}

impl Tool for ShellOutput {
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn intent(&self, args: &Value) -> Option<String> {
        let id = args.get("id").and_then(Value::as_str).unwrap_or("?");
        Some(format!("Reading background command {id}"))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "shell_output".into(),
            description: "New output of a background command since the last read, and its state (running, or exited with exitCode). `wait_ms` waits up to that long for it to exit.".into(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::None,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: ShellOutputArgs = match self.args.parse("shell_output", args) {
                Ok(a) => a,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            let wait = Duration::from_millis(args.wait_ms.unwrap_or(0)).min(MAX_WAIT);
            let read = tokio::select! {
                r = ctx.shell.jobs().read(&args.id, wait) => r,
                _ = ctx.cancel.cancelled() => return ToolOutcome::err("cancelled while waiting"),
            };
            match read {
                Some(r) => {
                    let mut out = state_json(r.state);
                    if let Some(o) = out.as_object_mut() {
                        o.insert("id".into(), json!(r.id));
                        o.insert("command".into(), json!(r.command));
                        o.insert("output".into(), json!(r.output));
                    }
                    ToolOutcome::ok(out)
                }
                None => unknown(ctx, &args.id),
            }
        })
    }
}

/// `shell_kill {id}`.
pub(crate) struct ShellKill {
    args: ArgsSchema,
}

impl ShellKill {
    /// The tool.
    pub fn new() -> Self {
        ShellKill {
            args: ArgsSchema::of::<ShellKillArgs>(),
        }
    }
}

impl Default for ShellKill {
    fn default() -> Self {
        ShellKill::new()
    }
}

impl Tool for ShellKill {
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn intent(&self, args: &Value) -> Option<String> {
        let id = args.get("id").and_then(Value::as_str).unwrap_or("?");
        Some(format!("Stopping background command {id}"))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "shell_kill".into(),
            description: "Stop a background command and everything it started.".into(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::None,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: ShellKillArgs = match self.args.parse("shell_kill", args) {
                Ok(a) => a,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            match ctx.shell.jobs().kill(&args.id) {
                Some(state) => {
                    let mut out = state_json(state);
                    if let Some(o) = out.as_object_mut() {
                        o.insert("id".into(), json!(args.id));
                    }
                    ToolOutcome::ok(out)
                }
                None => unknown(ctx, &args.id),
            }
        })
    }
}
