//! The one sandbox policy: a typed value saying what a child may read,
//! write and reach, and the one place it becomes the launcher's arguments.
//!
//! Every child North starts under the sandbox gets a [`SandboxPolicy`]
//! derived from the project's [`SandboxSettings`] by its [`ChildKind`]
//! ([`SandboxSettings::policy_for`]): a shell command, a background job, a
//! hook, an MCP server and North's own git differ only in the few ways
//! listed there. The spawner turns the value into `north sandbox` arguments
//! with [`SandboxPolicy::to_args`]; `north sandbox` parses them back into
//! the same value, so `north sandbox --explain` shows exactly what a child
//! gets.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Whether a child may open internet sockets, and where they lead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Network {
    /// `AF_INET`/`AF_INET6` sockets fail (the default).
    #[default]
    Off,
    /// The whole network (only the `net` grant, never a per-domain one).
    On,
    /// Only through North's proxy, listening on this Unix socket: the
    /// child gets a network namespace of its own whose one way out is a
    /// bridge from `127.0.0.1:`[`PROXY_PORT`] to that socket, and the
    /// proxy variables naming it. The proxy decides, host by host, under
    /// the session's `net:<domain>` grants.
    Proxied(PathBuf),
}

/// The port the proxy answers on inside a child's own network namespace
/// (`HTTP_PROXY=http://127.0.0.1:47780`); the namespace is the child's
/// alone, so no other program's port is taken.
pub const PROXY_PORT: u16 = 47780;

/// Whether the system temp dir the child sees is its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TempDir {
    /// A fresh tmpfs over the temp dir, private to the child (the default).
    #[default]
    Private,
    /// The real temp dir (services the user configured to run from it, and
    /// hooks whose markers must be seen outside).
    Shared,
}

/// What to confine a child to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The project root: writable, except what configures git and `.north/`.
    pub root: PathBuf,
    /// Further writable directories.
    pub writable: Vec<PathBuf>,
    /// Paths held read-only inside those writable directories (what in a
    /// worktree's git directory points git elsewhere).
    pub read_only: Vec<PathBuf>,
    /// Paths hidden besides the secret stores (the user's `sandbox.deny_read`).
    pub hidden: Vec<PathBuf>,
    /// Paths under the home directory readable besides the built-in
    /// allow-list ([`HOME_READABLE`]; the user's `sandbox.allow_read`).
    pub home_readable: Vec<PathBuf>,
    /// Paths under the temp dir the child needs from the real one.
    pub keep: Vec<PathBuf>,
    /// Internet sockets.
    pub network: Network,
    /// Whether Unix sockets may be created.
    pub unix_sockets: bool,
    /// The temp dir the child sees.
    pub temp: TempDir,
    /// How many processes the child may run at once.
    pub max_processes: u64,
    /// Whether the project may be written (false: a command North verified
    /// as read-only runs unasked, and the kernel holds it to that).
    pub project_writable: bool,
}

/// The default of [`SandboxPolicy::max_processes`]: plenty for a parallel
/// build, far below what exhausts a machine.
pub const DEFAULT_MAX_PROCESSES: u64 = 1024;

/// What under the home directory a sandboxed child may read: toolchains and
/// package caches a build needs. Everything else in `$HOME` is hidden (the
/// user's git identity comes from a copy without credentials). The
/// directories on `PATH` and the toolchain variables (`CARGO_HOME`, …) that
/// lie under the home directory are added to this list when a child starts.
pub const HOME_READABLE: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/config.toml",
    ".cargo/config",
    ".rustup",
    ".npm/_cacache",
    ".npm/_npx",
    ".node-gyp",
    ".nvm",
    ".volta",
    ".bun/bin",
    ".deno",
    ".yarn/berry/cache",
    ".pnpm-store",
    ".local/share/pnpm",
    ".cache",
    ".local/bin",
    ".local/lib",
    ".pyenv",
    ".rbenv",
    ".gem",
    "go/bin",
    "go/pkg",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".sdkman",
    ".opam",
    ".ghcup",
    ".elan",
    ".dotnet",
    ".nuget/packages",
    ".local/share/uv",
    ".local/pipx",
    ".local/share/pipx",
];

