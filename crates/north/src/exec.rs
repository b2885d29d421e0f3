//! `north exec`: the headless assistant. Renders agent events as text (or
//! JSONL with `--json`); approvals come from flags and are safe by default.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use north_agent::redact::Redactor;
use north_agent::{FlagApprover, TurnEnd};
use north_protocol::{ApprovalDecision, ErrorKind, Event};
use north_tools::north_tools;
use tokio_util::sync::CancellationToken;

use crate::cli::ExecArgs;
use crate::{logging, setup};

const EXIT_PROVIDER: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_DENIED: u8 = 3;
const EXIT_STEP_LIMIT: u8 = 4;
const EXIT_INTERRUPTED: u8 = 130;

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
                        &args,
                        ErrorKind::Internal,
                        &format!("cannot start the runtime: {e}"),
                        EXIT_PROVIDER,
                    );
                }
            };
            runtime.block_on(run(&args, prepared, redactor))
        }
        Err(e) => fail(
            &args,
            ErrorKind::Config,
            &redactor.scrub(&format!("{e:#}")),
            EXIT_USAGE,
        ),
    }
}

struct Prepared {
    project: setup::Project,
    prompt: String,
}

fn prepare(args: &ExecArgs) -> anyhow::Result<Prepared> {
    for cap in &args.grants {
        anyhow::ensure!(
            north_agent::notes::valid_capability(cap),
            "invalid capability `{cap}` (use net or net:<domain>)"
        );
    }
    let flags = setup::RunFlags {
        approve_edits: args.approve_edits || args.yes,
        allow_shell: args.allow_shell || args.yes,
        max_steps: args.max_steps,
        tool_protocol: args.tool_protocol,
    };
    let project = setup::project(&args.model, &flags)?;
    let prompt = read_prompt(args)?;
    Ok(Prepared { project, prompt })
}

fn read_prompt(args: &ExecArgs) -> anyhow::Result<String> {
    let joined = args.prompt.join(" ");
    if !joined.is_empty() && joined != "-" {
        return Ok(joined);
    }
    let stdin = std::io::stdin();
    anyhow::ensure!(
        !stdin.is_terminal(),
        "no prompt given; pass it as an argument or on standard input"
    );
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .context("cannot read the prompt from standard input")?;
    anyhow::ensure!(!text.trim().is_empty(), "the prompt is empty");
    Ok(text)
}

fn emit_json(event: &Event) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

fn fail(args: &ExecArgs, kind: ErrorKind, message: &str, code: u8) -> ExitCode {
    tracing::info!(%message, "exec failed");
    if args.json {
        emit_json(&Event::Error {
            kind,
            message: message.to_string(),
        });
    }
    eprintln!("north: error: {message}");
    ExitCode::from(code)
}

/// Text rendering of events for a terminal or a pipe.
struct Human {
    at_line_start: AtomicBool,
}

impl Human {
    fn out(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        if let Some(last) = text.chars().last() {
            self.at_line_start.store(last == '\n', Ordering::Relaxed);
        }
    }

    fn line(&self, text: &str) {
        if !self.at_line_start.load(Ordering::Relaxed) {
            self.out("\n");
        }
        self.out(&format!("{text}\n"));
    }

    /// Ends the transcript on a line of its own.
    fn finish(&self) {
        if !self.at_line_start.load(Ordering::Relaxed) {
            self.out("\n");
        }
    }

    fn render(&self, event: &Event) {
        match event {
            Event::AssistantText { text } => self.out(text),
            Event::ToolIntent { line, .. } => self.line(&format!("• {line}")),
            Event::ToolResult { ok, summary, .. } => {
                self.line(&format!("  {} {summary}", if *ok { "↳" } else { "✗" }))
            }
            Event::Diff { diff, .. } => self.line(diff.trim_end()),
            Event::ApprovalDecided { decision, .. } => {
                let word = match decision {
                    ApprovalDecision::Accept => "accepted",
                    ApprovalDecision::Reject => "rejected",
                    ApprovalDecision::RunOnce => "allowed once",
                    ApprovalDecision::Always => "always allowed",
                    ApprovalDecision::Deny => "denied",
                    ApprovalDecision::Grant => "granted",
                };
                self.line(&format!("  [{word}]"));
            }
            Event::Error {
                kind: ErrorKind::Interrupted,
                ..
            } => eprintln!("north: interrupted"),
            Event::Error { message, .. } => eprintln!("north: error: {message}"),
            Event::SessionStarted { .. }
            | Event::TurnStarted { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::TurnEnd { .. } => {}
        }
    }
}

async fn run(args: &ExecArgs, p: Prepared, redactor: Redactor) -> ExitCode {
    let choice = match (&args.resume, args.continue_latest) {
        (Some(id), _) => setup::SessionChoice::Resume(id.clone()),
        (None, true) => setup::SessionChoice::Latest,
        (None, false) => setup::SessionChoice::New,
    };
    let session = match p.project.session(&choice) {
        Ok(s) => s,
        Err(e) => return fail(args, ErrorKind::Config, &format!("{e:#}"), EXIT_USAGE),
    };
    let approver = FlagApprover {
        approve_edits: p.project.config.approve_edits.value,
        allow_shell: p.project.config.allow_shell.value,
        grants: args.grants.clone(),
        explain: true,
    };
    let session_id = session.id.clone();
    let mut agent = match p.project.agent(
        north_tools(),
        Arc::new(approver),
        session,
        redactor,
        args.max_tokens,
    ) {
        Ok(a) => a,
        Err(e) => return fail(args, ErrorKind::Config, &format!("{e:#}"), EXIT_USAGE),
    };
    for cap in &args.grants {
        agent.grant(cap);
    }
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let denied = Arc::new(Mutex::new(false));
    let human = Human {
        at_line_start: AtomicBool::new(true),
    };
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
            human.render(&event);
        }
    };
    emit(Event::SessionStarted {
        session_id: session_id.clone(),
        provider: p.project.selected.provider.clone(),
        model: p.project.selected.model.clone(),
    });
    let end = agent.run_turn(&p.prompt, &emit, &cancel).await;
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
    }
}
