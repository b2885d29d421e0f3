//! The Linux layers of the sandbox: a user + mount namespace for read-only
//! directories, Landlock for writes, seccomp for sockets and process
//! inspection.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::mounts::{cpath, last_error, mount};
use super::{Network, OsSandboxError, Protection, SandboxPolicy, TempDir};

use super::policy::READ_ONLY_IN_ROOT;

/// Directories that configure git which North creates empty when missing
/// (with an empty `config`), so they are held read-only like the rest and
/// a command cannot create them with its own content. What else could
/// redirect git (`commondir`, `config.worktree`) and a `.git` made where
/// there was none are set aside the moment they appear by the launcher's
/// supervisor (`super::gitguard`).
const CREATED_IN_GIT: &[&str] = &["hooks", "info", "modules", "worktrees"];

/// Devices a command may write to (output sinks and terminals).
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
];

/// Creates what configures git where it is missing (empty), so it can be
/// held read-only: before the supervisor's first look, so none of it reads
/// as something a command made.
pub(super) fn prepare_git(root: &Path) {
    let git = root.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.file_type().is_dir()) {
        return;
    }
    for name in CREATED_IN_GIT {
        let _ = std::fs::create_dir(git.join(name));
    }
    // An empty config is what git assumes when there is none.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(git.join("config"));
}

fn setup(what: &'static str) -> impl Fn(String) -> OsSandboxError {
    move |reason| OsSandboxError::Setup { what, reason }
}

pub(super) fn enter(spec: &SandboxPolicy) -> Result<Protection, OsSandboxError> {
    let mut protection = Protection {
        // Before the user namespace: the cgroup files belong to the host's root.
        process_limit: super::procs::limit(spec.max_processes).map(|c| match c {
            super::procs::Ceiling::Rlimit(n) => format!("RLIMIT_NPROC {n}"),
            super::procs::Ceiling::Cgroup(dir) => format!("pids cgroup {}", dir.display()),
        }),
        ..Protection::default()
    };
    let git = spec.root.join(".git");
    let git_is_dir = std::fs::symlink_metadata(&git).is_ok_and(|m| m.file_type().is_dir());
    prepare_git(&spec.root);
    let mut protected = read_only_in_root(&spec.root);
    protected.extend(
        spec.read_only
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
            .cloned(),
    );
    let mut hidden = hidden_paths(spec);
    // Without user namespaces the read-only and hidden paths cannot be
    // enforced; that is reported, not fatal (the other layers still apply).
    let proxy = match &spec.network {
        Network::Proxied(socket) => Some(socket.as_path()),
        Network::On | Network::Off => None,
    };
    let mut internet = spec.network == Network::On;
    if let Some(own_network) = enter_namespaces(proxy.is_some())? {
        if let (Some(socket), true) = (proxy, own_network) {
            // Before the PID namespace: the bridge is not the command's init.
            super::netns::bridge(socket).map_err(setup("bridge the sandbox to North's proxy"))?;
            // Internet sockets reach only the namespace's own loopback.
            internet = true;
            protection.proxied = true;
        }
        // SAFETY: unshare with a constant flag; the next child is the
        // namespace's init (`pidns::split`).
        let pid_namespace = unsafe { libc::unshare(libc::CLONE_NEWPID) } == 0;
        // Covers first: what is bound back (the project among it) is then
        // the tree the read-only and hidden mounts below apply to.
        let mut keep = vec![spec.root.clone()];
        // The bridge shares this mount namespace: the proxy's socket stays.
        keep.extend(proxy.and_then(Path::parent).map(Path::to_path_buf));
        keep.extend(spec.writable.iter().cloned());
        keep.extend(spec.keep.iter().cloned());
        keep.extend(std::env::current_dir().ok());
        let home = super::home::Home::from_env(&spec.home_readable);
        keep.extend(home.iter().flat_map(|h| h.readable.iter().cloned()));
        if spec.temp == TempDir::Private {
            let tmp = std::env::temp_dir();
            super::private_tmp::cover(&tmp, &keep)
                .map_err(setup("give the command a private temp dir"))?;
            protection.private_tmp = Some(tmp);
        }
        if let Some(home) = &home {
            let readable = home
                .cover(&keep)
                .map_err(setup("hide the home directory"))?;
            protection.home = Some(home.dir.clone());
            protection.home_readable = readable;
        }
        if git_is_dir {
            // Pinned: a mount point cannot be renamed or removed, so `.git`
            // cannot be moved aside and replaced by one the command wrote.
            mount(Some(&git), &git, libc::MS_BIND | libc::MS_REC).map_err(setup("pin .git"))?;
        }
        for path in &protected {
            bind_read_only(path).map_err(setup("make a path read-only"))?;
        }
        // The proxy's socket: reachable, but never removed or replaced by
        // the command (another command's bridge connects to it too).
        if let Some(dir) = proxy.and_then(Path::parent).filter(|d| d.is_dir()) {
            bind_read_only(dir).map_err(setup("make the proxy's socket read-only"))?;
        }
        if !spec.project_writable {
            // The whole project, and the pinned `.git` mount inside it (a
            // mount of its own, which the project's remount does not reach).
            let mut read_only = vec![spec.root.clone()];
            read_only.extend(git_is_dir.then(|| git.clone()));
            for path in &read_only {
                bind_read_only(path).map_err(setup("make the project read-only"))?;
            }
        }
        // What the home cover already took away needs no second cover.
        hidden.retain(|p| p.symlink_metadata().is_ok());
        for path in &hidden {
            hide(path).map_err(setup("hide a secret store"))?;
        }
        protection.namespaces = true;
        protection.read_only = protected;
        protection.hidden = hidden;
        if pid_namespace {
            // Only the command's process comes back from here.
            super::pidns::split()?;
            protection.pid_namespace = true;
        }
    }
    // Both Landlock and seccomp need no_new_privs; it also keeps setuid
    // programs from regaining what the sandbox took away.
    // SAFETY: prctl with these constant arguments only sets a process flag.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(setup("set no_new_privs")(last_error()));
    }
    protection.writable = writable_paths(spec);
    protection.landlock_abi = landlock(spec)?;
    seccomp(internet, spec.unix_sockets)?;
    super::seccomp_arch::install().map_err(setup("filter system calls (seccomp)"))?;
    protection.seccomp = true;
    Ok(protection)
}