/// Files a project of code is recognised by: a script the user's own hook
/// or MCP server names is readable with the project it belongs to (its
/// `node_modules`, its virtualenv), not alone.
const PROJECT_MARKERS: &[&str] = &[
    "package.json",
    "pyproject.toml",
    "Cargo.toml",
    "go.mod",
    "requirements.txt",
    ".git",
];

/// What under `home` the words of a command the user configured (their
/// own hook, their MCP server: program, arguments, working directory)
/// name: `~/x`, `$HOME/x` or an absolute path there — the directory itself,
/// or for a file the project of code it lies in (else its directory). So a
/// user's `~/.config/hooks/notify.sh` or `node ~/tools/mcp-x/build/index.js`
/// keeps working under the home allow-list without opening the rest.
pub fn home_paths_named(words: &[&str], home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for word in words {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        let word = word.rsplit_once('=').map_or(word, |(_, v)| v);
        let path = ["~/", "$HOME/", "${HOME}/"]
            .iter()
            .find_map(|prefix| word.strip_prefix(prefix).map(|rest| home.join(rest)))
            .unwrap_or_else(|| PathBuf::from(word));
        if !path.is_absolute() || !path.starts_with(home) || path == home {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let named = if meta.is_dir() {
            path
        } else {
            let project = path
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(home) && *a != home)
                .find(|a| PROJECT_MARKERS.iter().any(|m| a.join(m).exists()));
            match project {
                Some(p) => p.to_path_buf(),
                None => path.parent().map_or(path.clone(), Path::to_path_buf),
            }
        };
        if named != home && !out.contains(&named) {
            out.push(named);
        }
    }
    out
}

impl SandboxPolicy {
    /// The default policy for `root`: private temp dir, no network, no
    /// Unix sockets, nothing added.
    pub fn new(root: PathBuf) -> Self {
        SandboxPolicy {
            root,
            writable: Vec::new(),
            read_only: Vec::new(),
            hidden: Vec::new(),
            home_readable: Vec::new(),
            keep: Vec::new(),
            network: Network::Off,
            unix_sockets: false,
            temp: TempDir::Private,
            max_processes: DEFAULT_MAX_PROCESSES,
            project_writable: true,
        }
    }

    /// The launcher's arguments for this policy (what follows `north
    /// sandbox`), ending with `--`: the only place a policy becomes flags.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--path".into(), self.root.clone().into()];
        let mut each = |flag: &str, paths: &[PathBuf]| {
            for p in paths {
                args.push(flag.into());
                args.push(p.clone().into());
            }
        };
        each("--write", &self.writable);
        each("--read-only", &self.read_only);
        each("--hide", &self.hidden);
        each("--read", &self.home_readable);
        each("--keep", &self.keep);
        match &self.network {
            Network::On => args.extend(["--grant".into(), "net".into()]),
            Network::Proxied(socket) => args.extend(["--proxy".into(), socket.clone().into()]),
            Network::Off => {}
        }
        if self.unix_sockets {
            args.push("--unix-sockets".into());
        }
        if self.temp == TempDir::Shared {
            args.push("--shared-tmp".into());
        }
        if !self.project_writable {
            args.push("--read-only-project".into());
        }
        if self.max_processes != DEFAULT_MAX_PROCESSES {
            args.extend([
                "--max-processes".into(),
                self.max_processes.to_string().into(),
            ]);
        }
        args.push("--".into());
        args
    }
}

/// Paths inside the root that commands may read but never change: what
/// can make git run code or change what it runs, and North's own state.
/// The rest of `.git` (objects, refs, index, logs) stays writable.
pub(crate) const READ_ONLY_IN_ROOT: &[&str] = &[
    ".north",
    ".git/config",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info",
    ".git/modules",
    ".git/worktrees",
    ".git/commondir",
];

impl SandboxPolicy {
    /// Whether this policy refuses writes to `path` (absolute): outside the
    /// root, the temp dir and the writable paths, or on what is read-only
    /// inside the root. The sandbox's own record of what it stops, which
    /// the escalation offer checks a failure against.
    pub(crate) fn refuses_write(&self, path: &Path) -> bool {
        if READ_ONLY_IN_ROOT
            .iter()
            .any(|rel| path.starts_with(self.root.join(rel)))
            || self.read_only.iter().any(|p| path.starts_with(p))
        {
            return true;
        }
        let temp = std::env::temp_dir();
        if !self.project_writable && path.starts_with(&self.root) {
            return true;
        }
        let writable = std::iter::once(&self.root)
            .chain(std::iter::once(&temp))
            .chain(&self.writable);
        !writable.into_iter().any(|w| path.starts_with(w)) && !path.starts_with("/dev")
    }
}

