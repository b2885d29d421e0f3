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
use crate::output::{
    EXIT_DENIED, EXIT_INTERRUPTED, EXIT_PROVIDER, EXIT_STEP_LIMIT, EXIT_USAGE, Text, emit_json,
    fail,
};
use crate::{logging, setup};
use north_protocol::PermissionMode;

/// Runs `north exec`.
pub fn main(args: ExecArgs) -> ExitCode {
    let redactor = Redactor::from_env();
    let log = logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north exec starting");
    match prepare(&args) {
        Ok(prepared) => {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    return fail(
                        args.json,
                        ErrorKind::Internal,
                        &format!("cannot start the runtime: {e}"),
                        EXIT_PROVIDER,
                    );
                }
            };
            runtime.block_on(run(&args, prepared, redactor))
        }
        Err(e) => fail(
            args.json,
            ErrorKind::Config,
            &redactor.scrub(&format!("{e:#}")),
            EXIT_USAGE,
        ),
    }
}

struct Prepared {
    project: setup::Project,
    /// None: continue the resumed session's unfinished turn.
    prompt: Option<String>,
}

fn prepare(args: &ExecArgs) -> anyhow::Result<Prepared> {
    let flags = crate::args::RunFlags {
        max_steps: args.max_steps,
        tool_protocol: args.tool_protocol,
        ..args.approvals.run_flags()
    };
    let mut project = setup::project(&args.model, &flags, None)?;
    project.grant(&args.grants);
    let prompt = read_prompt(args)?;
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
    let choice =
        setup::SessionChoice::from_flags(args.resume.as_ref(), args.continue_latest, args.fork);
    let session = match choice.and_then(|choice| p.project.session(&choice)) {
        Ok(s) => s,
        Err(e) => return fail(args.json, ErrorKind::Config, &format!("{e:#}"), EXIT_USAGE),
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
    let mcp = crate::mcp_setup::mcp_hub(&p.project, true);
    if let Some(hub) = &mcp {
        // Nobody to ask: a server's form is answered with its defaults
        // only under --yes (and only when they cover what it requires).
        hub.set_elicitor(Arc::new(north_mcp::elicit::Unattended {
            accept_defaults: args.approvals.yes,
            announce: north_mcp::Announcer::default(),
        }));
        hub.start_all();
    }
    let session_id = session.id.clone();
    let built = crate::builder::AgentBuilder::default()
        .grants(&args.grants)
        .mcp(mcp.clone())
        .max_tokens(args.max_tokens)
        .models(&args.model)
        .build(
            &p.project,
            Arc::new(approver),
            session,
            redactor,
            Some(mode),
        );
    let mut agent = match built {
        Ok(a) => a,
        Err(e) => return fail(args.json, ErrorKind::Config, &format!("{e:#}"), EXIT_USAGE),
    };
    for path in &args.images {
        match agent.attach_image_file(path) {
            Ok(()) => {}
            Err(e) => {
                return fail(
                    args.json,
                    ErrorKind::Config,
                    &format!("--image {}: {e}; nothing was sent", path.display()),
                    EXIT_USAGE,
                );
            }
        }
    }
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
        provider: p.project.selected.provider.clone(),
        model: p.project.selected.model.clone(),
    });
    if let Some(hub) = &mcp {
        // A headless run gets one first request: let it carry the servers'
        // tools (each server has its connect timeout; a failed one is
        // reported and left out).
        hub.wait_ready(std::time::Duration::from_secs(60)).await;
        for status in hub.statuses() {
            if let Some(error) = &status.last_error {
                eprintln!("north: MCP server `{}`: {error}", status.name);
            }
        }
    }
    let end = match &p.prompt {
        Some(prompt) => agent.run_turn(prompt, &emit, &cancel).await,
        None => agent.continue_turn(&emit, &cancel).await,
    };
    agent
        .end_session(north_agent::SessionEndReason::Other, &emit)
        .await;
    if let Some(hub) = &mcp {
        hub.shutdown().await;
    }
    if !json {
        human.finish();
        eprintln!("north: session {session_id} (resume with --resume {session_id})");
    }
    tracing::info!(session = %session_id, ?end, "exec finished");
    match end {
        TurnEnd::Done if denied.lock().map(|d| *d).unwrap_or(false) => ExitCode::from(EXIT_DENIED),
        TurnEnd::Done => ExitCode::SUCCESS,
        TurnEnd::StepLimit => ExitCode::from(EXIT_STEP_LIMIT),
        TurnEnd::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        TurnEnd::ProviderFailed(_) => ExitCode::from(EXIT_PROVIDER),
        TurnEnd::PromptFailed(_) => ExitCode::from(EXIT_USAGE),
    }
}
