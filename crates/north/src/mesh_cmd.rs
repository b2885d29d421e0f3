//! `north mesh "goal"`: planner → executor → memory under a policy. Shows
//! progress as it goes (or JSONL events with `--json`); exit codes as
//! `north exec`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use north_agent::FlagApprover;
use north_agent::redact::Redactor;
use north_mesh::{Mesh, MeshEvent, MeshNote, MeshOptions, MeshPhase, MeshStatus, plan_text};
use north_policy::{MeshPolicy, PolicyPreset};
use north_protocol::{ErrorKind, Event};
use tokio_util::sync::CancellationToken;

use crate::args::{ModelArgs, ProtocolName};
use crate::logging;
use crate::output::{
    EXIT_DENIED, EXIT_INTERRUPTED, EXIT_PROVIDER, EXIT_STEP_LIMIT, EXIT_USAGE, Text, emit_json,
    fail,
};
use north_runtime::{McpSetup, Project, SessionChoice, Sessions};

/// `north mesh` options.
#[derive(Debug, Args)]
#[command(
    after_help = "POLICY:\n  Every tool call is checked against the policy before it runs: policy.json at the\n  project root (or --policy FILE, or --preset NAME; default: the balanced preset).\n  Fields: allowed_commands, write_enabled, max_file_size, and optionally\n  timeout_seconds, max_output, max_cpu_seconds, max_memory_bytes, max_disk_bytes. No flag\n  overrides a refusal; commands and edits the policy allows still need --allow-shell /\n  --approve-edits / --yes (or .north/allowlist.json), as for north exec.\n\nENVIRONMENT:\n  MODEL    the model, when neither --model nor NORTH_MODEL is set\n  WORKDIR  the project directory, when --path is not given\n\nEXIT STATUS:\n  0    plan, steps and memory completed\n  1    the model or provider failed, or the plan was unusable; no memory was written\n  2    invalid use or configuration (missing key, bad flags, bad policy)\n  3    completed, but a command, edit or read was denied (by policy or approval)\n  4    a step reached the step limit\n  130  interrupted (Ctrl+C)"
)]
pub struct MeshArgs {
    /// Model and project options.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print events as JSON, one object per line, instead of text.
    #[arg(long)]
    pub json: bool,
    /// Approval flags (after the policy: a refusal cannot be overridden).
    #[command(flatten)]
    pub approvals: crate::args::ApprovalArgs,
    /// Grant a capability (`tool:mcp__SERVER` for an MCP server's tools);
    /// repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<north_protocol::Capability>,
    /// Policy file [default: policy.json at the project root].
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub policy: Option<PathBuf>,
    /// Policy preset: conservative, balanced or permissive.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Seconds a command may run [default: the policy's, else 20].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Characters of command output kept [default: the policy's, else 4000].
    #[arg(long, value_name = "CHARS")]
    pub max_output: Option<usize>,
    /// Executor model steps per plan step [default: 25].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Tool-call protocol [default: native].
    #[arg(long, value_enum)]
    pub tool_protocol: Option<ProtocolName>,
    /// Maximum output tokens per model request [default: 8192, at most a quarter of the model's context window].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// The goal.
    #[arg(value_name = "GOAL", num_args = 1.., required = true)]
    pub goal: Vec<String>,
}

/// Runs `north mesh`.
pub fn main(args: MeshArgs) -> ExitCode {
    let redactor = Redactor::from_env();
    let log = logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north mesh starting");
    let prepared = match prepare(&args) {
        Ok(p) => p,
        Err(e) => {
            return fail(
                args.json,
                ErrorKind::Config,
                &redactor.scrub(&crate::output::error_line(&e)),
                EXIT_USAGE,
            );
        }
    };
    let runtime = match crate::output::current_thread(args.json) {
        Ok(r) => r,
        Err(code) => return code,
    };
    runtime.block_on(run(&args, prepared, redactor))
}

struct Prepared {
    project: Project,
    policy: MeshPolicy,
    goal: String,
}