impl SandboxPolicy {
    /// Whether the sandbox is what stops a write to `path`: this policy
    /// refuses it, and outside the sandbox the user could make it (the
    /// nearest existing directory on the way is writable to them). A path
    /// the user cannot write either is an ordinary permission error.
    pub fn stops_write(&self, path: &Path) -> bool {
        self.refuses_write(path) && writable_outside(path)
    }
}

/// Whether this process may write `path`, or create it in the nearest
/// existing directory above it.
fn writable_outside(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Some(existing) = path.ancestors().find(|a| a.symlink_metadata().is_ok()) else {
            return false;
        };
        let Ok(c) = std::ffi::CString::new(existing.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: access reads a live C string.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The kinds of child North starts under the sandbox; each gets its policy
/// from [`SandboxSettings::policy_for`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// A command the model or the user runs: the persistent shell, a
    /// background job, `north tool shell_run`; North's own git (the
    /// hot-files history) runs under the same policy.
    Command,
    /// A hook the user or a trusted project configured; `network` when the
    /// user's own config allows hooks the network.
    Hook {
        /// The whole network.
        network: bool,
    },
    /// A stdio MCP server: reaching a service is many servers' job, and
    /// `npx`/`uvx` servers install themselves into the package caches.
    McpServer,
    /// A command the policy verified as read-only (`ls`, `git status`),
    /// run without asking: the project is read-only to it and it has no
    /// network, so the check is never the boundary.
    ReadOnlyCommand,
    /// A language server the user (or a trusted project) configured: it
    /// reads the project and may write its caches there, no network.
    LanguageServer,
}

impl ChildKind {
    /// The name `north sandbox --explain --for` takes.
    pub fn name(self) -> &'static str {
        match self {
            ChildKind::Command => "command",
            ChildKind::Hook { .. } => "hook",
            ChildKind::McpServer => "mcp",
            ChildKind::ReadOnlyCommand => "read-only",
            ChildKind::LanguageServer => "lsp",
        }
    }
}

/// The project's sandbox as the user configured it: the base every child's
/// policy derives from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The project root.
    pub root: PathBuf,
    /// The user's hidden paths (`sandbox.deny_read`).
    pub hidden: Vec<PathBuf>,
    /// The user's additions to the home allow-list (`sandbox.allow_read`).
    pub home_readable: Vec<PathBuf>,
    /// The user's `sandbox.unix_sockets`.
    pub unix_sockets: bool,
    /// Commands' network: on only with the whole-network grant.
    pub network: Network,
    /// When the root is a git worktree North created: where a commit in
    /// it writes besides the worktree (None: any other directory).
    pub worktree: Option<WorktreeGit>,
}

/// The shared git state a commit in a worktree North created writes: its
/// own directory in the repository's `.git/worktrees`, the object store,
/// and the branches and reflogs under `refs/heads/north/`. Only North's
/// record of the worktrees it made names one: a repository's own `.git`
/// file never widens what a command may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeGit {
    /// `<common>/worktrees/<name>`: the worktree's HEAD, index and logs.
    pub admin: PathBuf,
    /// The repository's git directory (`<repo>/.git`).
    pub common: PathBuf,
}

/// Files in a worktree's git directory that tell git where the repository
/// and the worktree are: read-only, so no command points the user's git at
/// a configuration it wrote.
const WORKTREE_POINTERS: &[&str] = &["commondir", "gitdir", "config.worktree"];

impl WorktreeGit {
    /// What a command in the worktree may write besides it.
    pub fn writable(&self) -> Vec<PathBuf> {
        vec![
            self.admin.clone(),
            self.common.join("objects"),
            self.common.join("refs/heads/north"),
            self.common.join("logs/refs/heads/north"),
        ]
    }

    /// What stays read-only inside those: the pointers, and the
    /// repository's packed history and object alternates (a commit writes
    /// loose objects only).
    pub fn read_only(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = WORKTREE_POINTERS
            .iter()
            .map(|f| self.admin.join(f))
            .collect();
        out.push(self.common.join("objects/pack"));
        out.push(self.common.join("objects/info"));
        out
    }
}

