//! `north serve`: one long-lived North that editors, scripts and several
//! terminals attach to, over a unix socket (and optionally a loopback
//! WebSocket), speaking ACP with North's extensions. Stdout carries one
//! JSON line when the server is ready; logs go to the log file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use north_acp::{Hub, Limits, Listen, Server, Token};
use north_agent::redact::Redactor;
use tokio_util::sync::CancellationToken;

use crate::acp_cmd::{AcpArgs, acp_runtime, tokio_runtime};
use crate::logging;

/// `north serve` options.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Model, project, grant and mode options every session starts with.
    #[command(flatten)]
    pub acp: AcpArgs,
    /// Where to listen: `unix:PATH` [default: serve.sock in the user's
    /// runtime dir] and/or `ws://127.0.0.1:PORT` (loopback only; port 0
    /// picks one); repeatable.
    #[arg(long, value_name = "ADDR")]
    pub listen: Vec<String>,
    /// Print the JSON Schema of every message and event, then exit.
    #[arg(long)]
    pub schema: bool,
    /// Clients one session may have attached at once.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_clients: u32,
    /// Messages queued for one client; a client that falls further behind
    /// (it stopped reading) is dropped.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_queued: u32,
}

/// The default socket: `serve.sock` in the user's runtime dir.
pub fn default_socket() -> PathBuf {
    north_config::runtime_dir().join("serve.sock")
}

/// The token file of the server on `socket`: always in North's runtime
/// dir, which every sandboxed command has hidden (a command that read the
/// token could answer its own permission questions), wherever the socket
/// is. The default socket's is `serve.sock.token`; another's is named
/// after its absolute path.
pub fn token_file(socket: &std::path::Path) -> PathBuf {
    let dir = north_config::runtime_dir();
    let socket = std::path::absolute(socket).unwrap_or_else(|_| socket.to_path_buf());
    if socket == default_socket() {
        return dir.join("serve.sock.token");
    }
    // FNV-1a: a stable name, not a secret.
    let hash = socket
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    dir.join(format!("serve-{hash:016x}.token"))
}

/// Runs `north serve`.
pub fn main(args: ServeArgs) -> ExitCode {
    if args.schema {
        let schema = north_acp::schema::document();
        println!(
            "{}",
            serde_json::to_string_pretty(&schema).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    let listen = match addresses(&args.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("north: error: {e}");
            return ExitCode::from(2);
        }
    };
    let redactor = Redactor::from_env();
    let log = logging::init(args.acp.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north serve starting");
    let runtime = Arc::new(acp_runtime(&args.acp, redactor));
    let tokio = match tokio_runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let limits = Limits {
        clients_per_session: args.max_clients as usize,
        queued_messages: args.max_queued as usize,
    };
    tokio.block_on(serve(runtime, limits, listen))
}

/// The addresses asked for, with the unix socket always among them.
fn addresses(given: &[String]) -> Result<Vec<Listen>, north_acp::ListenError> {
    let mut listen: Vec<Listen> = given.iter().map(|a| a.parse()).collect::<Result<_, _>>()?;
    if !listen.iter().any(|l| matches!(l, Listen::Unix(_))) {
        listen.insert(0, Listen::Unix(default_socket()));
    }
    Ok(listen)
}

async fn serve(
    runtime: Arc<north_acp::AcpRuntime>,
    limits: Limits,
    listen: Vec<Listen>,
) -> ExitCode {
    let socket = listen
        .iter()
        .find_map(|l| match l {
            Listen::Unix(p) => Some(p.clone()),
            Listen::Ws(_) => None,
        })
        .unwrap_or_else(default_socket);
    let tokens = token_file(&socket);
    let hub = Hub::new(runtime, limits, true);
    let started = async {
        let token = Token::create(&tokens)?;
        Server::bind(hub, token, &listen).await
    };
    let server = match started.await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("north: error: {e}");
            return ExitCode::from(1);
        }
    };
    let ready = serde_json::json!({
        "listen": server.addresses(),
        "token_file": tokens,
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{ready}");
    let _ = out.flush();
    drop(out);
    tracing::info!(listen = ?server.addresses(), "north serve ready");
    let stop = CancellationToken::new();
    crate::stop::cancel_on_stop(stop.clone());
    server.run(stop).await;
    let _ = std::fs::remove_file(&tokens);
    ExitCode::SUCCESS
}