/// What inside `root` commands may read but never change (git's config
/// and hooks, `.north/`), where it exists as itself (not a link); a `.git`
/// file (a worktree's `gitdir:` pointer) is itself config.
fn read_only_in_root(root: &Path) -> Vec<PathBuf> {
    let git = root.join(".git");
    let mut protected: Vec<PathBuf> = READ_ONLY_IN_ROOT
        .iter()
        .map(|d| root.join(d))
        .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| !m.file_type().is_symlink()))
        .collect();
    if std::fs::symlink_metadata(&git).is_ok_and(|m| m.file_type().is_file()) {
        protected.push(git);
    }
    protected
}

/// The secret stores and the user's hidden paths that exist, never the
/// project or a directory holding it.
fn hidden_paths(spec: &SandboxPolicy) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> = super::secret_paths(
        std::env::var_os("HOME").map(PathBuf::from).as_deref(),
        &super::XdgDirs::from_env(),
    );
    hidden.extend(
        spec.hidden
            .iter()
            .filter(|p| p.symlink_metadata().is_ok())
            .cloned(),
    );
    hidden.retain(|h| !spec.root.starts_with(h));
    hidden
}

/// Enters a new user and mount namespace (and a network namespace of its
/// own when `own_network`), mapping the user to itself, or to an
/// unprivileged id when it is root, so the command holds no capability that
/// could undo a mount. `None` when the kernel refuses namespaces;
/// `Some(true)` when the network namespace is new too.
fn enter_namespaces(own_network: bool) -> Result<Option<bool>, OsSandboxError> {
    // SAFETY: plain libc getters and unshare with constant flags.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let base = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
    let with_network = own_network && unsafe { libc::unshare(base | libc::CLONE_NEWNET) } == 0;
    if !with_network && unsafe { libc::unshare(base) } != 0 {
        return Ok(None);
    }
    let inside = |id: u32| if id == 0 { 1000 } else { id };
    let _ = std::fs::write("/proc/self/setgroups", "deny");
    std::fs::write("/proc/self/uid_map", format!("{} {uid} 1\n", inside(uid)))
        .map_err(|e| setup("map the user id")(e.to_string()))?;
    std::fs::write("/proc/self/gid_map", format!("{} {gid} 1\n", inside(gid)))
        .map_err(|e| setup("map the group id")(e.to_string()))?;
    // Mount changes stay in this namespace.
    mount(None, Path::new("/"), libc::MS_REC | libc::MS_PRIVATE)
        .map_err(setup("make the mounts private"))?;
    Ok(Some(with_network))
}

