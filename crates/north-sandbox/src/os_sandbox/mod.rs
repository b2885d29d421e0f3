//! The OS sandbox a command runs in (Linux): what it may write, whether it
//! may open network sockets, and which process-inspection calls it may make.
//!
//! [`enter`] confines the *current* process and is meant to run in a
//! single-threaded process right before it executes the command (`north
//! sandbox -- CMD` does exactly that), so everything the command starts
//! inherits the confinement:
//!
//! - **One policy:** every child gets a typed [`SandboxPolicy`], derived
//!   from the project's [`SandboxSettings`] by its [`ChildKind`]; the
//!   spawner turns it into the launcher's arguments in one place.
//! - **Supervisor ([`supervise`]):** the launcher forks before confining;
//!   the parent stays outside, sets aside git configuration a command
//!   creates the moment it appears, and dies with North.
//! - **Filesystem (Landlock):** writes only under the project root, the
//!   system temp dir, the paths the user adds and a few devices
//!   (`/dev/null`, ttys).
//! - **Home (mount namespace):** `$HOME` is an empty tmpfs but for an
//!   allow-list of toolchains and caches ([`HOME_READABLE`], the `PATH`
//!   directories, the user's `sandbox.allow_read`) and a git identity
//!   without credentials.
//! - **Hidden (mount namespace):** the user's secret stores ([`secret_paths`]:
//!   `~/.ssh`, `~/.aws`, North's own config and state, …) and the paths the
//!   user adds are covered — an empty read-only tmpfs over a directory,
//!   `/dev/null` over a file — also where the allow-list would reach them.
//! - **Read-only inside the root (mount namespace):** what can make git run
//!   code or change what it runs (`.git/config`, `.git/hooks`, `.git/info`,
//!   `.git/modules`, `.git/worktrees`, a `.git` file) and `.north/` are
//!   bind-mounted read-only (created empty first where missing); the rest
//!   of `.git` (objects, refs, index) stays writable so commits work, and
//!   `.git` itself is pinned (it cannot be renamed away and replaced).
//! - **Processes:** at most [`SandboxPolicy::max_processes`] more at once
//!   (`RLIMIT_NPROC`, or a `pids` cgroup as root), so a fork bomb stops.
//! - **Temp dir (mount namespace):** a private tmpfs over the system temp
//!   dir; what the command needs from the real one is bound back.
//! - **Processes (PID namespace):** the command is the child of a private
//!   init with its own `/proc`: it sees only its own processes, and when it
//!   exits everything it started dies with it.
//! - **Network (network namespace, `netns`):** with per-domain grants a
//!   command gets a namespace of its own whose one way out is a bridge to
//!   North's proxy, which decides host by host ([`Network::Proxied`]).
//! - **System calls (seccomp):** socket families by allow-list (`AF_UNIX`
//!   only when the user allows it, `AF_INET`/`AF_INET6` only with the
//!   whole-network grant or inside the proxied namespace, nothing else); `TIOCSTI`/`TIOCLINUX`, `ptrace`,
//!   `process_vm_readv/writev`, the keyring, mounts and io_uring always
//!   fail with `EPERM`; x32 system calls are refused, other architectures
//!   killed.
//!
//! What the kernel cannot do is reported, never claimed: [`Protection`]
//! says which layers are in force, and [`Protection::gaps`] names the rest.
//! This module must not spawn processes or talk to the user.

pub mod gitguard;
#[cfg(target_os = "linux")]
mod home;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod netns;
#[cfg(target_os = "linux")]
mod pidns;
mod policy;
#[cfg(target_os = "linux")]
mod private_tmp;
#[cfg(target_os = "linux")]
mod procs;
#[cfg(target_os = "linux")]
mod seccomp_arch;
#[cfg(target_os = "linux")]
mod supervise;

#[cfg(target_os = "linux")]
pub use supervise::supervise;

use std::path::PathBuf;

pub use policy::{
    ChildKind, DEFAULT_MAX_PROCESSES, HOME_READABLE, Network, PROXY_PORT, SandboxPolicy,
    SandboxSettings, TempDir, WorktreeGit, home_paths_named,
};

