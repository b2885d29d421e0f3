//! The one way North starts a child process.
//!
//! Every child — shell sessions, background jobs, hooks, MCP stdio
//! servers, North's own `git`, the desktop helpers — is built here, so each
//! gets the same things: the key-free session environment (never North's
//! own), the OS sandbox launcher under one typed [`SandboxPolicy`] when the
//! spawner is confined (`north sandbox ARGS --`, which execs the program
//! inside Landlock, seccomp and private namespaces), a session of its own
//! without a controlling terminal (the PTY shell gets the PTY's instead),
//! and a parent-death signal so nothing outlives North.
//!
//! This module builds commands; it does not decide whether a command may
//! run (that is [`policy`](crate::policy)) and does not confine the current
//! process (that is [`os_sandbox`](crate::os_sandbox)).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub mod env;

use env::session_env;

use crate::os_sandbox::SandboxPolicy;

/// Starts child processes: confined through the sandbox launcher under one
/// [`SandboxPolicy`], or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spawner {
    /// The launcher program and the policy its children get; `None` when
    /// they start unconfined.
    launcher: Option<Launcher>,
    /// The child is one of the user's own desktop programs (a browser, a
    /// clipboard tool): unconfined by design and free to outlive North.
    desktop: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Launcher {
    /// The `north` binary (its `sandbox` command confines and executes).
    exe: PathBuf,
    policy: SandboxPolicy,
}

/// The user's own environment minus anything secret-looking: for North's
/// helpers and the user's editor, which act as the user rather than as a
/// command the model asked for.
fn user_environment() -> impl Iterator<Item = (OsString, OsString)> {
    std::env::vars_os().filter(|(name, _)| name.to_str().is_some_and(|n| !env::is_secret_name(n)))
}

impl Spawner {
    /// Children start directly (still with the key-free environment, in a
    /// session of their own, dying with North): the user turned the
    /// sandbox off, or the platform has none.
    pub fn unconfined() -> Self {
        Spawner::default()
    }

    /// Children start through `exe sandbox` (the `north` binary) under
    /// `policy`.
    pub fn sandboxed(exe: PathBuf, policy: SandboxPolicy) -> Self {
        Spawner {
            launcher: Some(Launcher { exe, policy }),
            desktop: false,
        }
    }

    /// For the user's own desktop programs (the browser a login opens, the
    /// clipboard tool): unconfined — they need the display and run their
    /// own sandboxes — and not killed with North; still key-free and
    /// without North's terminal.
    pub fn desktop() -> Self {
        Spawner {
            launcher: None,
            desktop: true,
        }
    }

    /// The policy children get (None: unconfined).
    pub fn policy(&self) -> Option<&SandboxPolicy> {
        self.launcher.as_ref().map(|l| &l.policy)
    }

    /// This spawner, with `path` (a directory under the temp dir North
    /// made for the child: the shell's scripts, a neutral git dir) kept
    /// visible in the sandbox's otherwise private temp dir.
    pub fn keeping(&self, path: &Path) -> Spawner {
        let mut out = self.clone();
        if let Some(l) = &mut out.launcher {
            l.policy.keep.push(path.to_path_buf());
        }
        out
    }

    /// Whether children start inside the OS sandbox.
    pub fn is_confined(&self) -> bool {
        self.launcher.is_some()
    }

    /// The environment every child starts with: safe variables only, never
    /// a key (the process's own secrets are sealed in memory as well).
    pub fn environment() -> Vec<(OsString, OsString)> {
        session_env(std::env::vars_os())
    }

    /// The program to execute and its arguments for running `program`:
    /// the launcher's when confined.
    pub fn argv(&self, program: &OsStr) -> (OsString, Vec<OsString>) {
        match &self.launcher {
            Some(l) => {
                let mut args: Vec<OsString> = vec!["sandbox".into()];
                args.extend(l.policy.to_args());
                args.push(program.to_owned());
                (l.exe.clone().into(), args)
            }
            None => (program.to_owned(), Vec::new()),
        }
    }