/// Bind-mounts `dir` on itself read-only, keeping the flags the kernel
/// locks on mounts inherited from the parent namespace.
fn bind_read_only(dir: &Path) -> Result<(), String> {
    mount(Some(dir), dir, libc::MS_BIND | libc::MS_REC)?;
    let c = cpath(dir)?;
    // SAFETY: statvfs fills the zeroed struct for a valid path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let mut locked: libc::c_ulong = 0;
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0 {
        for (st_flag, ms_flag) in [
            (libc::ST_NOSUID, libc::MS_NOSUID),
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOEXEC, libc::MS_NOEXEC),
            (libc::ST_NOATIME, libc::MS_NOATIME),
            (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
            (libc::ST_RELATIME, libc::MS_RELATIME),
        ] {
            if st.f_flag & st_flag != 0 {
                locked |= ms_flag;
            }
        }
    }
    mount(
        None,
        dir,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked,
    )
}

/// Covers `path` so nothing under it can be read: an empty, read-only,
/// mode-000 tmpfs over a directory, `/dev/null` over anything else.
fn hide(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        super::mounts::mount_new(
            c"tmpfs",
            path,
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            Some(c"size=4k,nr_inodes=1,mode=000"),
        )
    } else {
        mount(Some(Path::new("/dev/null")), path, libc::MS_BIND)?;
        mount(
            None,
            path,
            libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
        )
        .or(Ok(()))
    }
}

/// Writes allowed only beneath the root, the temp dir, the user's paths
/// and output devices; everything may be read and executed.
/// What the command may write: the root, the temp dir, the user's paths
/// and output devices (those that exist).
pub(super) fn writable_paths(spec: &SandboxPolicy) -> Vec<PathBuf> {
    let mut writable: Vec<PathBuf> = vec![std::env::temp_dir()];
    if spec.project_writable {
        writable.push(spec.root.clone());
    }
    writable.extend(spec.writable.iter().cloned());
    writable.extend(WRITABLE_DEVICES.iter().map(PathBuf::from));
    writable.retain(|p| p.exists());
    writable
}

fn landlock(spec: &SandboxPolicy) -> Result<Option<i32>, OsSandboxError> {
    let abi = ABI::V5;
    restrict(&Rules {
        what: "confine writes (Landlock)",
        read: AccessFs::from_read(abi),
        write: AccessFs::from_all(abi),
        writable: &writable_paths(spec),
        no_tcp: false,
    })
}

/// Confines the current process as one of North's own helpers: it reads
/// what the user can, writes only under `writable`, executes nothing,
/// binds or connects no TCP port, and cannot signal or reach abstract
/// sockets outside itself.
pub(super) fn confine_helper(writable: &[PathBuf]) -> Result<Option<i32>, OsSandboxError> {
    // SAFETY: prctl with these constant arguments only sets a process flag.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(setup("set no_new_privs")(last_error()));
    }
    restrict(&Rules {
        what: "confine a helper (Landlock)",
        read: AccessFs::ReadFile | AccessFs::ReadDir,
        write: AccessFs::from_all(ABI::V5) & !AccessFs::Execute,
        writable,
        no_tcp: true,
    })
}

