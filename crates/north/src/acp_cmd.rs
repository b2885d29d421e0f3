//! `north acp`: North as an Agent Client Protocol agent for one editor
//! connection on stdin/stdout (Zed, JetBrains IDEs, Neovim). Stdout carries
//! only the protocol; logs go to the log file and stderr.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use north_acp::AcpRuntime;
use north_agent::redact::Redactor;
use north_protocol::{Capability, PermissionMode};

use crate::args::{Mode, ModelArgs, RunFlags};
use crate::logging;

/// `north acp` options.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Model and project options (`--path` is ignored: each session's
    /// project is the editor's `cwd`).
    #[command(flatten)]
    pub model: ModelArgs,
    /// Grant a capability (`net`, `net:<domain>`) to every session; repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<Capability>,
    /// Permission mode sessions start in [default: the config key `mode`, else ask].
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
}

/// Runs `north acp`.
pub fn main(args: AcpArgs) -> ExitCode {
    let redactor = Redactor::from_env();
    let log = logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north acp starting");
    let runtime = acp_runtime(&args, redactor);
    let tokio = match tokio_runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    match tokio.block_on(north_acp::serve(Arc::new(runtime))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("north: error: the editor connection failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// What every session is opened with: the user's flags, mode and redactor
/// (`north acp` and `north serve`).
pub fn acp_runtime(args: &AcpArgs, redactor: Redactor) -> AcpRuntime {
    AcpRuntime {
        options: args
            .model
            .project_options(&RunFlags::default(), &args.grants),
        mode: args.mode.map(PermissionMode::from),
        redactor,
    }
}

/// The multi-threaded runtime sessions run on; on failure, said and the
/// exit code.
pub fn tokio_runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("north: error: cannot start the runtime: {e}");
            ExitCode::from(1)
        })
}
