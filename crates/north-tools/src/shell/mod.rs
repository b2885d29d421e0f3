//! The project's persistent PTY shell (spec §3.1.6, §6.4).
//!
//! [`ShellManager`] owns one shell session per project, started lazily in the
//! project root on the first [`ShellManager::run`]. The session keeps its
//! state across calls (`cd`, exported variables, functions). Each run returns
//! stdout and stderr separately, the exit code and the duration; a timeout or
//! cancellation interrupts the command (Ctrl-C, then SIGKILL to its process
//! group) and leaves the session usable; output past `max_output` keeps its
//! head and tail with a marker saying how much was cut. The session's
//! environment is built from an allowlist of safe variables
//! ([`env::SAFE_VARIABLES`]) and never carries API keys or other secrets. If
//! the shell dies, the next run starts a new session and says so.
//!
//! The shell does not sandbox the file system: commands run with the user's
//! rights and are gated by approval (spec §8) or a command policy
//! ([`north_policy`]). Only the `cwd` option is checked to be inside the
//! project root.

pub use crate::spawn::env;
pub mod background;
pub mod bgtools;
use crate::os_sandbox::gitguard;
mod denial;
mod output;
mod result;
mod runfiles;
mod script;
mod session;
pub mod tools;

pub use denial::{SandboxDenial, sandbox_denial};
pub use output::truncate_chars;
pub use result::{DENIED_NOTE, Naming, REFUSED_NOTE, ShellResult, result_of};

use north_policy::ApprovedCommand;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use session::{Ending, PtySession};

/// Options for one command.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Directory to run in, relative to the project root or absolute inside
    /// it. The session returns to its previous directory afterwards unless
    /// the command itself changed directory. `None`: the session's current
    /// directory.
    pub cwd: Option<PathBuf>,
    /// How long the command may run before it is interrupted.
    pub timeout: Duration,
    /// Most bytes kept of stdout, and separately of stderr (head and tail).
    pub max_output: usize,
    /// CPU-time quota in seconds (`ulimit -t`). With a quota the command runs
    /// in a subshell, so its `cd` and exports do not persist.
    pub cpu_seconds: Option<u64>,
    /// Virtual-memory quota in bytes (`ulimit -v`), also in a subshell.
    pub memory_bytes: Option<u64>,
    /// Disk quota: the largest file the command may write, in bytes
    /// (`ulimit -f`), also in a subshell.
    pub file_bytes: Option<u64>,
    /// Where output goes while the command runs (a live view); the result
    /// still holds the whole bounded output.
    pub live: Option<LiveOutput>,
}

/// Receives a running command's output as it is produced.
pub type LiveOutput = tokio::sync::mpsc::UnboundedSender<(north_protocol::OutputStream, String)>;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            cwd: None,
            timeout: Duration::from_secs(60),
            max_output: 30_000,
            cpu_seconds: None,
            memory_bytes: None,
            file_bytes: None,
            live: None,
        }
    }
}

/// The result of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// What the command wrote to stdout (terminal output, CRLF as LF).
    pub stdout: String,
    /// What the command wrote to stderr.
    pub stderr: String,
    /// The exit status; `None` when the command was interrupted before it
    /// could report one.
    pub exit_code: Option<i32>,
    /// Wall-clock time of the run.
    pub duration: Duration,
    /// The timeout fired and the command was interrupted.
    pub timed_out: bool,
    /// The caller cancelled and the command was interrupted.
    pub cancelled: bool,
    /// stdout or stderr was cut to `max_output`.
    pub truncated: bool,
    /// A new session was started for this command because the previous one
    /// had exited (its state — directory, variables — is gone).
    pub session_restarted: bool,
    /// The session ended during this command (`exit`, or it had to be killed
    /// to stop the command); the next command starts a new one.
    pub session_ended: bool,
    /// A sentence for the model about restarts and interruptions, if any.
    pub notice: Option<String>,
}

