//! `north sandbox -- CMD`: runs any command under the OS sandbox North's
//! commands get, for inspection (what can it write, can it reach the
//! network). Says once what the kernel cannot enforce.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use north_protocol::Capability;
use north_tools::os_sandbox::{SandboxSpec, enter};

/// `north sandbox` options.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Grant a capability (`net` allows network sockets); repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<Capability>,
    /// Another directory the command may write; repeatable.
    #[arg(long = "write", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// Another path the command may not read (besides the secret stores
    /// North always hides); repeatable.
    #[arg(long = "hide", value_name = "PATH")]
    pub hidden: Vec<PathBuf>,
    /// A path under the temp dir the command needs from the real one (the
    /// rest of the temp dir is private to it); repeatable.
    #[arg(long = "keep", value_name = "PATH")]
    pub keep: Vec<PathBuf>,
    /// Share the system temp dir with the command instead of giving it a
    /// private one (for services run from there, such as MCP servers).
    #[arg(long)]
    pub shared_tmp: bool,
    /// Let the command create Unix sockets (a local socket it serves or
    /// connects to; off by default, since sockets outside reach servers
    /// that run anything).
    #[arg(long)]
    pub unix_sockets: bool,
    /// How many processes the command may run at once (a fork bomb stops there).
    #[arg(long, value_name = "N", default_value_t = north_tools::os_sandbox::DEFAULT_MAX_PROCESSES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_processes: u64,
    /// Print what is writable, read-only and hidden, and the kernel features
    /// in use or missing, then exit (no command needed).
    #[arg(long)]
    pub explain: bool,
    /// The command and its arguments (after `--`).
    #[arg(value_name = "CMD", num_args = 1.., required_unless_present = "explain", last = true)]
    pub command: Vec<String>,
}

/// Confines this process and replaces it with the command; returns only
/// when that fails.
pub fn main(args: SandboxArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let physical = |p: &std::path::Path| {
        north_tools::sandbox::physical_path(&cwd, p)
            .with_context(|| format!("cannot resolve {}", p.display()))
    };
    let spec = SandboxSpec {
        root: physical(&root)?,
        writable: args
            .writable
            .iter()
            .map(|p| physical(p))
            .collect::<anyhow::Result<_>>()?,
        net: args
            .grants
            .iter()
            .any(|c| matches!(c, Capability::Net | Capability::NetHost(_))),
        max_processes: args.max_processes,
        hidden: args
            .hidden
            .iter()
            .filter_map(|p| physical(p).ok())
            .collect(),
        unix_sockets: args.unix_sockets,
        keep: args.keep.iter().filter_map(|p| physical(p).ok()).collect(),
        private_tmp: !args.shared_tmp,
    };
    let protection = enter(&spec)?;
    if args.explain {
        print!("{}", protection.explain(&spec));
        return Ok(ExitCode::SUCCESS);
    }
    let gaps = protection.gaps();
    if !gaps.is_empty() {
        eprintln!("sandbox: partial — {}", gaps.join("; "));
    }
    let (program, rest) = args
        .command
        .split_first()
        .context("no command given (north sandbox -- CMD ...)")?;
    let rest: Vec<std::ffi::OsString> = rest.iter().map(Into::into).collect();
    let err = north_tools::Spawner::exec_in_place(program.as_ref(), &rest, &cwd);
    anyhow::bail!("cannot run {program}: {err}")
}
