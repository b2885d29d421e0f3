//! The one way North starts a child process.
//!
//! Every child — shell sessions, MCP stdio servers, North's own `git` — is
//! built here, so each gets the same three things: the key-free session
//! environment (never North's own), the OS sandbox launcher when the
//! spawner is confined (`north sandbox --path ROOT --`, which execs the
//! program inside Landlock, seccomp and a private mount namespace), and a
//! process group of its own so cleanup reaches everything it started.
//!
//! This module builds commands; it does not decide whether a command may
//! run (that is [`policy`](crate::policy)) and does not confine the current
//! process (that is [`os_sandbox`](crate::os_sandbox)).

use std::ffi::{OsStr, OsString};
use std::path::Path;

pub mod env;

use env::session_env;

/// Starts child processes: confined through a launcher, or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spawner {
    /// The program (and its arguments) children start through; empty when
    /// they start unconfined.
    launcher: Vec<OsString>,
}

impl Spawner {
    /// Children start directly (still with the key-free environment).
    pub fn unconfined() -> Self {
        Spawner::default()
    }

    /// Children start through `launcher` (program, then its arguments; the
    /// child's program and arguments follow them).
    pub fn confined(launcher: Vec<OsString>) -> Self {
        Spawner { launcher }
    }

    /// This spawner, with `path` (a directory under the temp dir North
    /// made for the child: the shell's scripts, a neutral git dir) kept
    /// visible in the sandbox's otherwise private temp dir.
    pub fn keeping(&self, path: &Path) -> Spawner {
        let mut launcher = self.launcher.clone();
        if launcher.last().is_some_and(|l| l == "--") {
            let at = launcher.len() - 1;
            launcher.splice(
                at..at,
                [OsString::from("--keep"), path.as_os_str().to_owned()],
            );
        }
        Spawner { launcher }
    }

    /// Whether children start inside the OS sandbox.
    pub fn is_confined(&self) -> bool {
        !self.launcher.is_empty()
    }

    /// The environment every child starts with: safe variables only, never
    /// a key (the process's own secrets are sealed in memory as well).
    pub fn environment() -> Vec<(OsString, OsString)> {
        session_env(std::env::vars_os())
    }

    /// The program to execute and its arguments for running `program`:
    /// the launcher's when confined.
    pub fn argv(&self, program: &OsStr) -> (OsString, Vec<OsString>) {
        match self.launcher.split_first() {
            Some((first, rest)) => {
                let mut args = rest.to_vec();
                args.push(program.to_owned());
                (first.clone(), args)
            }
            None => (program.to_owned(), Vec::new()),
        }
    }

    /// A blocking command for `program` in `cwd`: key-free environment, its
    /// own process group, standard input closed. Add arguments and
    /// variables, then run it.
    pub fn std_command(&self, program: &OsStr, cwd: &Path) -> std::process::Command {
        let (exe, args) = self.argv(program);
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args)
            .env_clear()
            .envs(Self::environment())
            .current_dir(cwd)
            .stdin(std::process::Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }

    /// An async command for `program` in `cwd`, as [`Spawner::std_command`],
    /// killed when dropped.
    pub fn tokio_command(&self, program: &OsStr, cwd: &Path) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::from(self.std_command(program, cwd));
        cmd.kill_on_drop(true);
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
        let s = Spawner::confined(vec!["north".into(), "sandbox".into(), "--".into()]);
        let (exe, args) = s.argv(OsStr::new("git"));
        assert_eq!(exe, "north");
        assert_eq!(args, ["sandbox", "--", "git"]);
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
