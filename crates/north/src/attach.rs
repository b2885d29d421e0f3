//! `north exec --attach`: a turn in a session of a running `north serve`,
//! whose project (and its MCP servers) is already warm. The server's
//! events are rendered exactly as a cold `north exec` renders its own
//! (text, or JSONL with `--json`); permission questions are answered by
//! the same flags (`--approve-edits`, `--allow-shell`, `--yes`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, LoadSessionRequest, NewSessionRequest,
    PermissionOptionKind, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, StopReason,
    TextContent, ToolKind,
};
use agent_client_protocol::{Agent, Lines};
use anyhow::Context;
use futures::{SinkExt, StreamExt};
use north_acp::Listen;
use north_acp::ext::{NorthEvent, PermissionRefused};
use north_protocol::{ApprovalDecision, ErrorKind, Event};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::args::ExecArgs;
use crate::output::{
    EXIT_DENIED, EXIT_INTERRUPTED, EXIT_PROVIDER, EXIT_STEP_LIMIT, EXIT_USAGE, Text, emit_json,
    fail,
};
use crate::serve_cmd::{default_socket, token_file};

pub(crate) use north_acp::{LineSink, LineStream};

/// Runs `north exec --attach`.
pub fn main(args: &ExecArgs, address: &str, prompt: Option<String>) -> ExitCode {
    let Some(prompt) = prompt else {
        return fail(
            args.json,
            ErrorKind::Config,
            "--attach needs a prompt (continuing an unfinished turn is for a cold `north exec --resume`)",
            EXIT_USAGE,
        );
    };
    let runtime = match crate::output::current_thread(args.json) {
        Ok(r) => r,
        Err(code) => return code,
    };
    match runtime.block_on(run(args, address, prompt)) {
        Ok(code) => code,
        Err(e) => fail(
            args.json,
            ErrorKind::Config,
            &crate::output::error_line(&e),
            EXIT_USAGE,
        ),
    }
}

/// Where the server is and the token file that opens it.
pub(crate) fn target(address: &str, token: Option<&Path>) -> anyhow::Result<(Listen, PathBuf)> {
    let listen = if address.is_empty() || address == "default" {
        Listen::Unix(default_socket())
    } else if address.starts_with("unix:") || address.starts_with("ws://") {
        address.parse()?
    } else {
        Listen::Unix(PathBuf::from(address))
    };
    let token = match (token, &listen) {
        (Some(t), _) => t.to_path_buf(),
        (None, Listen::Unix(path)) => token_file(path),
        (None, Listen::Ws(_)) => token_file(&default_socket()),
    };
    Ok((listen, token))
}

/// A unix socket that is not there is said plainly, before its token is
/// looked for.
pub(crate) fn server_exists(listen: &Listen) -> anyhow::Result<()> {
    if let Listen::Unix(path) = listen {
        anyhow::ensure!(
            path.exists(),
            "no North server listens on {} (start one with `north serve`)",
            path.display()
        );
    }
    Ok(())
}

/// Connects, presents the token, and returns the line transport.
pub(crate) async fn connect(
    listen: &Listen,
    token: &str,
) -> anyhow::Result<(LineSink, LineStream)> {
    match listen {
        Listen::Unix(path) => {
            let stream = tokio::net::UnixStream::connect(path)
                .await
                .with_context(|| {
                    format!(
                        "no North server answers on {} (start one with `north serve`)",
                        path.display()
                    )
                })?;
            let (read, mut write) = stream.into_split();
            write
                .write_all(format!("{}\n", serde_json::json!({ "token": token })).as_bytes())
                .await?;
            let sink = futures::sink::unfold(write, async |mut w, line: String| {
                w.write_all(line.as_bytes()).await?;
                w.write_all(b"\n").await?;
                Ok::<_, std::io::Error>(w)
            });
            let lines = futures::stream::unfold(BufReader::new(read), async |mut r| {
                let mut line = String::new();
                match r.read_line(&mut line).await {
                    Ok(0) => None,
                    Ok(_) => Some((Ok(line.trim_end().to_string()), r)),
                    Err(e) => Some((Err(e), r)),
                }
            });
            Ok((Box::pin(sink), Box::pin(lines)))
        }
        Listen::Ws(addr) => {
            use tokio_tungstenite::tungstenite::Message;
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            let stream = tokio::net::TcpStream::connect(addr)
                .await
                .with_context(|| format!("no North server answers on ws://{addr}"))?;
            let mut request = format!("ws://{addr}/").into_client_request()?;
            request
                .headers_mut()
                .insert("authorization", format!("Bearer {token}").parse()?);
            let (ws, _) = tokio_tungstenite::client_async(request, stream)
                .await
                .context("the server refused the WebSocket (a wrong token?)")?;
            let (sink, source) = ws.split();
            let sink = sink
                .sink_map_err(std::io::Error::other)
                .with(async |line: String| Ok::<_, std::io::Error>(Message::text(line)));
            let lines = source.filter_map(async |m| match m {
                Ok(Message::Text(t)) => Some(Ok(t.as_str().to_string())),
                Ok(_) => None,
                Err(e) => Some(Err(std::io::Error::other(e))),
            });
            Ok((Box::pin(sink), Box::pin(lines)))
        }
    }
}