    /// A blocking command for `program` in `cwd`: key-free environment,
    /// standard input closed, and a session of its own — no controlling
    /// terminal, so nothing it starts can read or type into the user's
    /// terminal, and one process group that cleanup reaches whole. It dies
    /// with North (parent-death signal) unless it is a desktop program.
    /// Add arguments and variables, then run it.
    pub fn std_command(&self, program: &OsStr, cwd: &Path) -> std::process::Command {
        let (exe, args) = self.argv(program);
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args)
            .env_clear()
            .envs(Self::environment())
            .current_dir(cwd)
            .stdin(std::process::Stdio::null());
        #[cfg(unix)]
        {
            let dies_with_north = !self.desktop;
            // SAFETY: the closure runs between fork and exec and calls only
            // async-signal-safe functions (setsid, prctl).
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                    if libc::setsid() < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    #[cfg(target_os = "linux")]
                    if dies_with_north {
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                    }
                    Ok(())
                });
            }
        }
        cmd
    }

    /// An async command for `program` in `cwd`, as [`Spawner::std_command`],
    /// killed when dropped.
    pub fn tokio_command(&self, program: &OsStr, cwd: &Path) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::from(self.std_command(program, cwd));
        cmd.kill_on_drop(true);
        cmd
    }

    /// North's own helper that outlives the process that started it (the
    /// snapshot watcher, which keeps a big tree's watches between
    /// `north exec` runs): only North's code runs in it, as in North
    /// itself, so it is unconfined and keeps the user's environment minus
    /// anything secret; it gets a session of its own, no terminal and no
    /// standard streams (a caller waiting for North's output does not
    /// wait for it), and no parent-death signal.
    pub fn service(program: &OsStr, cwd: &Path) -> std::process::Command {
        let mut cmd = Spawner::desktop().std_command(program, cwd);
        cmd.env_clear()
            .envs(user_environment())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    }

    /// Replaces this process with `program` in `cwd` — the sandbox
    /// launcher's last step, inside the confinement it set up. The
    /// environment stays as it is: the spawner that started the launcher
    /// made it key-free, and North seals its own keys before anything runs.
    /// Returns only when the program could not be executed.
    #[cfg(unix)]
    pub fn exec_in_place(program: &OsStr, args: &[OsString], cwd: &Path) -> std::io::Error {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(program)
            .args(args)
            .current_dir(cwd)
            .exec()
    }

    /// The user's own program that takes the terminal over while North
    /// waits (their editor, for Ctrl+G): unlike every other child it keeps
    /// North's terminal and process group, so it is the terminal's
    /// foreground job; it is unconfined (it edits what the user chooses, as
    /// the user), its environment is the user's without anything
    /// secret-looking, and it is hung up on when North ends.
    pub fn terminal_command(program: &OsStr, cwd: &Path) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.env_clear().envs(user_environment()).current_dir(cwd);
        #[cfg(target_os = "linux")]
        // SAFETY: the closure runs between fork and exec and calls only
        // prctl, which is async-signal-safe.
        unsafe {
            // It dies with North, as an editor does when its terminal
            // goes (SIGHUP lets it keep its recovery file).
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP, 0, 0, 0);
                Ok(())
            });
        }
        cmd
    }

    /// Kills the process group led by `pid` — a child this spawner started
    /// and everything it started in turn (each child leads its own group).
    pub fn kill_group(pid: u32) {
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(pid)
            && pid > 0
        {
            // SAFETY: kill has no memory-safety preconditions; a positive
            // pid negated names exactly that child's process group.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }

    /// A command for a PTY (the persistent shell): the PTY layer makes it a
    /// session leader, which gives it its own process group.
    pub fn pty_command(&self, program: &OsStr, cwd: &Path) -> portable_pty::CommandBuilder {
        let (exe, args) = self.argv(program);
        let mut cmd = portable_pty::CommandBuilder::new(exe);
        cmd.args(args);
        cmd.env_clear();
        for (k, v) in Self::environment() {
            cmd.env(k, v);
        }
        cmd.cwd(cwd);
        cmd
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_confined_spawner_runs_the_program_through_its_launcher() {
        let s = Spawner::sandboxed("north".into(), SandboxPolicy::new("/p".into()));
        let (exe, args) = s.argv(OsStr::new("git"));
        assert_eq!(exe, "north");
        assert_eq!(args, ["sandbox", "--path", "/p", "--", "git"]);
        let kept = s.keeping(Path::new("/tmp/k"));
        assert_eq!(kept.policy().unwrap().keep, [PathBuf::from("/tmp/k")]);
        let (exe, args) = Spawner::unconfined().argv(OsStr::new("git"));
        assert_eq!(exe, "git");
        assert!(args.is_empty());
    }

    #[test]
    fn children_get_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let out = Spawner::unconfined()
            .std_command(OsStr::new("env"), dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("NORTH_SHELL=1"), "{text}");
        for line in text.lines() {
            let name = line.split('=').next().unwrap_or_default();
            assert!(!north_secrets::is_secret_name(name), "{line}");
        }
    }
}
