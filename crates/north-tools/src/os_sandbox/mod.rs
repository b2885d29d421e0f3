//! The OS sandbox a command runs in (Linux): what it may write, whether it
//! may open network sockets, and which process-inspection calls it may make.
//!
//! [`enter`] confines the *current* process and is meant to run in a
//! single-threaded process right before it executes the command (`north
//! sandbox -- CMD` does exactly that), so everything the command starts
//! inherits the confinement:
//!
//! - **Filesystem (Landlock):** everything may be read; writes only under
//!   the project root, the system temp dir, the paths the user adds and a
//!   few devices (`/dev/null`, ttys).
//! - **Read-only inside the root (mount namespace):** `.git/` (hooks,
//!   config) and `.north/` are bind-mounted read-only in a private mount
//!   namespace of a new user namespace.
//! - **Processes:** at most [`SandboxSpec::max_processes`] more at once
//!   (`RLIMIT_NPROC`, or a `pids` cgroup as root), so a fork bomb stops.
//! - **System calls (seccomp):** `socket(AF_INET/AF_INET6)` fails unless
//!   `net` is granted; `ptrace`, `process_vm_readv/writev` and the kernel
//!   keyring calls always fail with `EPERM`.
//!
//! What the kernel cannot do is reported, never claimed: [`Protection`]
//! says which layers are in force, and [`Protection::gaps`] names the rest.
//! This module must not spawn processes or talk to the user.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod procs;

use std::path::PathBuf;

/// What to confine a command to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The project root: writable, except its `.git/` and `.north/`.
    pub root: PathBuf,
    /// Further writable directories the user chose.
    pub writable: Vec<PathBuf>,
    /// Whether network sockets are allowed (the `net` capability).
    pub net: bool,
    /// How many processes the command may run at once.
    pub max_processes: u64,
}

/// The default of [`SandboxSpec::max_processes`]: plenty for a parallel
/// build, far below what exhausts a machine.
pub const DEFAULT_MAX_PROCESSES: u64 = 1024;

/// Which layers of the sandbox are in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    /// The Landlock ABI enforced, when filesystem confinement is on.
    pub landlock_abi: Option<i32>,
    /// Whether the seccomp filter is installed.
    pub seccomp: bool,
    /// The directories made read-only inside the root.
    pub read_only: Vec<PathBuf>,
    /// Whether the read-only directories could be enforced (they need a
    /// user and mount namespace).
    pub namespaces: bool,
    /// How the process ceiling is enforced (None: it is not).
    pub process_limit: Option<String>,
}

impl Protection {
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
            out.push("no user namespaces: .git and .north are writable");
        }
        if self.process_limit.is_none() {
            out.push("no process limit: only the system's limits stop a fork bomb");
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

/// Confines the current process (see the module documentation). Layers the
/// kernel lacks are skipped and reported in the returned [`Protection`];
/// a layer that exists but fails to apply is an error.
pub fn enter(spec: &SandboxSpec) -> Result<Protection, OsSandboxError> {
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
