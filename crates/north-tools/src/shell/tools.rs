//! The shell tools: North's `shell_run`, the runtime-contracts `shell.exec`
//! and the mesh's `bash` — three profiles over the one persistent session in
//! [`ToolContext::shell`].

use std::time::Duration;

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::output::truncate_chars;
use super::{DENIED_NOTE, Naming, REFUSED_NOTE, RunOptions, RunResult, result_of};
use crate::args::ArgsSchema;
use crate::describe;
use crate::{Tool, ToolContext};
use north_policy::{MeshPolicy, dangerous_substring};

/// Longest timeout a model may ask for (one hour).
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// Arguments of `shell_run`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellRunArgs {
    /// Command line to run.
    pub command: String,
    /// Directory under the project root (default: the root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Timeout in ms (default 60000).
    #[serde(default, rename = "timeoutMs")]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// In the background: returns an id.
    #[serde(default)]
    pub background: Option<bool>,
}

/// `shell_run` (spec §6.4): runs a command in the project's persistent PTY
/// shell and returns `{stdout, stderr, exitCode, durationMs}` (plus
/// `timedOut`, `truncated` and a `notice` about restarts). A timeout is an
/// `ok:false` outcome that still carries the partial output.
pub struct ShellRun {
    default_timeout: Duration,
    max_output: usize,
    args: ArgsSchema,
}

impl Default for ShellRun {
    fn default() -> Self {
        ShellRun::new()
    }
}

impl ShellRun {
    /// The tool with a 60 s default timeout and 30,000 bytes per stream.
    pub fn new() -> Self {
        ShellRun {
            default_timeout: Duration::from_secs(60),
            max_output: 30_000,
            args: ArgsSchema::of::<ShellRunArgs>(),
        }
    }
}

impl Tool for ShellRun {
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(describe::command(args))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "shell_run".to_owned(),
            description: "Run a command in the project's persistent shell (exports and functions \
                          persist), in the root or `cwd`. Returns stdout, stderr, exitCode."
                .to_owned(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::Shell,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: ShellRunArgs = match self.args.parse("shell_run", args) {
                Ok(args) => args,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            if args.background == Some(true) {
                return background(ctx, &args.command, args.cwd.as_deref());
            }
            let timeout = args
                .timeout_ms
                .map_or(self.default_timeout, Duration::from_millis)
                .min(MAX_TIMEOUT);
            // Every command starts at a known directory inside the project,
            // so the command policy judges its paths from where they resolve.
            let opts = RunOptions {
                cwd: Some(args.cwd.unwrap_or_else(|| ".".into()).into()),
                timeout,
                max_output: self.max_output,
                ..RunOptions::default()
            };
            let result = match run(ctx, "shell_run", &args.command, opts).await {
                Ok(result) => result,
                Err(outcome) => return outcome,
            };
            let output = result_of(&result, ctx.shell.spawner().policy()).to_json(Naming::Camel);
            interrupted_outcome(&result, timeout, output)
        })
    }
}

/// Arguments of `shell.exec`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellExecArgs {
    /// Command line to run.
    pub cmd: String,
    /// Timeout in seconds.
    #[serde(default = "default_timeout_s")]
    #[schemars(range(min = 1))]
    pub timeout_s: u64,
}

fn default_timeout_s() -> u64 {
    20
}

/// `shell.exec {cmd, timeout_s=20}` (runtime-contracts §4): runs in the
/// project root, refuses commands containing dangerous substrings
/// ([`dangerous_substring`]) and returns `{stdout, stderr, exit_code,
/// timed_out, truncated, duration_ms}`.
pub struct ShellExec {
    max_output: usize,
    args: ArgsSchema,
}

impl Default for ShellExec {
    fn default() -> Self {
        ShellExec::new()
    }
}

impl ShellExec {
    /// The tool, keeping 20,000 bytes per stream.
    pub fn new() -> Self {
        ShellExec {
            max_output: 20_000,
            args: ArgsSchema::of::<ShellExecArgs>(),
        }
    }
}