/// The mesh's own environment settings (mesh.md): `MODEL` names the model
/// when neither `--model` nor `NORTH_MODEL` does, and `WORKDIR` is the
/// project when `--path` is not given.
fn mesh_model_args(args: &ModelArgs) -> ModelArgs {
    let mut args = args.clone();
    if args.model.is_none() && north_llm::env_setting("NORTH_MODEL").is_none() {
        args.model = north_llm::env_setting("MODEL");
    }
    if args.path.is_none() {
        args.path = north_llm::env_setting("WORKDIR").map(PathBuf::from);
    }
    args
}

fn prepare(args: &MeshArgs) -> anyhow::Result<Prepared> {
    let goal = args.goal.join(" ");
    anyhow::ensure!(!goal.trim().is_empty(), "the goal is empty");
    let flags = crate::args::RunFlags {
        max_steps: args.max_steps,
        tool_protocol: args.tool_protocol,
        ..args.approvals.run_flags()
    };
    let options = mesh_model_args(&args.model).project_options(&flags, &args.grants);
    let project = Project::open(&options, None)?;
    crate::args::print_notices(&project.notices);
    let mut policy = match (&args.policy, &args.preset) {
        (Some(path), _) => {
            anyhow::ensure!(
                path.is_file(),
                "policy file {} does not exist",
                path.display()
            );
            MeshPolicy::load(path)?
        }
        (None, Some(name)) => MeshPolicy::preset(name.parse::<PolicyPreset>()?),
        (None, None) => MeshPolicy::load_project(&project.root, project.trust.applies())?,
    };
    if let Some(secs) = args.timeout {
        anyhow::ensure!(secs > 0, "--timeout must be at least 1 second");
        policy.timeout_seconds = Some(secs);
    }
    if let Some(chars) = args.max_output {
        anyhow::ensure!(chars > 0, "--max-output must be at least 1 character");
        policy.max_output = Some(chars);
    }
    Ok(Prepared {
        project,
        policy,
        goal,
    })
}

/// Text rendering of mesh progress for a terminal or a pipe.
#[derive(Default)]
struct Human {
    text: Text,
    /// The model, from the start event, for progress lines.
    model: std::sync::OnceLock<String>,
}

impl Human {
    fn line(&self, text: &str) {
        self.text.line(text);
    }

    fn render(&self, event: &MeshEvent) {
        match event {
            MeshEvent::Mesh(note) => self.note(note),
            MeshEvent::Agent(event) => self.agent(event),
        }
    }

    fn note(&self, note: &MeshNote) {
        match note {
            MeshNote::MeshStarted { goal, model, .. } => {
                self.line(&format!("Goal: {goal}"));
                self.model.get_or_init(|| model.clone());
            }
            MeshNote::Phase { phase } => {
                let model = self.model.get().map(String::as_str).unwrap_or("the model");
                match phase {
                    MeshPhase::Planning => self.line(&format!("Planning with {model}…")),
                    MeshPhase::Executing => self.line("Executing the plan…"),
                    MeshPhase::Reviewing => self.line("Reviewing the run…"),
                    MeshPhase::Remembering => self.line("\nRemembering the run…"),
                }
            }
            MeshNote::PlanRetry { attempt, error } => self.line(&format!(
                "Plan attempt {attempt} could not be used ({error}); asking again."
            )),
            MeshNote::Plan { steps } => {
                self.line("Plan:");
                for line in plan_text(steps).lines() {
                    self.line(&format!("  {line}"));
                }
            }
            MeshNote::StepStarted {
                index,
                total,
                description,
                ..
            } => self.line(&format!("\nStep {index}/{total}: {description}")),
            MeshNote::AgentNote { agent, text } => self.line(&format!("[{agent}] {text}")),
            MeshNote::MemoryWritten { entry, path } => {
                self.line(&format!("\nMemory {} saved to {path}:", entry.id));
                for line in entry.summary.lines() {
                    self.line(&format!("  {line}"));
                }
            }
            MeshNote::MeshFinished { status, .. } => match status {
                MeshStatus::PlanFailed { message } => {
                    eprintln!("north: error: the planner gave no usable plan: {message}")
                }
                MeshStatus::ProviderFailed { message } | MeshStatus::StorageFailed { message } => {
                    eprintln!("north: error: {message}")
                }
                MeshStatus::Interrupted => eprintln!("north: interrupted"),
                MeshStatus::Completed | MeshStatus::Denied | MeshStatus::StepLimit => {}
            },
            // Refusals show on the tool result line.
            MeshNote::Policy { .. } | MeshNote::StepFinished { .. } => {}
        }
    }

