//! One live PTY shell session and the protocol that runs commands in it.
//!
//! The shell is an interactive `bash --noprofile --norc --noediting` (or
//! `sh -i`) on a PTY, so it has job control: each command runs in its own
//! process group in the terminal's foreground, and Ctrl-C reaches the command
//! without killing the shell. Commands are never typed into the terminal:
//! each one is written to a file in the session's private temp directory
//! and a short line sources a per-command wrapper script that
//!
//! 1. prints a begin marker carrying a fresh random nonce,
//! 2. sources the command with its stderr redirected to a per-command file
//!    (a PTY merges stdout and stderr; this keeps them apart),
//! 3. prints an end marker with the nonce and the exit status.
//!
//! Sourcing (not a subshell) keeps `cd`, exports and functions across calls.
//! Terminal echo is switched off when the session starts, and the markers are
//! printed as two `printf` arguments so an echoed command line never contains
//! a marker.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use north_protocol::OutputStream;
use portable_pty::{Child, MasterPty, PtySize, native_pty_system};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::output::{Collector, clean_text};
use super::runfiles::{RunFiles, create_private, read_bounded, read_from};
use super::script::{INIT_SCRIPT, nonce, path_str, shell_quote, wrapper_script};
use super::{RunOptions, ShellError};

/// How long a new shell may take to print its ready marker.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// After Ctrl-C, how long the command gets before its process group is killed.
const INTERRUPT_GRACE: Duration = Duration::from_millis(500);
/// How long the shell gets to answer the sync line after an interrupt before
/// the whole session is killed.
const SYNC_TIMEOUT: Duration = Duration::from_secs(3);

/// How a command's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The end marker arrived.
    Finished,
    /// The timeout fired and the command was interrupted.
    TimedOut,
    /// The caller cancelled and the command was interrupted.
    Cancelled,
}

/// What the session reports for one command.
#[derive(Debug)]
pub(crate) struct RawRun {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub ending: Ending,
    pub truncated: bool,
    /// The shell exited (or was killed) during the command.
    pub session_ended: bool,
}

/// A live shell on a PTY.
pub(crate) struct PtySession {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    output: mpsc::Receiver<Vec<u8>>,
    dir: tempfile::TempDir,
    shell_pid: Option<i32>,
    program: PathBuf,
    counter: u64,
    dead: bool,
    /// A run started and did not finish (its future was dropped): the
    /// command may still be running and must be stopped first.
    in_flight: bool,
}