/// Why a command could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// Neither `bash` nor `sh` was found on the session's PATH.
    #[error("no shell found: neither bash nor sh is on PATH")]
    NoShell,
    /// The PTY or the shell process could not be created.
    #[error("cannot start the shell: {0}")]
    Spawn(String),
    /// The shell started but did not become ready.
    #[error("the shell did not start: {0}")]
    Startup(String),
    /// The command contains a NUL byte.
    #[error("the command contains a NUL byte")]
    NulInCommand,
    /// The requested working directory is unusable.
    #[error("cannot run in `{path}`: {reason}")]
    BadCwd {
        /// The directory as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A path the shell needs is not valid UTF-8.
    #[error("path is not valid UTF-8: {0}")]
    InvalidPath(PathBuf),
    /// Talking to the shell failed.
    #[error("shell I/O failed: {0}")]
    Io(#[source] std::io::Error),
}

/// Owns the project's persistent shell session, started lazily on first use.
///
/// Commands run one at a time; concurrent calls wait for each other.
pub struct ShellManager {
    root: PathBuf,
    /// How the shell is started: through `north sandbox --path ROOT --`
    /// when confined, so every command then runs in the OS sandbox.
    spawner: crate::Spawner,
    session: Mutex<SessionSlot>,
    /// Commands running in the background (killed when this is dropped).
    jobs: std::sync::Arc<background::Jobs>,
}

#[derive(Default)]
struct SessionSlot {
    live: Option<PtySession>,
    /// A session existed and ended; the next start is a restart.
    ended: bool,
}

impl ShellManager {
    /// A manager for a shell rooted at `root`; nothing is spawned yet.
    pub fn new(root: PathBuf) -> Self {
        ShellManager {
            root,
            spawner: crate::Spawner::unconfined(),
            session: Mutex::new(SessionSlot::default()),
            jobs: Default::default(),
        }
    }

    /// A manager whose shell and background jobs start through `spawner`
    /// (the OS sandbox under the project's command policy, when confined).
    pub fn with_spawner(root: PathBuf, spawner: crate::Spawner) -> Self {
        ShellManager {
            root,
            spawner,
            session: Mutex::new(SessionSlot::default()),
            jobs: Default::default(),
        }
    }

    /// How this shell (and North's helpers beside it) start processes.
    pub fn spawner(&self) -> &crate::Spawner {
        &self.spawner
    }

    /// The commands running in the background.
    pub fn jobs(&self) -> &std::sync::Arc<background::Jobs> {
        &self.jobs
    }

    /// Starts `command` in the background, in `cwd` (relative to the root;
    /// None: the root): only a command the policy approved. Returns its id.
    pub(crate) fn start_background(
        &self,
        command: &ApprovedCommand,
        cwd: Option<&Path>,
    ) -> Result<String, ShellError> {
        let line = command.line();
        if line.contains('\0') {
            return Err(ShellError::NulInCommand);
        }
        let dir = self.resolve_cwd(cwd.unwrap_or(Path::new(".")))?;
        self.jobs
            .start(&self.spawner, line, &dir)
            .map_err(|e| ShellError::Spawn(e.to_string()))
    }

    /// The directory new sessions start in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a live session exists (without starting one).
    pub async fn is_running(&self) -> bool {
        let mut slot = self.session.lock().await;
        match slot.live.as_mut() {
            Some(session) => !session.is_dead(),
            None => false,
        }
    }

    /// The shell program of the live session, if any (`.../bash` or `.../sh`).
    pub async fn shell_program(&self) -> Option<PathBuf> {
        let slot = self.session.lock().await;
        slot.live.as_ref().map(|s| s.program().to_owned())
    }

    /// Runs `command` in the session: only a command the policy approved
    /// (see [`ApprovedCommand`]) can run.
    pub async fn run(
        &self,
        command: &ApprovedCommand,
        opts: RunOptions,
    ) -> Result<RunResult, ShellError> {
        self.run_cancellable(command, opts, &CancellationToken::new())
            .await
    }

    /// Runs `command`, interrupting it when `cancel` fires.
    pub async fn run_cancellable(
        &self,
        command: &ApprovedCommand,
        opts: RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RunResult, ShellError> {
        let command = command.line();
        if command.contains('\0') {
            return Err(ShellError::NulInCommand);
        }
        let cwd = match &opts.cwd {
            Some(dir) => Some(self.resolve_cwd(dir)?),
            None => None,
        };
        let started = Instant::now();
        let mut slot = self.session.lock().await;
        let mut restarted = false;
        if slot.live.as_mut().is_some_and(PtySession::is_dead) {
            slot.live = None;
            slot.ended = true;
        }
        if let Some(session) = slot.live.as_mut()
            && session.needs_recovery()
            && !session.recover().await
        {
            slot.live = None;
            slot.ended = true;
        }
        let session = match slot.live.take() {
            Some(session) => session,
            None => {
                restarted = slot.ended;
                PtySession::spawn(&self.root, &self.spawner).await?
            }
        };
        let session = slot.live.insert(session);
        let confined = self.spawner.is_confined();
        let git_before = confined.then(|| gitguard::observe(&self.root));
        let raw = session.run(command, cwd.as_deref(), &opts, cancel).await;
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                // A session that failed mid-protocol is not trusted again.
                if let Some(mut broken) = slot.live.take() {
                    broken.kill();
                }
                slot.ended = true;
                return Err(e);
            }
        };
        if raw.session_ended {
            slot.live = None;
            slot.ended = true;
        }
        let timed_out = raw.ending == Ending::TimedOut;
        let cancelled = raw.ending == Ending::Cancelled;
        let mut notes = Vec::new();
        if restarted {
            notes.push(
                "The previous shell session had exited; this command ran in a new session \
                 (directory and variables were reset)."
                    .to_owned(),
            );
        }
        if timed_out {
            notes.push(format!(
                "The command timed out after {} ms and was interrupted.",
                opts.timeout.as_millis()
            ));
        }
        if cancelled {
            notes.push("The command was cancelled and interrupted.".to_owned());
        }
        if raw.session_ended {
            notes.push("The shell session ended; the next command starts a new one.".to_owned());
        }
        if let Some(note) = git_before.and_then(|before| gitguard::seal(&self.root, &before)) {
            notes.push(note);
        }
        Ok(RunResult {
            stdout: raw.stdout,
            stderr: raw.stderr,
            exit_code: raw.exit_code,
            duration: started.elapsed(),
            timed_out,
            cancelled,
            truncated: raw.truncated,
            session_restarted: restarted,
            session_ended: raw.session_ended,
            notice: (!notes.is_empty()).then(|| notes.join(" ")),
        })
    }

    /// Ends the session (if any); the next run starts a fresh one without
    /// reporting a restart.
    pub async fn shutdown(&self) {
        let mut slot = self.session.lock().await;
        if let Some(mut session) = slot.live.take() {
            session.kill();
        }
        slot.ended = false;
    }

    /// `dir` resolved against the root, canonical, and inside the root.
    fn resolve_cwd(&self, dir: &Path) -> Result<PathBuf, ShellError> {
        let shown = dir.display().to_string();
        let bad = |reason: String| ShellError::BadCwd {
            path: shown.clone(),
            reason,
        };
        let root = self
            .root
            .canonicalize()
            .map_err(|e| bad(format!("the project root is unusable: {e}")))?;
        let joined = if dir.is_absolute() {
            dir.to_owned()
        } else {
            root.join(dir)
        };
        let resolved = joined.canonicalize().map_err(|e| bad(e.to_string()))?;
        if !resolved.starts_with(&root) {
            return Err(bad("it is outside the project root".to_owned()));
        }
        if !resolved.is_dir() {
            return Err(bad("not a directory".to_owned()));
        }
        Ok(resolved)
    }
}
