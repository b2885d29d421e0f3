//! `north tool NAME --args JSON [--path DIR] [--apply]`: runs one tool under
//! the project's policy and prints its structured `{ok, output, error}` JSON.
//!
//! Write tools print their proposal (diffs, `canApply`, stats) and change
//! nothing unless `--apply` is given. Shell tools are judged by the one
//! command policy North's assistant and mesh use: they run when an allow
//! rule of a trusted project covers them, or with `--yes` when North can
//! verify they stay in the project; `bash` also obeys `policy.json`. Network tools
//! need `--grant net` or `--grant net:<domain>`. Exit status: 0 when the
//! result is `ok:true`, 1 when it is `ok:false`, 2 for invalid use.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use north_policy::orchestrate::{self, Before, PolicyWord};
use north_policy::{AllowRules, ApprovedCommand, MeshPolicy, ShellPolicy, Verdict};
use north_protocol::{ApprovalPolicy, ToolOutcome};
use north_tools::allowlist::ProjectAllowlist;
use north_tools::tools::mesh_tools_with;
use north_tools::{Registry, ToolContext, all_tools, edit, repo};
use serde_json::{Value, json};

/// `north tool` options.
#[derive(Debug, Args)]
#[command(after_help = "EXAMPLES:\n  \
north tool --list\n  \
north tool search_text --args '{\"query\": \"fn main\"}'\n  \
north tool read_file --args '{\"path\": \"src/main.rs\", \"range\": {\"start\": 1, \"end\": 40}}'\n  \
north tool edit_replace_exact --args @edit.json            (prints the proposal)\n  \
north tool edit_replace_exact --args @edit.json --apply    (writes it)\n  \
north tool shell_run --args '{\"command\": \"cargo test\"}' --yes\n  \
north tool http.get --args '{\"url\": \"https://example.com\"}' --grant net:example.com\n\n\
EXIT STATUS:\n  0  the tool returned ok:true\n  1  the tool returned ok:false (or was not allowed to run)\n  2  invalid use: unknown tool, bad --args JSON, bad --path, --apply on a tool that does not write")]
pub struct ToolArgs {
    /// The tool to run (see --list).
    #[arg(value_name = "NAME", required_unless_present = "list")]
    pub name: Option<String>,
    /// The arguments: a JSON object, `@FILE` to read it from a file, `-` from standard input.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Write tools: apply the proposal (atomically) instead of only printing it.
    #[arg(long)]
    pub apply: bool,
    /// Shell tools: run a command no allow rule covers, if North can verify it stays in the project.
    #[arg(long)]
    pub yes: bool,
    /// Trust this project: apply its own allow rules and policy.json (as `north trust` does).
    #[arg(long)]
    pub trust: bool,
    /// Grant a capability to network tools (`net`, `net:<domain>`); repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<north_protocol::Capability>,
    /// List the tools (name, approval, description) as JSON and exit.
    #[arg(long)]
    pub list: bool,
    /// Run commands (and North's own git) inside the OS sandbox (on, the default) or not (off).
    #[arg(long, value_enum, value_name = "on|off")]
    pub sandbox: Option<crate::args::SandboxSwitch>,
}

