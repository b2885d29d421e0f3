//! `north exec`: one prompt, streamed to stdout.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use futures::StreamExt;
use north_llm::{LlmError, ResponseBuilder};
use north_protocol::{ChatRequest, ErrorKind, Event, Message, StreamDelta, Usage};
use tokio_util::sync::CancellationToken;

use crate::cli::ExecArgs;
use crate::provider;

/// Exit status for a provider or model failure.
const EXIT_PROVIDER: u8 = 1;
/// Exit status for invalid use or configuration.
const EXIT_USAGE: u8 = 2;
/// Exit status after Ctrl+C.
const EXIT_INTERRUPTED: u8 = 130;

/// Runs `north exec`.
pub fn main(args: ExecArgs) -> ExitCode {
    init_logging();
    let prompt = match read_prompt(&args) {
        Ok(p) => p,
        Err(e) => return fail(&args, ErrorKind::Config, &e, EXIT_USAGE),
    };
    let selected = match provider::select(&args) {
        Ok(s) => s,
        Err(e) => return fail(&args, ErrorKind::Config, &format!("{e:#}"), EXIT_USAGE),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return fail(
                &args,
                ErrorKind::Internal,
                &format!("cannot start runtime: {e}"),
                EXIT_PROVIDER,
            );
        }
    };
    runtime.block_on(run(args, selected, prompt))
}

fn init_logging() {
    // Warnings (unknown stream events, retries at debug) go to stderr;
    // NORTH_LOG overrides the filter, e.g. NORTH_LOG=north_llm=debug.
    let filter = tracing_subscriber::EnvFilter::try_from_env("NORTH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

fn read_prompt(args: &ExecArgs) -> Result<String, String> {
    let joined = args.prompt.join(" ");
    if !joined.is_empty() && joined != "-" {
        return Ok(joined);
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err("no prompt given; pass it as an argument or on standard input".into());
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the prompt from standard input: {e}"))?;
    if text.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(text)
}

fn emit(event: &Event) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

fn fail(args: &ExecArgs, kind: ErrorKind, message: &str, code: u8) -> ExitCode {
    if args.json {
        emit(&Event::Error {
            kind,
            message: message.to_string(),
        });
    }
    eprintln!("north: error: {message}");
    ExitCode::from(code)
}

async fn run(args: ExecArgs, selected: provider::Selected, prompt: String) -> ExitCode {
    tracing::debug!(provider = selected.provider.as_str(), model = %selected.model, "exec starting");
    let mut request = ChatRequest::new(selected.model.clone(), vec![Message::user(prompt)]);
    request.max_tokens = args.max_tokens;
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    if args.json {
        emit(&Event::TurnStarted { turn: 1 });
    }
    let mut stream = selected.backend.stream_chat(request, cancel);
    let mut builder = ResponseBuilder::new();
    let mut out = std::io::stdout().lock();
    let mut ends_with_newline = true;
    let mut failure: Option<LlmError> = None;
    while let Some(item) = stream.next().await {
        let delta = match item {
            Ok(d) => d,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        builder.push(&delta);
        match &delta {
            StreamDelta::Text { text } => {
                if args.json {
                    emit(&Event::AssistantText { text: text.clone() });
                } else {
                    let _ = out.write_all(text.as_bytes());
                    let _ = out.flush();
                    ends_with_newline = text.ends_with('\n');
                }
            }
            StreamDelta::ToolCallEnd { .. } | StreamDelta::Usage(_) | StreamDelta::Start { .. } => {
            }
            StreamDelta::ToolCallStart { .. }
            | StreamDelta::ToolCallArgs { .. }
            | StreamDelta::Stop { .. } => {}
        }
    }
    let response = builder.finish();
    if !args.json && !ends_with_newline {
        let _ = writeln!(out);
    }
    drop(out);
    // This first version of exec runs no tools; say what the model asked for.
    for call in response.tool_calls() {
        let line = format!(
            "Tool requested (not run by this command): `{}` {}",
            call.name, call.arguments
        );
        if args.json {
            emit(&Event::ToolIntent {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                line,
            });
        } else {
            eprintln!("{line}");
        }
    }
    if args.json {
        emit(&Event::Usage {
            usage: response.usage,
            total: response.usage,
        });
    }
    match failure {
        None => {
            if args.json {
                emit(&Event::TurnEnd {
                    stop_reason: response.stop_reason.clone(),
                    usage: response.usage,
                });
            }
            ExitCode::SUCCESS
        }
        Some(e) if e.is_cancelled() => {
            if args.json {
                emit(&Event::TurnEnd {
                    stop_reason: None,
                    usage: e.partial().map(|p| p.usage).unwrap_or_else(Usage::default),
                });
            }
            fail(
                &args,
                ErrorKind::Interrupted,
                "interrupted",
                EXIT_INTERRUPTED,
            )
        }
        Some(e) => fail(&args, ErrorKind::Provider, &e.to_string(), EXIT_PROVIDER),
    }
}
