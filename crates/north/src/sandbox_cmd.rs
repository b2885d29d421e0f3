//! `north sandbox -- CMD`: runs any command under the OS sandbox North's
//! children get — the launcher every confined child starts through, and a
//! way to inspect it (`--explain`). Says once what the kernel cannot
//! enforce.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use north_protocol::Capability;
use north_tools::os_sandbox::{ChildKind, Network, SandboxPolicy, TempDir, enter};

/// `north sandbox` options.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Grant a capability (`net` allows network sockets; a per-domain
    /// `net:HOST` opens nothing here — in a session, and with `--explain`,
    /// it gives the command North's proxy, which reaches only granted
    /// hosts); repeatable.
    #[arg(long = "grant", value_name = "CAP")]
    pub grants: Vec<Capability>,
    /// Reach the network only through North's proxy at this Unix socket
    /// (the command gets a network namespace of its own, bridged to it,
    /// and the proxy variables); what North's spawner passes when the
    /// session has per-domain network grants.
    #[arg(long, value_name = "SOCKET", conflicts_with = "explain")]
    pub proxy: Option<PathBuf>,
    /// Another directory the command may write; repeatable.
    #[arg(long = "write", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// A path inside a writable directory the command may read but not
    /// change; repeatable.
    #[arg(long = "read-only", value_name = "PATH")]
    pub read_only: Vec<PathBuf>,
    /// Another path the command may not read (besides the secret stores
    /// North always hides); repeatable.
    #[arg(long = "hide", value_name = "PATH")]
    pub hidden: Vec<PathBuf>,
    /// A path under your home directory the command may read besides the
    /// built-in allow-list of toolchains and caches; repeatable.
    #[arg(long = "read", value_name = "PATH")]
    pub readable: Vec<PathBuf>,
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
    /// Make the project read-only to the command (as North runs a command
    /// it verified as read-only without asking).
    #[arg(long)]
    pub read_only_project: bool,
    /// How many processes the command may run at once (a fork bomb stops there).
    #[arg(long, value_name = "N", default_value_t = north_tools::os_sandbox::DEFAULT_MAX_PROCESSES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_processes: u64,
    /// Print what is writable, read-only and hidden, the network, sockets
    /// and the kernel features in use or missing, then exit (no command
    /// needed). Without policy flags it shows the policy North gives a
    /// child of the `--for` kind in this project, from your config.
    #[arg(long)]
    pub explain: bool,
    /// With `--explain`: the kind of child whose policy to show.
    #[arg(long = "for", value_enum, value_name = "KIND", default_value_t = Kind::Command,
          requires = "explain")]
    pub kind: Kind,
    /// The command and its arguments (after `--`).
    #[arg(value_name = "CMD", num_args = 1.., required_unless_present = "explain", last = true)]
    pub command: Vec<String>,
}

/// The kinds of child `--explain --for` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// A command (the shell, a background job, `north tool`, North's own git).
    Command,
    /// A hook.
    Hook,
    /// A stdio MCP server.
    Mcp,
    /// A command North verified as read-only, run without asking.
    ReadOnly,
    /// A language server.
    Lsp,
}

impl SandboxArgs {
    /// Whether any flag shapes the policy (else `--explain` shows the
    /// configured one).
    fn shapes_policy(&self) -> bool {
        !(self.grants.iter().all(|g| g.host().is_some())
            && self.writable.is_empty()
            && self.read_only.is_empty()
            && self.hidden.is_empty()
            && self.readable.is_empty()
            && self.keep.is_empty())
            || self.shared_tmp
            || self.proxy.is_some()
            || self.unix_sockets
            || self.read_only_project
            || self.max_processes != north_tools::os_sandbox::DEFAULT_MAX_PROCESSES
    }

    /// The policy these flags say, with paths resolved against `cwd`.
    fn policy(&self, root: &Path, cwd: &Path) -> anyhow::Result<SandboxPolicy> {
        let physical = |p: &Path| {
            north_tools::sandbox::physical_path(cwd, p)
                .with_context(|| format!("cannot resolve {}", p.display()))
        };
        let lenient = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter_map(|p| physical(p).ok()).collect()
        };
        Ok(SandboxPolicy {
            root: physical(root)?,
            writable: self
                .writable
                .iter()
                .map(|p| physical(p))
                .collect::<anyhow::Result<_>>()?,
            read_only: lenient(&self.read_only),
            hidden: lenient(&self.hidden),
            home_readable: lenient(&self.readable),
            keep: lenient(&self.keep),
            network: match &self.proxy {
                _ if self.grants.contains(&Capability::Net) => Network::On,
                Some(socket) => Network::Proxied(socket.clone()),
                None => Network::Off,
            },
            unix_sockets: self.unix_sockets,
            temp: if self.shared_tmp {
                TempDir::Shared
            } else {
                TempDir::Private
            },
            max_processes: self.max_processes,
            project_writable: !self.read_only_project,
        })
    }
}

