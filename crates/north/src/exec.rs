//! `north exec`: the headless assistant. Renders agent events as text (or
//! JSONL with `--json`); approvals come from flags and are safe by default.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use north_agent::redact::Redactor;
use north_agent::{FlagApprover, TurnEnd};
use north_protocol::{ApprovalDecision, ErrorKind, Event};
use tokio_util::sync::CancellationToken;

use crate::args::ExecArgs;
use crate::logging;
use crate::output::{
    EXIT_DENIED, EXIT_INTERRUPTED, EXIT_PROVIDER, EXIT_STEP_LIMIT, EXIT_USAGE, Text, emit_json,
    fail,
};
use north_protocol::PermissionMode;
use north_runtime::{LiveSession, McpSetup, Project, SessionChoice, SessionSpec, Sessions};

/// Runs `north exec`.
pub fn main(args: ExecArgs) -> ExitCode {
    let redactor = Redactor::from_env();
    let log = logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north exec starting");
    if let Some(address) = &args.attach {
        return match read_prompt(&args) {
            Ok(prompt) => crate::attach::main(&args, address, prompt),
            Err(e) => fail(
                args.json,
                ErrorKind::Config,
                &redactor.scrub(&crate::output::error_line(&e)),
                EXIT_USAGE,
            ),
        };
    }
    match prepare(&args) {
        Ok(prepared) => {
            let runtime = match crate::output::current_thread(args.json) {
                Ok(r) => r,
                Err(code) => return code,
            };
            runtime.block_on(run(&args, prepared, redactor))
        }
        Err(e) => fail(
            args.json,
            ErrorKind::Config,
            &redactor.scrub(&crate::output::error_line(&e)),
            EXIT_USAGE,
        ),
    }
}

struct Prepared {
    project: Project,
    /// None: continue the resumed session's unfinished turn.
    prompt: Option<String>,
}

fn prepare(args: &ExecArgs) -> anyhow::Result<Prepared> {
    let flags = crate::args::RunFlags {
        max_steps: args.max_steps,
        tool_protocol: args.tool_protocol,
        ..args.approvals.run_flags()
    };
    let (path, entered) = crate::worktree_enter::project_path(
        &args.worktree,
        args.model.path.as_ref(),
        args.resume.as_ref(),
    )?;
    let mut options = args.model.project_options(&flags, &args.grants);
    options.path = path;
    let project = Project::open(&options, None)?;
    if let Some(entered) = &entered {
        crate::worktree_enter::created_hooks(&project, entered)?;
    }
    crate::args::print_notices(&project.notices);
    let prompt = read_prompt(args)?.map(|text| {
        // `north exec "/plugin:command args"` runs the command, as in the
        // assistant.
        let commands = project.custom_commands(&crate::interactive::builtin_commands());
        north_agent::commands::expand_in(&commands, &text).unwrap_or(text)
    });
    Ok(Prepared { project, prompt })
}