/// The user's secret stores under `home` (and North's own config and state
/// directories) that exist: what every sandboxed command is kept from
/// reading.
pub(crate) fn secret_paths(home: Option<&std::path::Path>, xdg: &XdgDirs) -> Vec<PathBuf> {
    const IN_HOME: &[&str] = &[
        ".ssh",
        ".aws",
        ".azure",
        ".gnupg",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".docker/config.json",
        ".kube",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".config/gh",
        ".config/gcloud",
        ".config/hub",
        ".config/git/credentials",
        ".config/north",
        ".local/state/north",
        ".local/share/north",
        ".password-store",
        ".vault-token",
    ];
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(home) = home {
        out.extend(IN_HOME.iter().map(|p| home.join(p)));
    }
    for dir in [&xdg.config, &xdg.state, &xdg.data].into_iter().flatten() {
        out.push(dir.join("north"));
    }
    if let Some(runtime) = &xdg.runtime {
        // `north serve`'s socket and capability token: a command that read
        // the token could answer its own permission questions. Made now, so
        // it is covered even for a command that outlives a server's start.
        let north = runtime.join("north");
        if std::fs::create_dir_all(&north).is_ok() {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&north, std::fs::Permissions::from_mode(0o700));
        }
        out.push(north);
    }
    if let Some(config) = &xdg.config {
        out.push(config.join("gh"));
        out.push(config.join("gcloud"));
    }
    out.sort();
    out.dedup();
    out.retain(|p| p.symlink_metadata().is_ok());
    out
}

/// The XDG base directories the user set (None: not set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct XdgDirs {
    /// `XDG_CONFIG_HOME`.
    pub config: Option<PathBuf>,
    /// `XDG_STATE_HOME`.
    pub state: Option<PathBuf>,
    /// `XDG_DATA_HOME`.
    pub data: Option<PathBuf>,
    /// `XDG_RUNTIME_DIR`.
    pub runtime: Option<PathBuf>,
}

impl XdgDirs {
    /// The XDG directories from this process's environment.
    pub fn from_env() -> Self {
        let var = |n: &str| {
            std::env::var_os(n)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        XdgDirs {
            config: var("XDG_CONFIG_HOME"),
            state: var("XDG_STATE_HOME"),
            data: var("XDG_DATA_HOME"),
            runtime: var("XDG_RUNTIME_DIR"),
        }
    }
}

/// Which layers of the sandbox are in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    /// The Landlock ABI enforced, when filesystem confinement is on.
    pub landlock_abi: Option<i32>,
    /// Whether the seccomp filter is installed.
    pub seccomp: bool,
    /// The paths the command may write.
    pub writable: Vec<PathBuf>,
    /// The paths made read-only inside the root.
    pub read_only: Vec<PathBuf>,
    /// The paths hidden from the command (secret stores and the user's).
    pub hidden: Vec<PathBuf>,
    /// The home directory, when every path in it but [`Protection::home_readable`]
    /// is hidden.
    pub home: Option<PathBuf>,
    /// What under the home directory stays readable.
    pub home_readable: Vec<PathBuf>,
    /// The temp dir covered by a private one, if it is.
    pub private_tmp: Option<PathBuf>,
    /// Whether the command runs in a PID namespace of its own (it sees
    /// only its processes; all of them end with it).
    pub pid_namespace: bool,
    /// Whether the command's network is its own namespace, bridged to
    /// North's proxy (a proxied policy without it has no network).
    pub proxied: bool,
    /// Whether the read-only directories could be enforced (they need a
    /// user and mount namespace).
    pub namespaces: bool,
    /// How the process ceiling is enforced (None: it is not).
    pub process_limit: Option<String>,
}

impl Protection {
    /// How `--explain` says what the network is.
    fn network_text(&self, network: &Network) -> String {
        match network {
            Network::On => "allowed (the whole-network grant `net`)".to_string(),
            Network::Off =>
                "refused (AF_INET/AF_INET6 sockets fail; per-domain grants go through North's proxy)"
                    .to_string(),
            Network::Proxied(socket) if self.proxied => format!(
                "only through North's proxy ({}): a network namespace of its own, bridged from 127.0.0.1:{} (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY set); the proxy allows a host only under a `net:<domain>` grant and never a private address a grant does not name",
                socket.display(),
                PROXY_PORT
            ),
            Network::Proxied(_) => "refused (the kernel gave no network namespace to bridge to North's proxy)".to_string(),
        }
    }

    /// What is missing, as short phrases (`no Landlock`, …); empty when the
    /// sandbox is complete.
    pub fn gaps(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.landlock_abi.is_none() {
            out.push("no Landlock: writes are not confined");
        }
        if !self.seccomp {
            out.push("no seccomp: network and ptrace are not filtered");
        }
        if !self.namespaces {
            out.push(
                "no user namespaces: .git and .north are writable and secret stores are readable",
            );
        }
        if self.namespaces && !self.pid_namespace {
            out.push("no PID namespace: other processes are visible and a daemon can outlive the command");
        }
        if self.process_limit.is_none() {
            out.push("no process limit: only the system's limits stop a fork bomb");
        }
        out
    }
}