/// A Landlock ruleset: `read` everywhere, `write` under `writable`, TCP
/// refused when `no_tcp`.
struct Rules<'a> {
    what: &'static str,
    read: BitFlags<AccessFs>,
    write: BitFlags<AccessFs>,
    writable: &'a [PathBuf],
    no_tcp: bool,
}

/// Applies `rules` to the current process; the ABI in force (None where
/// the kernel has no Landlock).
fn restrict(rules: &Rules<'_>) -> Result<Option<i32>, OsSandboxError> {
    let abi = ABI::V5;
    let err = |e: landlock::RulesetError| setup(rules.what)(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if rules.no_tcp {
        // Handled and given no rule: every TCP bind and connect fails.
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?;
    }
    let status = ruleset
        // Signals and abstract sockets stay inside the sandbox: a command
        // cannot kill North or reach a desktop bus (kernels before ABI 6
        // skip this; ptrace and /proc/<pid>/mem|environ of processes
        // outside are refused by Landlock itself from ABI 1).
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(["/"], rules.read))
        .map_err(err)?
        .add_rules(path_beneath_rules(rules.writable, rules.write))
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    Ok(match (status.ruleset, status.landlock) {
        (RulesetStatus::NotEnforced, _) => None,
        (_, LandlockStatus::Available { effective_abi, .. }) => Some(effective_abi as i32),
        (_, _) => Some(abi as i32),
    })
}

/// Socket families by allow-list — Unix only when the user allows it, the
/// internet families only with the whole-network grant, every other family
/// (netlink, packet, vsock, …) never; process inspection, the keyring,
/// mounts, io_uring (which could open sockets past this filter) and the
/// ioctls that push input into a terminal (`TIOCSTI`, `TIOCLINUX`) always
/// fail with EPERM.
fn seccomp(internet: bool, unix_sockets: bool) -> Result<(), OsSandboxError> {
    let err = |e: seccompiler::BackendError| setup("filter system calls (seccomp)")(e.to_string());
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_setns,
        libc::SYS_io_uring_setup,
    ] {
        rules.insert(call, Vec::new());
    }
    let arg = |index: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(err)
    };
    // One rule that matches (and so refuses) every family not allowed: the
    // conditions of a rule must all hold.
    let mut allowed: Vec<i32> = Vec::new();
    // Pathname Unix sockets reach servers outside the sandbox (a tmux or
    // docker socket, the user's D-Bus, ssh and gpg agents) that would run
    // anything for it; Landlock scopes only abstract ones. `socketpair`
    // (pipes between a command's own processes) stays allowed.
    if unix_sockets {
        allowed.push(libc::AF_UNIX);
    }
    if internet {
        allowed.extend([libc::AF_INET, libc::AF_INET6]);
    }
    let socket_rule = if allowed.is_empty() {
        Vec::new()
    } else {
        let conditions = allowed
            .iter()
            .map(|f| arg(0, SeccompCmpOp::Ne, *f as u64))
            .collect::<Result<Vec<_>, _>>()?;
        vec![SeccompRule::new(conditions).map_err(err)?]
    };
    rules.insert(libc::SYS_socket, socket_rule);
    // Pushing bytes into a terminal's input reaches whatever reads it next:
    // the user's shell after North, North's own prompts.
    let ioctl = [libc::TIOCSTI, libc::TIOCLINUX]
        .iter()
        .map(|request| {
            // The request's type differs between C libraries.
            #[allow(clippy::unnecessary_cast)]
            let request = *request as u64;
            SeccompRule::new(vec![arg(1, SeccompCmpOp::Eq, request)?]).map_err(err)
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl);
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| err(e))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| err(e))?;
    seccompiler::apply_filter(&program)
        .map_err(|e| setup("filter system calls (seccomp)")(e.to_string()))
}