/// An invalid use of `north tool` (exit status 2).
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Runs `north tool` and maps every failure to an exit status: usage errors
/// are printed to stderr with status 2.
pub fn main(args: ToolArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("north tool: {}", crate::output::error_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Runs one tool and prints its JSON result; `Err` is invalid use (status 2).
pub fn run(args: ToolArgs) -> anyhow::Result<ExitCode> {
    let tools = all_tools();
    if args.list {
        print_json(&list(&tools))?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = args.name.as_deref() else {
        bail!(Usage("a tool name is required (see --list)".into()));
    };
    let Some(tool) = tools.get(name) else {
        print_json(&serde_json::to_value(unknown(&tools, name))?)?;
        return Ok(ExitCode::from(2));
    };
    let approval = tool.spec().approval;
    if args.apply && approval != ApprovalPolicy::Write {
        bail!(Usage(format!(
            "--apply only applies to write tools; `{name}` does not write"
        )));
    }
    let tool_args = parse_args(&args.args)?;
    // Arguments that do not fit the tool's schema are a usage error (exit 2),
    // reported in the tool's own result shape.
    if let Err(e) = north_tools::args::check_against(name, &tool.spec().input_schema, &tool_args) {
        print_json(&serde_json::to_value(ToolOutcome::err(e.to_string()))?)?;
        return Ok(ExitCode::from(2));
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = repo::resolve_root(args.path.as_deref(), &cwd).map_err(|e| Usage(e.to_string()))?;
    let mut notices = Vec::new();
    let (trust, _) = north_runtime::decide_trust(&root, args.trust, None, &mut notices)?;
    crate::args::print_notices(&notices);
    // The mesh's tools obey the project's policy.json, as in `north mesh`.
    let mut tools = tools;
    tools.extend(&mesh_tools_with(&MeshPolicy::load_project(
        &root,
        trust.applies(),
    )?));
    let (ctx, choice) = context(root, &args);
    let sandbox = ctx.sandbox().map_err(|e| Usage(e.to_string()))?;

    // Finish any apply a killed process left half done before looking at
    // files, as every entry point does.
    let mut settled = Vec::new();
    match north_runtime::settle_interrupted_edits(sandbox.root(), &mut settled) {
        Ok(()) => crate::args::print_notices(&settled),
        Err(e) => eprintln!("north tool: warning: {e}"),
    }

    // The user's hooks (and a trusted project's) run around the call as
    // around the agent's own.
    let gate = north_runtime::hooking::hook_gate(&ctx.root, trust.applies(), &choice, &args.grants);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let call_id = format!("north-tool-{}", std::process::id());
    let hook_args = tool_args.clone();
    use north_tools::CallGate;
    if let Some(gate) = &gate
        && let Err(reason) = runtime.block_on(gate.before(name, &hook_args, &call_id))
    {
        let blocked = ToolOutcome::err(format!(
            "a PreToolUse hook blocked this call, so it did not run: {reason}"
        ));
        print_json(&serde_json::to_value(&blocked)?)?;
        return Ok(ExitCode::from(1));
    }
    let mut outcome = dispatch(
        &tools,
        name,
        tool_args,
        ctx,
        &sandbox,
        &args,
        trust.applies(),
    )?;
    if let Some(gate) = &gate {
        runtime.block_on(gate.after(name, &hook_args, &call_id, &mut outcome));
    }
    print_json(&serde_json::to_value(&outcome)?)?;
    Ok(if outcome.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The call's context: the user's grants, and the project's shell under
/// the OS sandbox (unless `--sandbox off`); with the sandbox choice the
/// hooks run under too.
fn context(
    root: std::path::PathBuf,
    args: &ToolArgs,
) -> (ToolContext, north_runtime::SandboxChoice) {
    let mut ctx = ToolContext::for_project(root.clone());
    ctx.capabilities = args.grants.clone();
    let choice = north_runtime::SandboxChoice::for_project(
        &root,
        args.sandbox.map(crate::args::SandboxSwitch::enabled),
    );
    let commands = choice.spawner(
        &root,
        &args.grants,
        north_tools::os_sandbox::ChildKind::Command,
    );
    if commands.is_confined() {
        ctx.shell = std::sync::Arc::new(north_tools::shell::ShellManager::with_spawner(
            root, commands,
        ));
    }
    (ctx, choice)
}

/// Runs the tool the way its approval says: a write tool proposes (and
/// applies with `--apply`), a shell tool passes the command policy first.
fn dispatch(
    tools: &Registry,
    name: &str,
    tool_args: serde_json::Value,
    ctx: ToolContext,
    sandbox: &north_tools::Sandbox,
    args: &ToolArgs,
    trusted: bool,
) -> anyhow::Result<ToolOutcome> {
    let Some(tool) = tools.get(name) else {
        bail!(Usage(format!("unknown tool `{name}`")));
    };
    Ok(match tool.spec().approval {
        ApprovalPolicy::Write => {
            let write = tool.as_write().with_context(|| {
                format!("tool `{name}` declares write approval but cannot propose")
            })?;
            match write.propose(tool_args, &ctx) {
                Err(failed) => failed,
                Ok(proposal) if !args.apply => ToolOutcome::ok(proposal.to_model_json()),
                Ok(proposal) => match edit::apply(&proposal, sandbox) {
                    Ok(applied) => ToolOutcome::ok(write.applied_output(&proposal, &applied)),
                    Err(e) => ToolOutcome::err(e.to_string()),
                },
            }
        }
        ApprovalPolicy::Shell => match shell_gate(&ctx, name, &tool_args, args.yes, trusted)? {
            Err(denied) => denied,
            Ok(approved) => {
                let ctx = ToolContext { approved, ..ctx };
                call(tools, name, tool_args, &ctx)?
            }
        },
        ApprovalPolicy::Net | ApprovalPolicy::None | ApprovalPolicy::External => {
            // The user's read rules hold here as in a session.
            let rules = north_runtime::permissions::project_path_rules(&ctx.root, trusted);
            match rules.read_refusal(&ctx.root, &tool_args) {
                Some(refused) => ToolOutcome::err(refused),
                None => {
                    let mut outcome = call(tools, name, tool_args, &ctx)?;
                    rules.filter_reads(&ctx.root, &mut outcome.output);
                    outcome
                }
            }
        }
    })
}

fn call(
    tools: &Registry,
    name: &str,
    args: Value,
    ctx: &ToolContext,
) -> anyhow::Result<ToolOutcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok(runtime.block_on(tools.call(name, args, ctx)))
}

/// The approval the shell command runs from (None: malformed arguments,
/// which the tool reports without running anything); otherwise the refusal
/// to print. The same policy as every other entry point: the assistant
/// profile for `shell_run`/`shell.exec`, the mesh profile (the project's
/// `policy.json`) for `bash`.
fn shell_gate(
    ctx: &ToolContext,
    name: &str,
    args: &Value,
    yes: bool,
    trusted: bool,
) -> anyhow::Result<Result<Option<ApprovedCommand>, ToolOutcome>> {
    let Some(command) = north_tools::describe::command_of(args) else {
        return Ok(Ok(None));
    };
    let root = ctx.root.canonicalize().unwrap_or_else(|_| ctx.root.clone());
    let mut rules = match ProjectAllowlist::load(&ctx.root) {
        Ok(list) if trusted => list.rules(),
        Ok(_) => AllowRules::default(),
        Err(e) => return Ok(Err(ToolOutcome::err(format!("`{name}` was not run: {e}")))),
    };
    let (allow, limits) = north_runtime::permissions::project_shell_rules(&ctx.root, trusted);
    rules.exact.extend(allow.exact);
    rules.prefixes.extend(allow.prefixes);
    let policy = if name == "bash" {
        ShellPolicy::mesh(
            &root,
            &MeshPolicy::load_project(&root, trusted)?,
            rules,
            yes,
        )
    } else {
        ShellPolicy::assistant(&root, rules, yes)
    }
    .limited(limits);
    let cwd = args
        .get("cwd")
        .and_then(Value::as_str)
        .and_then(|d| north_tools::sandbox::physical_path(&root, std::path::Path::new(d)).ok());
    // Nobody is asked here: the one sequence, unattended — only what the
    // policy allows runs.
    let verdict = policy.decide(command, cwd.as_deref());
    let step = orchestrate::unattended(PolicyWord::from(&verdict));
    Ok(match (step, verdict) {
        (Before::Run(consent), _) => match policy.approve(command, cwd.as_deref(), consent) {
            Ok(approved) => Ok(Some(approved)),
            Err(verdict) => Err(ToolOutcome::err(format!(
                "`{name}` was not run: {verdict:?}"
            ))),
        },
        (_, Verdict::Ask(reason)) => Err(ToolOutcome::err(format!(
            "`{name}` was {}",
            north_agent::approval::shell_refusal(command, &reason, yes)
        ))),
        (_, Verdict::Deny(denial)) => Err(ToolOutcome::err(denial.to_string())),
        (_, other) => Err(ToolOutcome::err(format!("`{name}` was not run: {other:?}"))),
    })
}

fn parse_args(text: &str) -> anyhow::Result<Value> {
    let text = if text == "-" {
        let mut buf = String::new();
        std::io::stdin()
            .read_to_string(&mut buf)
            .context("cannot read --args from standard input")?;
        buf
    } else if let Some(file) = text.strip_prefix('@') {
        std::fs::read_to_string(file)
            .map_err(|e| Usage(format!("cannot read --args file {file}: {e}")))?
    } else {
        text.to_owned()
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|e| Usage(format!("--args is not valid JSON: {e}")))?;
    if !value.is_object() {
        bail!(Usage("--args must be a JSON object".into()));
    }
    Ok(value)
}

fn list(tools: &Registry) -> Value {
    Value::Array(
        tools
            .specs()
            .into_iter()
            .map(
                |s| json!({ "name": s.name, "approval": s.approval, "description": s.description }),
            )
            .collect(),
    )
}

fn unknown(tools: &Registry, name: &str) -> ToolOutcome {
    ToolOutcome {
        ok: false,
        output: json!({ "unknownTool": name, "available": tools.names() }),
        error: Some(format!("unknown tool `{name}`; see `north tool --list`")),
    }
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn args_must_be_a_json_object() {
        assert!(parse_args("{\"a\": 1}").is_ok());
        assert!(
            parse_args("[1]")
                .unwrap_err()
                .to_string()
                .contains("JSON object")
        );
        assert!(
            parse_args("{nope")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(parse_args("@/definitely/missing.json").is_err());
    }

    #[test]
    fn shell_commands_need_a_trusted_rule_or_yes() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(std::fs::canonicalize(dir.path()).unwrap());
        let args = json!({"command": "echo hi"});
        let denied = shell_gate(&ctx, "shell_run", &args, false, false)
            .unwrap()
            .unwrap_err();
        assert!(denied.error.unwrap().contains("has no allow rule"));
        assert!(
            shell_gate(&ctx, "shell_run", &args, true, false)
                .unwrap()
                .is_ok_and(|a| a.is_some_and(|a| a.line() == "echo hi"))
        );
        std::fs::create_dir(dir.path().join(".north")).unwrap();
        std::fs::write(
            dir.path().join(".north/allowlist.json"),
            r#"{"allowedCommands": ["echo hi"]}"#,
        )
        .unwrap();
        assert!(
            shell_gate(&ctx, "shell_run", &args, false, false)
                .unwrap()
                .is_err(),
            "an untrusted project's rules do not apply"
        );
        assert!(
            shell_gate(&ctx, "shell_run", &args, false, true)
                .unwrap()
                .is_ok_and(|a| a.is_some())
        );
        assert!(
            shell_gate(
                &ctx,
                "bash",
                &json!({"cmd": "echo hi; rm -rf x"}),
                false,
                true
            )
            .unwrap()
            .is_err()
        );
    }
}