/// The prompt from the arguments or standard input. Resuming without one
/// continues the session's unfinished turn (None).
fn read_prompt(args: &ExecArgs) -> anyhow::Result<Option<String>> {
    let resuming = args.resume.is_some() || args.continue_latest;
    let joined = args.prompt.join(" ");
    if !joined.is_empty() && joined != "-" {
        return Ok(Some(joined));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        anyhow::ensure!(
            resuming,
            "no prompt given; pass it as an argument or on standard input"
        );
        return Ok(None);
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .context("cannot read the prompt from standard input")?;
    if text.trim().is_empty() && resuming {
        return Ok(None);
    }
    anyhow::ensure!(!text.trim().is_empty(), "the prompt is empty");
    Ok(Some(text))
}

async fn run(args: &ExecArgs, p: Prepared, redactor: Redactor) -> ExitCode {
    let prompt = p.prompt.clone();
    let (sessions, mut agent) = match open(args, p, redactor).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let session_id = agent.session_id().to_string();
    let cancel = CancellationToken::new();
    crate::stop::cancel_on_stop(cancel.clone());
    let denied = Arc::new(Mutex::new(false));
    let human = Text::default();
    let json = args.json;
    let denied_flag = denied.clone();
    let emit = |event: Event| {
        if let Event::ApprovalDecided {
            decision: ApprovalDecision::Deny | ApprovalDecision::Reject,
            ..
        } = &event
            && let Ok(mut d) = denied_flag.lock()
        {
            *d = true;
        }
        if json {
            emit_json(&event);
        } else {
            human.event(&event, true);
        }
    };
    emit(Event::SessionStarted {
        session_id: session_id.clone(),
        provider: sessions.project().selected.provider.clone(),
        model: sessions.project().selected.model.clone(),
    });
    // A headless run gets one first request: let it carry the servers'
    // tools (each server has its connect timeout; a failed one is reported
    // and left out).
    for (name, error) in sessions
        .wait_ready(std::time::Duration::from_secs(60))
        .await
    {
        eprintln!("north: MCP server `{name}`: {error}");
    }
    // The turn queues its events and this loop renders them: the agent
    // never runs the front end's code.
    let (sink, mut events) = north_agent::event_queue::<Event>();
    let turn = async {
        let end = match &prompt {
            Some(prompt) => agent.run_turn(prompt, &sink, &cancel).await,
            None => agent.continue_turn(&sink, &cancel).await,
        };
        sessions
            .close(&mut agent, north_agent::SessionEndReason::Other, &sink)
            .await;
        drop(sink);
        end
    };
    let render = async {
        while let Some(event) = events.recv().await {
            emit(event);
        }
    };
    let (end, ()) = tokio::join!(turn, render);
    if !json {
        human.finish();
        eprintln!("north: session {session_id} (resume with --resume {session_id})");
    }
    tracing::info!(session = %session_id, ?end, "exec finished");
    let denied = denied.lock().map(|d| *d).unwrap_or(false);
    exit_code(&end, denied)
}

/// The exit code of a finished turn: a refused action makes a done turn
/// exit with the denied code.
fn exit_code(end: &TurnEnd, denied: bool) -> ExitCode {
    match end {
        TurnEnd::Done if denied => ExitCode::from(EXIT_DENIED),
        TurnEnd::Done => ExitCode::SUCCESS,
        TurnEnd::StepLimit => ExitCode::from(EXIT_STEP_LIMIT),
        TurnEnd::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        TurnEnd::ProviderFailed(_) => ExitCode::from(EXIT_PROVIDER),
        TurnEnd::PromptFailed(_) => ExitCode::from(EXIT_USAGE),
    }
}

/// Starts the project's MCP servers and opens the session the flags name,
/// with the images attached; on failure, the exit code (after whatever was
/// started is stopped again).
async fn open(
    args: &ExecArgs,
    p: Prepared,
    redactor: Redactor,
) -> Result<(Sessions, LiveSession), ExitCode> {
    let choice =
        match SessionChoice::from_flags(args.resume.as_ref(), args.continue_latest, args.fork) {
            Ok(c) => c,
            Err(e) => {
                return Err(fail(
                    args.json,
                    ErrorKind::Config,
                    &e.to_string(),
                    EXIT_USAGE,
                ));
            }
        };
    let mode = args
        .mode
        .map(PermissionMode::from)
        .unwrap_or(p.project.config.mode.value);
    let approver = FlagApprover {
        approve_edits: p.project.config.approve_edits.value,
        allow_shell: p.project.config.allow_shell.value,
        grants: args.grants.clone(),
        explain: true,
    };
    // Nobody to ask: a server's form is answered with its defaults only
    // under --yes (and only when they cover what it requires).
    let sessions = Sessions::start(
        p.project,
        args.model.choice(),
        args.max_tokens,
        McpSetup {
            login_on_demand: true,
            ..McpSetup::unattended(args.approvals.yes)
        },
    );
    crate::args::print_notices(sessions.notices());
    let opened = sessions.open(SessionSpec {
        choice,
        approver: Arc::new(approver),
        redactor,
        mode: Some(mode),
    });
    let mut agent = match opened {
        Ok(a) => a,
        Err(e) => {
            sessions.shutdown().await;
            return Err(fail(
                args.json,
                ErrorKind::Config,
                &e.to_string(),
                EXIT_USAGE,
            ));
        }
    };
    for path in &args.images {
        if let Err(e) = agent.attach_image_file(path) {
            sessions
                .close(&mut agent, north_agent::SessionEndReason::Other, &|_| {})
                .await;
            return Err(fail(
                args.json,
                ErrorKind::Config,
                &format!("--image {}: {e}; nothing was sent", path.display()),
                EXIT_USAGE,
            ));
        }
    }
    Ok((sessions, agent))
}
