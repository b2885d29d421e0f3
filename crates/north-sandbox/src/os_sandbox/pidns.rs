//! The sandbox's own PID namespace: the command sees only its own
//! processes, and nothing it starts outlives it.
//!
//! After `unshare(CLONE_NEWPID)` the *next* child is PID 1 of a new
//! namespace. So the launcher forks: the parent stays outside, waits, and
//! exits with the command's status; the child becomes the namespace's init
//! — it mounts a `/proc` that shows only the namespace, forks the process
//! that goes on to be confined and exec the command, reaps orphans, and
//! exits when that process exits. The kernel then kills everything left in
//! the namespace (a `setsid` daemon included). Init dies with the parent
//! (`PR_SET_PDEATHSIG`), so killing the launcher kills the namespace.

use std::path::Path;

use super::OsSandboxError;

/// Forks into the new PID namespace (see the module documentation). Only
/// the process that goes on to confine itself and exec the command
/// returns; the outside parent and init exit here with its status.
pub(super) fn split() -> Result<(), OsSandboxError> {
    // SAFETY: the launcher is single-threaded (it runs before any runtime
    // or thread starts), so fork is safe.
    let init = unsafe { libc::fork() };
    if init < 0 {
        return Err(OsSandboxError::Setup {
            what: "start the sandbox's init",
            reason: last_error(),
        });
    }
    if init > 0 {
        exit_with(wait_for(init));
    }
    // PID 1 from here on. Die with the launcher, so killing it (North
    // closing a shell, a timeout) ends the whole namespace.
    // SAFETY: prctl with constant arguments only sets a process flag.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    if let Err(e) = mount_proc() {
        // A /proc of the outside namespace would show every process.
        eprintln!("sandbox: cannot mount a private /proc: {e}");
        exit_with(126);
    }
    // SAFETY: still single-threaded.
    let command = unsafe { libc::fork() };
    if command < 0 {
        eprintln!("sandbox: cannot start the command: {}", last_error());
        exit_with(126);
    }
    if command == 0 {
        return Ok(());
    }
    exit_with(reap_until(command));
}

/// Mounts a `/proc` that shows only this namespace's processes.
fn mount_proc() -> Result<(), String> {
    super::mounts::mount_new(
        c"proc",
        Path::new("/proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )
}

/// Init's loop: reaps every child (orphans re-parent to init) until the
/// command exits; returns its status.
fn reap_until(command: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into a live i32.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == command {
            return decode(status);
        }
        if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 126;
        }
    }
}

/// The outside parent: waits for init.
fn wait_for(init: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into a live i32.
        let pid = unsafe { libc::waitpid(init, &mut status, 0) };
        if pid == init {
            return decode(status);
        }
        if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 126;
        }
    }
}

/// A wait status as a shell reports it: the exit code, or 128 + signal.
pub(super) fn decode(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        126
    }
}

fn exit_with(code: i32) -> ! {
    // SAFETY: _exit ends the process without running destructors that
    // belong to the other side of the fork.
    unsafe { libc::_exit(code) }
}

fn last_error() -> String {
    std::io::Error::last_os_error().to_string()
}