impl Protection {
    /// A report for a person: what the command may write, what is hidden
    /// and read-only, what the network and sockets are, and which kernel
    /// features are in use or missing (`north sandbox --explain`).
    pub fn explain(&self, spec: &SandboxPolicy) -> String {
        let list = |paths: &[PathBuf]| {
            if paths.is_empty() {
                "  (none)\n".to_owned()
            } else {
                paths
                    .iter()
                    .map(|p| format!("  {}\n", p.display()))
                    .collect()
            }
        };
        let mut out = String::new();
        out.push_str("writable:\n");
        out.push_str(&list(&self.writable));
        if spec.project_writable {
            out.push_str("read-only inside the project:\n");
            out.push_str(&list(&self.read_only));
        } else {
            out.push_str(&format!(
                "project {}: read-only, all of it (a command North verified as read-only)\n",
                spec.root.display()
            ));
        }
        out.push_str("hidden (cannot be read):\n");
        out.push_str(&list(&self.hidden));
        match &self.home {
            Some(home) => {
                out.push_str(&format!(
                    "home {}: hidden but for (sandbox.allow_read adds more):\n",
                    home.display()
                ));
                out.push_str(&list(&self.home_readable));
            }
            None => out.push_str("home: not covered\n"),
        }
        out.push_str(&format!("network: {}\n", self.network_text(&spec.network)));
        out.push_str(&format!(
            "unix sockets: {}\n",
            if spec.unix_sockets {
                "allowed"
            } else {
                "refused (socketpair between the command's own processes still works)"
            }
        ));
        out.push_str(
            "other sockets: refused (netlink, packet, vsock and every other family)\n\
             terminal: TIOCSTI and TIOCLINUX refused; every child but the shell starts without a controlling terminal\n",
        );
        out.push_str(&format!(
            "temp dir: {}\n",
            self.private_tmp.as_ref().map_or_else(
                || "shared".to_owned(),
                |t| format!("{} is private to the command", t.display())
            )
        ));
        out.push_str(&format!(
            "process limit: {}\n",
            self.process_limit.as_deref().unwrap_or("none")
        ));
        out.push_str("kernel features:\n");
        out.push_str(&format!(
            "  landlock: {}\n",
            self.landlock_abi
                .map_or_else(|| "missing".to_owned(), |abi| format!("ABI {abi}"))
        ));
        let on = |b: bool| if b { "in use" } else { "missing" };
        out.push_str(&format!("  seccomp: {}\n", on(self.seccomp)));
        out.push_str(&format!(
            "  user + mount namespaces: {}\n",
            on(self.namespaces)
        ));
        out.push_str(&format!("  PID namespace: {}\n", on(self.pid_namespace)));
        let gaps = self.gaps();
        if gaps.is_empty() {
            out.push_str("complete: every layer is in force\n");
        } else {
            out.push_str(&format!("partial: {}\n", gaps.join("; ")));
        }
        out
    }
}

/// Failures that leave the command unconfined where it was asked to be
/// confined; the caller must not run the command.
#[derive(Debug, thiserror::Error)]
pub enum OsSandboxError {
    /// A step of the confinement failed.
    #[error("sandbox: cannot {what}: {reason}")]
    Setup {
        /// The step.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The platform has no sandbox North can use.
    #[error("sandbox: not supported on this platform")]
    Unsupported,
}

/// Confines the current process as one of North's own long-lived helpers
/// (the snapshot watcher), which runs no command: it may read what the
/// user can, write only under `writable` (which must exist), execute
/// nothing, open no TCP connection or port, and not signal or reach
/// abstract sockets outside itself. Returns the Landlock ABI in force
/// (None where the kernel has no Landlock: the helper then runs as North
/// does).
pub fn confine_helper(writable: &[PathBuf]) -> Result<Option<i32>, OsSandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::confine_helper(writable)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = writable;
        Err(OsSandboxError::Unsupported)
    }
}

/// Confines the current process (see the module documentation). Layers the
/// kernel lacks are skipped and reported in the returned [`Protection`];
/// a layer that exists but fails to apply is an error.
pub fn enter(spec: &SandboxPolicy) -> Result<Protection, OsSandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::enter(spec)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = spec;
        Err(OsSandboxError::Unsupported)
    }
}