impl Tool for ShellExec {
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(describe::command(args))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "shell.exec".to_owned(),
            description: "Run a shell command in the project root.".to_owned(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::Shell,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: ShellExecArgs = match self.args.parse("shell.exec", args) {
                Ok(args) => args,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            if let Some(pattern) = dangerous_substring(&args.cmd) {
                return ToolOutcome::err(format!(
                    "shell.exec denied: the command contains the dangerous pattern `{pattern}`"
                ));
            }
            let timeout = Duration::from_secs(args.timeout_s).min(MAX_TIMEOUT);
            let opts = RunOptions {
                cwd: Some(".".into()),
                timeout,
                max_output: self.max_output,
                ..RunOptions::default()
            };
            let result = match run(ctx, "shell.exec", &args.cmd, opts).await {
                Ok(result) => result,
                Err(outcome) => return outcome,
            };
            let mut shell = result_of(&result, ctx.shell.spawner().policy());
            // The contract's result has no `notice`.
            shell.notice = None;
            interrupted_outcome(&result, timeout, shell.to_json(Naming::Snake))
        })
    }
}

/// Arguments of the mesh `bash` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BashArgs {
    /// Command line to run.
    pub cmd: String,
}

/// The mesh's `bash {cmd}`: checks the command against a [`MeshPolicy`]
/// ("Command denied by policy"), runs it in the project root with a 20 s
/// timeout and returns its output as one string cut to 4,000 characters
/// (head and tail). The string is stdout, followed by `[stderr]` and the
/// stderr text when there is any, and `[exit code N]` when N is not 0.
///
/// Timeout, output limit and the resource quotas (CPU seconds and virtual
/// memory, the largest file written; applied with `ulimit` in a subshell) come from the policy's
/// optional fields, with the defaults of [`north_policy::mesh`].
pub struct Bash {
    policy: MeshPolicy,
    timeout: Duration,
    max_output_chars: usize,
    cpu_seconds: Option<u64>,
    memory_bytes: Option<u64>,
    file_bytes: Option<u64>,
    args: ArgsSchema,
}

impl Default for Bash {
    fn default() -> Self {
        Bash::new()
    }
}

impl Bash {
    /// The tool under the balanced (default) policy, 20 s, 4,000 characters.
    pub fn new() -> Self {
        Bash::with_policy(MeshPolicy::default())
    }

    /// The tool under `policy`, with the policy's timeout, output limit and
    /// quotas.
    pub fn with_policy(policy: MeshPolicy) -> Self {
        Bash {
            timeout: policy.timeout(),
            max_output_chars: policy.output_chars(),
            cpu_seconds: Some(policy.cpu_seconds()),
            memory_bytes: Some(policy.memory_bytes()),
            file_bytes: Some(policy.disk_bytes()),
            policy,
            args: ArgsSchema::of::<BashArgs>(),
        }
    }

    /// Sets the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the output limit in characters.
    pub fn with_max_output_chars(mut self, chars: usize) -> Self {
        self.max_output_chars = chars;
        self
    }

    /// The policy commands are checked against.
    pub fn policy(&self) -> &MeshPolicy {
        &self.policy
    }
}

impl Tool for Bash {
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(describe::command(args))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "bash".to_owned(),
            description: "Execute a shell command (first word must be in allowed_commands)."
                .to_owned(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::Shell,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: BashArgs = match self.args.parse("bash", args) {
                Ok(args) => args,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            if let Err(denial) = self.policy.check_command(&args.cmd) {
                return ToolOutcome::err(denial.to_string());
            }
            let opts = RunOptions {
                cwd: Some(".".into()),
                timeout: self.timeout,
                // Bytes bound memory; the character cut below is the contract.
                max_output: self.max_output_chars.saturating_mul(4).max(64),
                cpu_seconds: self.cpu_seconds,
                memory_bytes: self.memory_bytes,
                file_bytes: self.file_bytes,
                live: None,
            };
            let result = match run(ctx, "bash", &args.cmd, opts).await {
                Ok(result) => result,
                Err(outcome) => return outcome,
            };
            let mut text = result.stdout.clone();
            if !result.stderr.is_empty() {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str("[stderr]\n");
                text.push_str(&result.stderr);
            }
            if let Some(code) = result.exit_code.filter(|c| *c != 0) {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("[exit code {code}]"));
                // The kernel stops a command at its CPU quota with SIGXCPU
                // (128 + 24), or SIGKILL (128 + 9) when soft and hard limits
                // are equal.
                if let Some(cpu) = self.cpu_seconds {
                    if code == 152 {
                        text.push_str(&format!(" [stopped: CPU time quota of {cpu} s exceeded]"));
                    } else if code == 137 && !result.timed_out {
                        text.push_str(&format!(
                            " [killed: CPU time quota of {cpu} s reached, or out of memory]"
                        ));
                    }
                }
                // SIGXFSZ (128 + 25): a file grew past the disk quota.
                if let Some(bytes) = self.file_bytes.filter(|_| code == 153) {
                    text.push_str(&format!(
                        " [stopped: disk quota exceeded, no file may grow past {bytes} bytes (max_disk_bytes)]"
                    ));
                }
            }
            let judged = result_of(&result, ctx.shell.spawner().policy());
            let note = match (judged.sandbox_denied, judged.network_refused) {
                (Some(denied), _) => Some(format!("[{DENIED_NOTE}: {denied}]")),
                (None, Some(refused)) => Some(format!("[{REFUSED_NOTE}: {refused}]")),
                (None, None) => None,
            };
            if let Some(note) = note {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&note);
            }
            let (text, _) = truncate_chars(&text, self.max_output_chars);
            interrupted_outcome(&result, self.timeout, Value::String(text))
        })
    }
}

