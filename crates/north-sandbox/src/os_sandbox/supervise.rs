//! The launcher's supervisor: the part of `north sandbox` that stays
//! outside the sandbox while the child runs, for every kind of child
//! (foreground shell, background job, hook, server).
//!
//! The launcher forks before it confines anything. The parent stays an
//! ordinary process of the user: it watches the project root and its
//! `.git` (inotify) and sets aside, the moment it appears, what a command
//! may not create because the user's git would run it (see
//! [`super::gitguard`]); when the child ends it looks once more and exits
//! with the child's status. It dies with North: a parent-death signal, and
//! on SIGTERM or SIGHUP it kills the child first. The child confines itself
//! and executes the command.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use super::OsSandboxError;
use super::gitguard;

/// Forks the supervisor. Only the child returns (to confine itself and run
/// the command); the supervisor exits here with the child's status.
pub fn supervise(root: &Path) -> Result<(), OsSandboxError> {
    super::linux::prepare_git(root);
    let before = gitguard::observe(root);
    let signals = blocked_signals();
    // SAFETY: the launcher is single-threaded (nothing has started a
    // thread before `north sandbox` runs), so fork is safe; getpid has no
    // preconditions.
    let supervisor = unsafe { libc::getpid() };
    let north = unsafe { libc::getppid() };
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(OsSandboxError::Setup {
            what: "start the sandbox's supervisor",
            reason: std::io::Error::last_os_error().to_string(),
        });
    }
    if child == 0 {
        // SAFETY: prctl and sigprocmask with valid arguments only change
        // this process's flags and mask.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::sigprocmask(libc::SIG_UNBLOCK, &signals, std::ptr::null_mut());
            if libc::getppid() != supervisor {
                libc::_exit(126);
            }
        }
        return Ok(());
    }
    // North's death reaches the supervisor as SIGTERM (read below), so the
    // child is killed and the project checked once more before it exits.
    // SAFETY: as above.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
        // North may have gone before the signal was armed.
        if libc::getppid() != north {
            libc::kill(child, libc::SIGKILL);
        }
    }
    // SIGINT stays blocked and unread: a Ctrl+C meant for the command in
    // the PTY shell must not end the shell.
    let mut ending = signals;
    // SAFETY: sigdelset on an initialised set.
    unsafe { libc::sigdelset(&mut ending, libc::SIGINT) };
    let status = watch(root, &before, child, &ending);
    if let Some(note) = gitguard::seal(root, &before) {
        eprintln!("north: {note}");
    }
    // SAFETY: _exit ends the process without running destructors that
    // belong to the child's side of the fork.
    unsafe { libc::_exit(status) }
}

/// Blocks SIGTERM, SIGHUP and SIGINT in this process (they are read from a
/// signalfd instead) and returns the set.
fn blocked_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise a zeroed set;
    // sigprocmask only changes this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        // SIGCHLD too: read from the signalfd, it wakes the watch the
        // moment the child ends.
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGCHLD] {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Watches until the child exits; returns its status as a shell reports it.
fn watch(
    root: &Path,
    before: &gitguard::GitState,
    child: libc::pid_t,
    set: &libc::sigset_t,
) -> i32 {
    let inotify = watcher(root);
    // SAFETY: signalfd with a valid set returns a new descriptor or -1.
    let sigfd = unsafe { libc::signalfd(-1, set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
    // SAFETY: a descriptor signalfd just returned is ours alone.
    let sigfd = (sigfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(sigfd) });
    loop {
        let mut fds = Vec::new();
        for fd in [inotify.as_ref(), sigfd.as_ref()].into_iter().flatten() {
            fds.push(libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // SAFETY: poll reads and writes the live pollfd array. The timeout
        // only matters where the kernel gave no signalfd.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
        if let Some(fd) = &inotify
            && drain(fd)
            && let Some(note) = gitguard::seal(root, before)
        {
            eprintln!("north: {note}");
        }
        if let Some(fd) = &sigfd
            && ending_signal(fd)
        {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(child, libc::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status into a live i32.
        let done = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
        if done == child {
            return super::pidns::decode(status);
        }
        if done < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 126;
        }
    }
}

/// An inotify descriptor watching the root and its `.git` for new entries
/// (None when the kernel refuses; the final check still runs).
fn watcher(root: &Path) -> Option<OwnedFd> {
    // SAFETY: inotify_init1 with constant flags returns a new fd or -1.
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a descriptor inotify_init1 just returned is ours alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    for dir in [root.to_path_buf(), root.join(".git")] {
        let Ok(c) = super::mounts::cpath(&dir) else {
            continue;
        };
        // SAFETY: the path is a live C string; the fd is ours.
        unsafe {
            libc::inotify_add_watch(
                fd.as_raw_fd(),
                c.as_ptr(),
                libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_ONLYDIR,
            );
        }
    }
    Some(fd)
}

/// Reads the pending signals of the signalfd; whether one of them ends the
/// child (anything but SIGCHLD, which only wakes the watch).
fn ending_signal(fd: &OwnedFd) -> bool {
    let mut ending = false;
    // SAFETY: a zeroed signalfd_siginfo is a valid value to read into.
    let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    loop {
        // SAFETY: read writes at most `size` bytes into the live struct.
        let n = unsafe { libc::read(fd.as_raw_fd(), (&raw mut info).cast(), size) };
        if usize::try_from(n).ok() != Some(size) {
            return ending;
        }
        ending |= info.ssi_signo != libc::SIGCHLD as u32;
    }
}

/// Reads everything pending on a non-blocking descriptor; whether there was
/// anything.
fn drain(fd: &OwnedFd) -> bool {
    let mut any = false;
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: read writes at most buf.len() bytes into the live buffer.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return any;
        }
        any = true;
    }
}