/// What the run saw: whether something was refused.
#[derive(Default)]
struct Seen {
    denied: bool,
}

async fn run(args: &ExecArgs, address: &str, prompt: String) -> anyhow::Result<ExitCode> {
    let (listen, token_path) = target(address, args.token_file.as_deref())?;
    server_exists(&listen)?;
    let token = north_acp::Token::read(&token_path)?;
    let (sink, lines) = connect(&listen, token.secret()).await?;
    let cwd = match &args.model.path {
        Some(p) => std::fs::canonicalize(p).with_context(|| format!("--path {}", p.display()))?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let json = args.json;
    let human = Arc::new(Text::default());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (render, seen_events) = (human.clone(), seen.clone());
    let stop = CancellationToken::new();
    crate::stop::cancel_on_stop(stop.clone());
    let flags = FlagAnswers((
        args.approvals.approve_edits,
        args.approvals.allow_shell,
        args.approvals.yes,
    ));
    let resume = args.resume.clone();
    let outcome = agent_client_protocol::Client
        .v1()
        .on_receive_notification(
            async move |n: NorthEvent, _cx| {
                if let Event::ApprovalDecided {
                    decision: ApprovalDecision::Deny | ApprovalDecision::Reject,
                    ..
                } = &n.event
                    && let Ok(mut s) = seen_events.lock()
                {
                    s.denied = true;
                }
                if json {
                    emit_json(&n.event);
                } else {
                    render.event(&n.event, true);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_notification(
            async move |_n: SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_notification(
            async move |n: PermissionRefused, _cx| {
                tracing::info!(call = %n.tool_call_id, "another client answered first");
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, _cx| {
                responder.respond(flags.answer(&req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(
            Lines::new(sink, lines),
            async move |cx: ConnectionTo<Agent>| turn(&cx, cwd, resume, prompt, json, stop).await,
        )
        .await;
    human.finish();
    let (id, reason) = match outcome {
        Ok(done) => done,
        Err(e) => anyhow::bail!("the server: {e}"),
    };
    if !json {
        eprintln!(
            "north: session {id} stays open on the server (attach again with --attach --resume {id})"
        );
    }
    let denied = seen.lock().map(|s| s.denied).unwrap_or(false);
    Ok(exit_code(reason, denied))
}

/// The exit code of a served turn's end, as a cold `north exec` has it.
fn exit_code(reason: StopReason, denied: bool) -> ExitCode {
    match reason {
        StopReason::EndTurn if denied => ExitCode::from(EXIT_DENIED),
        StopReason::EndTurn => ExitCode::SUCCESS,
        StopReason::MaxTurnRequests => ExitCode::from(EXIT_STEP_LIMIT),
        StopReason::Cancelled => ExitCode::from(EXIT_INTERRUPTED),
        _ => ExitCode::from(EXIT_PROVIDER),
    }
}

/// The flags' answers, for the permission handler.
#[derive(Clone, Copy)]
struct FlagAnswers((bool, bool, bool));

impl FlagAnswers {
    fn answer(self, req: &RequestPermissionRequest) -> RequestPermissionResponse {
        let (approve_edits, allow_shell, yes) = self.0;
        answer_by(approve_edits || yes, allow_shell || yes, req)
    }
}

fn answer_by(
    approve_edits: bool,
    allow_shell: bool,
    req: &RequestPermissionRequest,
) -> RequestPermissionResponse {
    let allowed = match req.tool_call.fields.kind {
        Some(ToolKind::Edit) => approve_edits,
        Some(ToolKind::Execute) => allow_shell,
        _ => false,
    };
    let wanted = if allowed {
        PermissionOptionKind::AllowOnce
    } else {
        PermissionOptionKind::RejectOnce
    };
    match req.options.iter().find(|o| o.kind == wanted) {
        Some(o) => RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(o.option_id.clone()),
        )),
        None => RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled),
    }
}

/// Initializes (asking for North's events), opens or attaches the session,
/// and runs the prompt; Ctrl+C cancels the turn on the server.
async fn turn(
    cx: &ConnectionTo<Agent>,
    cwd: PathBuf,
    resume: Option<String>,
    prompt: String,
    json: bool,
    stop: CancellationToken,
) -> Result<(String, StopReason), agent_client_protocol::Error> {
    let mut meta = serde_json::Map::new();
    meta.insert("north".into(), serde_json::json!({ "events": true }));
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta))
        .block_task()
        .await?;
    let id = match resume {
        Some(id) => {
            cx.send_request(LoadSessionRequest::new(id.clone(), cwd))
                .block_task()
                .await?;
            id
        }
        None => cx
            .send_request(NewSessionRequest::new(cwd))
            .block_task()
            .await?
            .session_id
            .to_string(),
    };
    if json {
        emit_json(
            &serde_json::json!({"type": "session_started", "session_id": id, "attached": true}),
        );
    }
    let request = PromptRequest::new(
        id.clone(),
        vec![ContentBlock::Text(TextContent::new(prompt))],
    );
    let running = cx.send_request(request).block_task();
    tokio::pin!(running);
    let done = tokio::select! {
        r = &mut running => r?,
        () = stop.cancelled() => {
            let _ = cx.send_notification(CancelNotification::new(id.clone()));
            running.await?
        }
    };
    Ok((id, done.stop_reason))
}