/// Runs `command` for tool `tool` in the session's shell, its output live
/// and cancellable through `ctx`; a shell that cannot run it is the
/// outcome the model sees.
async fn run(
    ctx: &ToolContext,
    tool: &str,
    command: &str,
    opts: RunOptions,
) -> Result<RunResult, ToolOutcome> {
    // The gate that judged the call left its approval in the context; a
    // path that skipped the gate finds none and runs nothing.
    let Some(approved) = ctx.approved.as_ref().filter(|a| a.line() == command) else {
        return Err(ToolOutcome::err(format!(
            "{tool}: `{command}` was not judged by the command policy, so it was not run"
        )));
    };
    if let Some(refused) = unheld_read_only(ctx, approved, tool) {
        return Err(refused);
    }
    let opts = RunOptions {
        live: ctx.live_output.clone(),
        ..opts
    };
    ctx.shell
        .run(approved, opts, &ctx.cancel)
        .await
        .map_err(|e| ToolOutcome::err(format!("{tool}: {e}")))
}

/// A line run unasked because it only reads runs only where the kernel
/// holds it to that: refused on a shell that could write the project.
fn unheld_read_only(
    ctx: &ToolContext,
    approved: &north_policy::ApprovedCommand,
    tool: &str,
) -> Option<ToolOutcome> {
    let read_only = matches!(
        approved.by(),
        north_policy::ApprovedBy::Consent(north_policy::Consent::ReadOnly)
    );
    let writable = ctx
        .shell
        .spawner()
        .policy()
        .is_none_or(|p| p.project_writable);
    (read_only && writable).then(|| {
        ToolOutcome::err(format!(
            "{tool}: `{}` was approved as read-only but this shell could write the project, so it was not run",
            approved.line()
        ))
    })
}

/// Starts an approved command in the background: its id at once.
fn background(ctx: &ToolContext, command: &str, cwd: Option<&str>) -> ToolOutcome {
    let Some(approved) = ctx.approved.as_ref().filter(|a| a.line() == command) else {
        return ToolOutcome::err(format!(
            "shell_run: `{command}` was not judged by the command policy, so it was not run"
        ));
    };
    if let Some(refused) = unheld_read_only(ctx, approved, "shell_run") {
        return refused;
    }
    match ctx
        .shell
        .start_background(approved, cwd.map(std::path::Path::new))
    {
        Ok(id) => ToolOutcome::ok(json!({
            "id": id,
            "background": true,
            "command": command,
            "note": "running in the background: read its output with shell_output (wait_ms to wait for more), stop it with shell_kill",
        })),
        Err(e) => ToolOutcome::err(format!("shell_run: {e}")),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `ok:true` with `output`, or `ok:false` carrying `output` when the command
/// was interrupted.
fn interrupted_outcome(result: &RunResult, timeout: Duration, output: Value) -> ToolOutcome {
    let error = if result.timed_out {
        Some(format!(
            "command timed out after {} ms and was interrupted",
            millis(timeout)
        ))
    } else if result.cancelled {
        Some("command cancelled".to_owned())
    } else {
        None
    };
    match error {
        Some(error) => ToolOutcome {
            ok: false,
            output,
            error: Some(error),
        },
        None => ToolOutcome::ok(output),
    }
}