/// The policy of the spawner North builds for a child of `kind` in `root`
/// from the user's config: `--explain` without flags shows the spawner's
/// own value, not a second derivation of it.
fn configured(root: &Path, kind: Kind, grants: &[Capability]) -> anyhow::Result<SandboxPolicy> {
    let choice = north_runtime::SandboxChoice::for_project(root, None);
    let kind = match kind {
        Kind::Command => ChildKind::Command,
        Kind::Hook => ChildKind::Hook { network: false },
        Kind::Mcp => ChildKind::McpServer,
        Kind::ReadOnly => ChildKind::ReadOnlyCommand,
        Kind::Lsp => ChildKind::LanguageServer,
    };
    let mut settings = choice.settings(root, &[]);
    if grants.contains(&Capability::Net) {
        settings.network = Network::On;
    } else {
        // A session starts the proxy and makes its socket; shown here is
        // where a session's would be (this process starts none: the
        // sandbox needs it single-threaded).
        settings.network =
            Network::Proxied(std::env::temp_dir().join("north-egress-SESSION/proxy.sock"));
    }
    let spawner = north_runtime::sandboxing::sandboxed(&settings, kind)?;
    spawner
        .policy()
        .cloned()
        .context("the sandboxed spawner has no policy")
}

/// What North's proxy allows a command in `root` to reach under `grants`
/// and the user's config, as `--explain` lists it.
fn network_rule(root: &Path, grants: &[Capability]) -> String {
    let choice = north_runtime::SandboxChoice::for_project(root, None);
    let mut rules = choice.rules(grants);
    rules.grants.extend(
        north_runtime::egress::remembered_hosts(root)
            .into_iter()
            .map(Capability::NetHost),
    );
    let hosts: Vec<String> = rules.grants.iter().map(ToString::to_string).collect();
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    format!(
        "hosts the proxy allows: {} (a session adds what you answer at its question)\nhosts denied whatever grants them: {}\n",
        list(&hosts),
        list(&rules.deny)
    )
}

/// Confines this process and replaces it with the command; returns only
/// when that fails.
pub fn main(args: SandboxArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let policy = if args.explain && !args.shapes_policy() {
        let root = north_tools::sandbox::physical_path(&cwd, &root)
            .with_context(|| format!("cannot resolve {}", root.display()))?;
        configured(&root, args.kind, &args.grants)?
    } else {
        args.policy(&root, &cwd)?
    };
    if !args.explain {
        // The supervisor stays outside; only the child comes back.
        #[cfg(target_os = "linux")]
        north_tools::os_sandbox::supervise(&policy.root)?;
    }
    // Read before the sandbox hides the user's state and config.
    let rule = (args.explain && matches!(policy.network, Network::Proxied(_)))
        .then(|| network_rule(&root, &args.grants));
    let protection = enter(&policy)?;
    if args.explain {
        print!("{}", protection.explain(&policy));
        if let Some(rule) = rule {
            print!("{rule}");
        }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SandboxArgs,
    }

    /// The spawner's arguments parse back into the policy it was given:
    /// the launcher applies exactly the policy the spawner decided.
    #[test]
    fn the_launcher_reads_back_the_policy_the_spawner_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("p");
        std::fs::create_dir_all(&root).unwrap();
        let mut settings = north_tools::os_sandbox::SandboxSettings::new(root.clone());
        settings.hidden = vec![base.join("secret")];
        settings.home_readable = vec![base.join("tools")];
        settings.unix_sockets = true;
        for network in [
            Network::On,
            Network::Proxied(base.join("egress/proxy.sock")),
        ] {
            settings.network = network;
            for kind in [
                ChildKind::Command,
                ChildKind::Hook { network: true },
                ChildKind::Hook { network: false },
                ChildKind::McpServer,
                ChildKind::ReadOnlyCommand,
            ] {
                let spawner = north_runtime::sandboxing::sandboxed(&settings, kind).unwrap();
                let mut policy = spawner.policy().unwrap().clone();
                policy.keep.push(base.join("kept"));
                let mut argv: Vec<std::ffi::OsString> = vec!["sandbox".into()];
                argv.extend(policy.to_args());
                argv.push("true".into());
                let parsed = Cli::try_parse_from(argv).unwrap().args;
                assert_eq!(parsed.policy(&root, &base).unwrap(), policy, "{kind:?}");
            }
        }
    }
}