    fn agent(&self, event: &Event) {
        self.text.event(event, false);
    }
}

/// The mesh on the project's model, with the user's grants, approvals and
/// hooks (the user's and a trusted project's run around its commands, as
/// in every other front end).
fn mesh(args: &MeshArgs, p: &Prepared, redactor: Redactor) -> Result<Mesh, north_mesh::MeshError> {
    let approver = FlagApprover {
        approve_edits: p.project.config.approve_edits.value,
        allow_shell: p.project.config.allow_shell.value,
        grants: args.grants.clone(),
        explain: true,
    };
    let opts = MeshOptions {
        agent: p.project.agent_options(args.max_tokens),
        ..MeshOptions::default()
    };
    // What the user granted counts for the mesh's tools as for exec's.
    let mut ctx = p.project.tool_context();
    ctx.capabilities = args.grants.clone();
    let mesh = Mesh::new(
        p.project.selected.backend.clone(),
        ctx,
        p.policy.clone(),
        Arc::new(approver),
        redactor,
        opts,
    )?;
    // The user's hooks (and a trusted project's) run around the mesh's
    // commands, and their MCP servers' tools are offered, as in every other
    // front end.
    Ok(if p.project.config.hooks.is_empty() {
        mesh
    } else {
        mesh.with_hooks(Arc::new(p.project.hooks()))
    })
}

/// The exit code a run's status ends `north mesh` with.
fn exit_code(status: &MeshStatus) -> ExitCode {
    match status {
        MeshStatus::Completed => ExitCode::SUCCESS,
        MeshStatus::Denied => ExitCode::from(EXIT_DENIED),
        MeshStatus::StepLimit => ExitCode::from(EXIT_STEP_LIMIT),
        MeshStatus::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        MeshStatus::PlanFailed { .. }
        | MeshStatus::ProviderFailed { .. }
        | MeshStatus::StorageFailed { .. } => ExitCode::from(EXIT_PROVIDER),
    }
}

async fn run(args: &MeshArgs, p: Prepared, redactor: Redactor) -> ExitCode {
    let session = match p.project.session(&SessionChoice::New) {
        Ok(s) => s,
        Err(e) => {
            let message = format!("cannot create the session: {e}");
            return fail(args.json, ErrorKind::Config, &message, EXIT_USAGE);
        }
    };
    let mesh = match mesh(args, &p, redactor) {
        Ok(m) => m,
        Err(e) => {
            return fail(
                args.json,
                ErrorKind::Internal,
                &e.to_string(),
                EXIT_PROVIDER,
            );
        }
    };
    // Nobody to ask: a server's form is declined.
    let sessions = Sessions::start(
        p.project,
        args.model.choice(),
        args.max_tokens,
        McpSetup::unattended(false),
    );
    crate::args::print_notices(sessions.notices());
    let mesh = match sessions.mcp() {
        Some(hub) => mesh.with_tool_source(hub.tool_source()),
        None => mesh,
    };
    let cancel = CancellationToken::new();
    crate::stop::cancel_on_stop(cancel.clone());
    let human = Human::default();
    let json = args.json;
    let emit = |event: MeshEvent| {
        if json {
            emit_json(&event);
        } else {
            human.render(&event);
        }
    };
    // The run queues its events and this loop renders them: the mesh
    // never runs the front end's code.
    let (sink, mut events) = north_agent::event_queue::<MeshEvent>();
    let run = async {
        let report = mesh.run(session, &p.goal, &sink, &cancel).await;
        drop(sink);
        report
    };
    let render = async {
        while let Some(event) = events.recv().await {
            emit(event);
        }
    };
    let (report, ()) = tokio::join!(run, render);
    sessions.shutdown().await;
    let id = &report.session_id;
    if !json {
        human.text.finish();
        eprintln!("north: session {id} (trace in .north/sessions/{id}/trace.jsonl)");
    }
    tracing::info!(session = %id, status = ?report.status, "mesh finished");
    exit_code(&report.status)
}