impl SandboxSettings {
    /// Settings for `root` with nothing added.
    pub fn new(root: PathBuf) -> Self {
        SandboxSettings {
            root,
            hidden: Vec::new(),
            home_readable: Vec::new(),
            unix_sockets: false,
            network: Network::Off,
            worktree: None,
        }
    }

    /// The policy a child of `kind` runs under.
    pub fn policy_for(&self, kind: ChildKind) -> SandboxPolicy {
        let mut policy = SandboxPolicy::new(self.root.clone());
        policy.hidden = self.hidden.clone();
        policy.home_readable = self.home_readable.clone();
        policy.unix_sockets = self.unix_sockets;
        match kind {
            ChildKind::Command => {
                policy.network = self.network.clone();
                // A command may commit in the worktree (and no hook,
                // server or read-only command needs to).
                if let Some(git) = &self.worktree {
                    policy.writable = git.writable();
                    policy.read_only = git.read_only();
                }
            }
            ChildKind::Hook { network } => {
                policy.network = if network { Network::On } else { Network::Off };
                // A hook's log or marker in the temp dir is seen outside.
                policy.temp = TempDir::Shared;
            }
            ChildKind::McpServer => {
                policy.network = Network::On;
                policy.temp = TempDir::Shared;
                policy.writable = package_caches(home().as_deref());
            }
            ChildKind::ReadOnlyCommand => policy.project_writable = false,
            // The defaults: the project writable, no network, a private
            // temp dir.
            ChildKind::LanguageServer => {}
        }
        policy
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// The package managers' caches an MCP server installs itself into.
fn package_caches(home: Option<&Path>) -> Vec<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".cache")));
    let mut out: Vec<PathBuf> = cache.into_iter().collect();
    out.extend(home.map(|h| h.join(".npm")));
    out.retain(|d| d.is_dir());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_opens_its_git_state_to_commands_only_and_keeps_its_pointers_read_only() {
        let mut settings = SandboxSettings::new(PathBuf::from("/r.worktrees/feat"));
        settings.worktree = Some(WorktreeGit {
            admin: PathBuf::from("/r/.git/worktrees/feat"),
            common: PathBuf::from("/r/.git"),
        });
        let command = settings.policy_for(ChildKind::Command);
        for open in [
            "/r/.git/worktrees/feat/index",
            "/r/.git/objects/ab/cdef",
            "/r/.git/refs/heads/north/feat",
        ] {
            assert!(!command.refuses_write(Path::new(open)), "{open}");
        }
        for shut in [
            "/r/.git/worktrees/feat/commondir",
            "/r/.git/worktrees/feat/gitdir",
            "/r/.git/config",
            "/r/.git/hooks/pre-commit",
            "/r/.git/refs/heads/main",
            "/r/.git/worktrees/other/HEAD",
            "/r/src/main.rs",
        ] {
            assert!(command.refuses_write(Path::new(shut)), "{shut}");
        }
        let args = command.to_args();
        assert!(args.contains(&OsString::from("--read-only")));
        for kind in [
            ChildKind::Hook { network: false },
            ChildKind::ReadOnlyCommand,
        ] {
            let policy = settings.policy_for(kind);
            assert!(policy.refuses_write(Path::new("/r/.git/objects/ab/cdef")));
        }
    }

    #[test]
    fn a_domain_grant_is_not_the_network() {
        let settings = SandboxSettings::new(PathBuf::from("/p"));
        let command = settings.policy_for(ChildKind::Command);
        assert_eq!(command.network, Network::Off);
        assert!(!command.to_args().contains(&OsString::from("net")));
        let hook = settings.policy_for(ChildKind::Hook { network: false });
        assert_eq!(hook.temp, TempDir::Shared);
        assert_eq!(hook.network, Network::Off);
        assert_eq!(
            settings.policy_for(ChildKind::McpServer).network,
            Network::On
        );
    }

    #[test]
    fn arguments_end_with_the_separator() {
        let mut policy = SandboxPolicy::new(PathBuf::from("/p"));
        policy.hidden.push(PathBuf::from("/s"));
        policy.max_processes = 7;
        let args = policy.to_args();
        assert_eq!(args.last().map(OsString::as_os_str), Some("--".as_ref()));
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            text,
            ["--path", "/p", "--hide", "/s", "--max-processes", "7", "--"]
        );
    }
}