fn find_program(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Sends `signal` to the process group `pgrp`, never to our own group or init.
#[cfg(unix)]
fn signal_group(pgrp: i32, signal: i32) {
    // SAFETY: getpgrp has no preconditions.
    let own = unsafe { libc::getpgrp() };
    if pgrp > 1 && pgrp != own {
        // SAFETY: kill has no memory-safety preconditions; the pid is checked above.
        unsafe {
            libc::kill(-pgrp, signal);
        }
    }
}

impl PtySession {
    /// Spawns a shell in `root` and waits until it is ready.
    pub(crate) async fn spawn(root: &Path, spawner: &crate::Spawner) -> Result<Self, ShellError> {
        let env = crate::Spawner::environment();
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_os_str());
        let (program, args): (PathBuf, &[&str]) = if let Some(bash) = find_program("bash", path) {
            (bash, &["--noprofile", "--norc", "--noediting", "-i"])
        } else if let Some(sh) = find_program("sh", path) {
            (sh, &["-i"])
        } else {
            return Err(ShellError::NoShell);
        };
        let spawn_err = |e: &dyn std::fmt::Display| ShellError::Spawn(e.to_string());
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 50,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| spawn_err(&e))?;
        // The shell's working directory exists before the shell, so a
        // confined shell can be given it inside its private temp dir.
        let dir = tempfile::Builder::new()
            .prefix("north-shell-")
            .tempdir()
            .map_err(ShellError::Io)?;
        let mut cmd = spawner
            .keeping(dir.path())
            .pty_command(program.as_os_str(), root);
        cmd.args(args);
        let child = pair.slave.spawn_command(cmd).map_err(|e| spawn_err(&e))?;
        // Only the shell may hold the slave end, so its exit closes the stream.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().map_err(|e| spawn_err(&e))?;
        let writer = pair.master.take_writer().map_err(|e| spawn_err(&e))?;
        let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
        std::thread::Builder::new()
            .name("north-pty-reader".into())
            .spawn(move || {
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            if tx.blocking_send(buf[..n].to_vec()).is_err() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })
            .map_err(ShellError::Io)?;
        let shell_pid = child.process_id().and_then(|p| i32::try_from(p).ok());
        let mut session = PtySession {
            master: pair.master,
            writer,
            child,
            output: rx,
            dir,
            shell_pid,
            program,
            counter: 0,
            dead: false,
            in_flight: false,
        };
        session.initialize().await?;
        Ok(session)
    }

    /// The shell program this session runs.
    pub(crate) fn program(&self) -> &Path {
        &self.program
    }

    async fn initialize(&mut self) -> Result<(), ShellError> {
        let init = self.dir.path().join("init.sh");
        std::fs::write(&init, INIT_SCRIPT).map_err(ShellError::Io)?;
        let ready = nonce();
        self.send(&format!(
            " . {}; printf '%s%s\\n' '__NORTH_READY_' '{ready}'\n",
            shell_quote(&path_str(&init)?)
        ))?;
        let marker = format!("__NORTH_READY_{ready}\n").into_bytes();
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + STARTUP_TIMEOUT;
        loop {
            let next = if tokio::time::Instant::now() >= deadline {
                Err(())
            } else {
                tokio::time::timeout_at(deadline, self.output.recv())
                    .await
                    .map_err(|_| ())
            };
            match next {
                Ok(Some(bytes)) => {
                    seen.extend_from_slice(&bytes);
                    if seen.windows(marker.len()).any(|w| w == marker.as_slice()) {
                        return Ok(());
                    }
                    // Keep enough to find a marker split across reads and
                    // to quote the shell if it fails.
                    let excess = seen.len().saturating_sub(4096);
                    seen.drain(..excess);
                }
                Ok(None) => {
                    return Err(ShellError::Startup(format!(
                        "the shell exited while starting: {}",
                        clean_text(&seen).trim()
                    )));
                }
                Err(_) => {
                    return Err(ShellError::Startup(format!(
                        "the shell did not become ready within {}s",
                        STARTUP_TIMEOUT.as_secs()
                    )));
                }
            }
        }
    }

    /// Whether the shell has exited or was killed.
    pub(crate) fn is_dead(&mut self) -> bool {
        if !self.dead && matches!(self.child.try_wait(), Ok(Some(_))) {
            self.dead = true;
        }
        self.dead
    }

    fn send(&mut self, text: &str) -> Result<(), ShellError> {
        self.writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush())
            .map_err(ShellError::Io)
    }

    /// Runs one command. `cwd` must already be checked and absolute.
    pub(crate) async fn run(
        &mut self,
        command: &str,
        cwd: Option<&Path>,
        opts: &RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RawRun, ShellError> {
        if cancel.is_cancelled() {
            // Never start a command the caller already gave up on.
            return Ok(RawRun {
                stdout: String::new(),
                stderr: String::new(),
                exit_code: None,
                ending: Ending::Cancelled,
                truncated: false,
                session_ended: false,
            });
        }
        let (files, mut collector) = self.start(command, cwd, opts)?;
        let (ending, mut session_ended) =
            self.collect(&mut collector, &files.err, opts, cancel).await;
        if ending != Ending::Finished && !session_ended {
            session_ended = !self.interrupt(&mut collector).await;
        }
        let mut exit_code = collector.exit_code();
        if session_ended {
            self.dead = true;
            if exit_code.is_none() && ending == Ending::Finished {
                // `exit N` in the command: report the shell's own status.
                exit_code = self.wait_exit_status().await;
            }
        }
        let (stdout, out_truncated) = collector.finish();
        let (stderr, err_truncated) = read_bounded(&files.err, opts.max_output);
        for file in [&files.cmd, &files.err, &files.run] {
            let _ = std::fs::remove_file(file);
        }
        self.in_flight = false;
        Ok(RawRun {
            stdout,
            stderr,
            exit_code,
            ending,
            truncated: out_truncated || err_truncated,
            session_ended,
        })
    }

    /// Writes the command and its wrapper to private files and has the
    /// shell source the wrapper; the collector waits for its markers.
    fn start(
        &mut self,
        command: &str,
        cwd: Option<&Path>,
        opts: &RunOptions,
    ) -> Result<(RunFiles, Collector), ShellError> {
        self.counter += 1;
        let id = self.counter;
        let n = nonce();
        let dir = self.dir.path().to_owned();
        // Unpredictable names, each created new (never through a link or
        // over a FIFO something else planted), readable by this user only.
        let files = RunFiles {
            cmd: dir.join(format!("cmd-{id}-{n}.sh")),
            err: dir.join(format!("err-{id}-{n}.txt")),
            run: dir.join(format!("run-{id}-{n}.sh")),
        };
        let mut script = command.to_owned();
        script.push('\n');
        create_private(&files.cmd, script.as_bytes())?;
        create_private(&files.err, b"")?;
        let wrapper = wrapper_script(&n, &files.cmd, &files.err, cwd, opts)?;
        create_private(&files.run, wrapper.as_bytes())?;
        let collector = Collector::new(
            &format!("__NORTH_BEGIN_{n}"),
            &format!("__NORTH_END_{n}"),
            opts.max_output,
        );
        self.send(&format!(" . {}\n", shell_quote(&path_str(&files.run)?)))?;
        self.in_flight = true;
        Ok((files, collector))
    }

    /// Reads the command's output until its end marker, its deadline, a
    /// cancel or the shell's end: how it ended, and whether the shell did.
    async fn collect(
        &mut self,
        collector: &mut Collector,
        err_file: &Path,
        opts: &RunOptions,
        cancel: &CancellationToken,
    ) -> (Ending, bool) {
        let deadline = tokio::time::Instant::now() + opts.timeout;
        let mut ending = Ending::Finished;
        let mut session_ended = false;
        // stderr goes to a file (the PTY would merge it): a live view polls it.
        let mut err_seen: u64 = 0;
        let mut poll = tokio::time::interval(std::time::Duration::from_millis(200));
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        while !collector.is_done() {
            // Deadline and cancellation first: a command that never stops
            // printing must not starve them.
            tokio::select! {
                biased;
                () = tokio::time::sleep_until(deadline) => {
                    ending = Ending::TimedOut;
                    break;
                }
                () = cancel.cancelled() => {
                    ending = Ending::Cancelled;
                    break;
                }
                chunk = self.output.recv() => match chunk {
                    Some(bytes) => {
                        collector.feed(&bytes);
                        if let Some(live) = &opts.live {
                            send_live(live, OutputStream::Stdout, &collector.take_fresh());
                        }
                    }
                    None => {
                        session_ended = true;
                        break;
                    }
                },
                _ = poll.tick(), if opts.live.is_some() => {
                    if let Some(live) = &opts.live {
                        let fresh = read_from(err_file, &mut err_seen);
                        send_live(live, OutputStream::Stderr, &fresh);
                    }
                }
            }
        }
        if let Some(live) = &opts.live {
            send_live(live, OutputStream::Stdout, &collector.take_fresh());
            send_live(
                live,
                OutputStream::Stderr,
                &read_from(err_file, &mut err_seen),
            );
        }
        (ending, session_ended)
    }

    /// Whether an earlier run was abandoned mid-command.
    pub(crate) fn needs_recovery(&self) -> bool {
        self.in_flight
    }

    /// Stops whatever an abandoned run left running and resynchronizes.
    /// Returns whether the session survived.
    pub(crate) async fn recover(&mut self) -> bool {
        let none = format!("__NORTH_NONE_{}", nonce());
        let mut collector = Collector::new(&none, &none, 0);
        let survived = self.interrupt(&mut collector).await;
        if survived {
            self.in_flight = false;
        }
        survived
    }

    /// Stops the running command: Ctrl-C, then SIGKILL to its process group,
    /// then (if the shell itself does not come back) the whole session.
    /// Returns whether the session survived.
    async fn interrupt(&mut self, collector: &mut Collector) -> bool {
        if self.send("\x03").is_err() {
            self.kill();
            return false;
        }
        let started = Instant::now();
        let mut escalated = false;
        loop {
            match tokio::time::timeout(Duration::from_millis(25), self.output.recv()).await {
                Ok(Some(bytes)) => collector.feed(&bytes),
                Ok(None) => return false,
                Err(_) => {}
            }
            if collector.is_done() {
                return true;
            }
            let foreground = self.foreground_group();
            if foreground.is_some() && foreground == self.shell_pid {
                break;
            }
            if started.elapsed() > INTERRUPT_GRACE && !escalated {
                #[cfg(unix)]
                if let Some(group) = foreground {
                    signal_group(group, libc::SIGKILL);
                }
                escalated = true;
            }
            if started.elapsed() > SYNC_TIMEOUT {
                self.kill();
                return false;
            }
        }
        // The shell is in the foreground again: ask it to report back, which
        // also restores the directory if the command ran with a cwd.
        let sync = nonce();
        collector.expect_sync(&format!("__NORTH_SYNC_{sync}"));
        if self.send(&format!(" __north_sync '{sync}'\n")).is_err() {
            self.kill();
            return false;
        }
        let deadline = tokio::time::Instant::now() + SYNC_TIMEOUT;
        while !collector.is_done() {
            if tokio::time::Instant::now() >= deadline {
                self.kill();
                return false;
            }
            match tokio::time::timeout_at(deadline, self.output.recv()).await {
                Ok(Some(bytes)) => collector.feed(&bytes),
                Ok(None) => return false,
                Err(_) => {
                    // Something in the shell itself swallowed the sync line.
                    self.kill();
                    return false;
                }
            }
        }
        true
    }

    #[cfg(unix)]
    fn foreground_group(&self) -> Option<i32> {
        self.master.process_group_leader()
    }

    #[cfg(not(unix))]
    fn foreground_group(&self) -> Option<i32> {
        None
    }

    async fn wait_exit_status(&mut self) -> Option<i32> {
        for _ in 0..40 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return i32::try_from(status.exit_code()).ok();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        None
    }

    /// Kills the shell and everything in its foreground.
    pub(crate) fn kill(&mut self) {
        #[cfg(unix)]
        {
            if let Some(group) = self.foreground_group() {
                signal_group(group, libc::SIGKILL);
            }
            if let Some(pid) = self.shell_pid {
                // The shell leads its own session and process group.
                signal_group(pid, libc::SIGKILL);
                if pid > 1 {
                    // SAFETY: kill has no memory-safety preconditions; the pid
                    // is our own child, not yet reaped.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = self.child.kill();
        }
        // SIGKILL cannot be caught, so this reaps the shell promptly.
        let _ = self.child.wait();
        self.dead = true;
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if !self.is_dead() {
            self.kill();
        }
    }
}

/// Sends a live chunk; a receiver that went away only means nobody watches.
fn send_live(live: &super::LiveOutput, stream: OutputStream, bytes: &[u8]) {
    if !bytes.is_empty() {
        let _ = live.send((stream, String::from_utf8_lossy(bytes).into_owned()));
    }
}
