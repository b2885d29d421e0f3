//! The snapshot watcher: one background process per big tree that keeps
//! the tree's watches between North processes, so the first snapshot of a
//! new process — every `north exec` turn is one — costs what changed since
//! the last, not a walk of 200,000 files.
//!
//! A whole walk of a tree with at least [`DEFAULT_MIN_ENTRIES`] paths
//! starts one (`north snapshot-watcher`, once the binary called
//! [`enable`]). It walks and watches the tree, then answers on a unix
//! socket in North's runtime directory — the user's own, mode 0700, and
//! hidden from every sandboxed command — with the name of a snapshot it
//! takes when asked. While nobody asks it drains the kernel's queue, so a
//! busy tree does not overflow it. A process asks before it walks; every
//! failure — no watcher, a directory or socket that is not the user's own,
//! an answer that is late, malformed or names no stored tree, another
//! version — means the whole walk, as without a watcher: it only ever
//! saves time. A tree it cannot watch (out of inotify watches) gets no
//! socket, and its lock is held for [`IDLE`] so that each new process
//! does not start another that fails the same way. It leaves after
//! [`IDLE`] without a question, when the tree
//! or its store goes, when its socket is taken away, or when a North of
//! another version asks (which then starts its own).
//!
//! Only North's own code runs in it (the walk and the store, as in any
//! North process), so it does not run under a command's sandbox; it
//! confines itself instead (Landlock: it reads what the user can, writes
//! only its store and its runtime files, executes nothing, opens no TCP
//! socket). It starts with the user's environment minus anything secret,
//! in a session of its own, with no terminal and no standard streams.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use serde::{Deserialize, Serialize};

use super::{SnapshotError, SnapshotId, SnapshotStats, SnapshotStore};
use crate::edit::content_hash;

/// Paths a tree needs before a whole walk starts a watcher for it: below
/// this a whole walk costs less than a process.
pub const DEFAULT_MIN_ENTRIES: usize = 50_000;

/// How long a watcher waits for a question before it leaves.
pub const IDLE: Duration = Duration::from_secs(600);

/// How long a process waits for the watcher's answer (a watcher whose
/// queue overflowed walks the whole tree first).
const ANSWER_WAIT: Duration = Duration::from_secs(60);

/// How long the watcher waits for a question once connected.
const QUESTION_WAIT: Duration = Duration::from_secs(5);

/// The most a question or an answer may be.
const MAX_LINE: u64 = 64 * 1024;

/// How often the watcher looks whether its tree, store and socket are
/// still there when nothing happens.
const CHECK_EVERY: Duration = Duration::from_secs(30);

/// Questions and answers carry the version: a watcher of another version
/// may keep its trees another way.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Turns the watcher off, or sets the paths a tree needs first.
pub const ENV_VAR: &str = "NORTH_SNAPSHOT_WATCHER";

/// What [`enable`] set up for this process.
#[derive(Debug, Clone)]
struct Setup {
    exe: PathBuf,
    runtime: PathBuf,
    min_entries: usize,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

/// Lets this process's whole walks of big trees start a watcher
/// (`exe snapshot-watcher`) and its snapshots ask one, with sockets in
/// `runtime` (North's runtime directory). `NORTH_SNAPSHOT_WATCHER=off`
/// (or `0`) leaves it off; a number sets the paths a tree needs first.
/// Without this call — a library user's process — snapshots never start
/// or ask a watcher.
pub fn enable(exe: PathBuf, runtime: PathBuf) {
    let min_entries = match std::env::var(ENV_VAR) {
        Ok(value) => match value.trim() {
            "off" | "false" | "no" | "0" => return,
            number => number.parse().unwrap_or(DEFAULT_MIN_ENTRIES),
        },
        Err(_) => DEFAULT_MIN_ENTRIES,
    };
    let _ = SETUP.set(Setup {
        exe,
        runtime,
        min_entries,
    });
}

/// Why the watcher could not serve.
#[derive(Debug, thiserror::Error)]
pub enum WatcherError {
    /// A file or socket could not be used.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The runtime directory is not the user's own, private directory.
    #[error("{0} is not a private directory of this user; the watcher will not use it")]
    NotPrivate(PathBuf),
    /// The first snapshot failed.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The watcher could not confine itself.
    #[error(transparent)]
    Confine(#[from] north_sandbox::os_sandbox::OsSandboxError),
}

fn io(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WatcherError {
    let path = path.to_path_buf();
    move |source| WatcherError::Io { op, path, source }
}

/// A question: a snapshot of `root`, now.
#[derive(Debug, Serialize, Deserialize)]
struct Question {
    version: String,
    root: PathBuf,
}

/// The watcher's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
enum Answer {
    /// The snapshot it took, and what it cost.
    Snapshot {
        id: String,
        entries: usize,
        hashed: usize,
        bytes_written: u64,
        full_walk: bool,
    },
    /// It will not take one (another version, another tree, a failure).
    Refused { reason: String },
}

/// Where the watcher of one store listens and holds its lock.
struct Place {
    dir: PathBuf,
    socket: PathBuf,
    lock: PathBuf,
}

impl Place {
    /// The watcher's files for the store at `store_dir`, named after it.
    fn of(runtime: &Path, store_dir: &Path) -> Place {
        let store = std::path::absolute(store_dir).unwrap_or_else(|_| store_dir.to_path_buf());
        let hash = content_hash(store.as_os_str().as_encoded_bytes());
        let key = hash.get(..16).unwrap_or(&hash);
        Place {
            dir: runtime.to_path_buf(),
            socket: runtime.join(format!("snap-{key}.sock")),
            lock: runtime.join(format!("snap-{key}.lock")),
        }
    }
}

/// This process's effective user.
fn me() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Whether `dir` is a real directory of this user that no one else may
/// enter: only then is a socket in it the user's watcher.
fn private(dir: &Path) -> bool {
    fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == me() && m.mode() & 0o077 == 0)
}

/// Creates the runtime directory if missing and checks it is private.
fn make_private(dir: &Path) -> Result<(), WatcherError> {
    if fs::symlink_metadata(dir).is_err() {
        fs::create_dir_all(dir).map_err(io("create", dir))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io("protect", dir))?;
    }
    if private(dir) {
        Ok(())
    } else {
        Err(WatcherError::NotPrivate(dir.to_path_buf()))
    }
}

/// The user on the other end of `stream`.
fn peer(stream: &UnixStream) -> Option<u32> {
    getsockopt(stream, PeerCredentials).ok().map(|c| c.uid())
}

/// Reads one line of at most [`MAX_LINE`] bytes.
fn read_line(stream: &UnixStream) -> Option<String> {
    let mut line = String::new();
    BufReader::new(stream.take(MAX_LINE))
        .read_line(&mut line)
        .ok()?;
    line.ends_with('\n').then_some(line)
}

fn write_line(mut stream: &UnixStream, value: &impl Serialize) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    stream.write_all(&bytes)
}

/// Asks the watcher of `store` for a snapshot of `root`; None (walk it
/// here) whenever the answer is not one to believe.
pub(super) fn ask(store: &SnapshotStore, root: &Path) -> Option<(SnapshotId, SnapshotStats)> {
    let setup = SETUP.get()?;
    let place = Place::of(&setup.runtime, store.dir());
    if !private(&place.dir) {
        return None;
    }
    let stream = UnixStream::connect(&place.socket).ok()?;
    if peer(&stream)? != me() {
        return None;
    }
    stream.set_read_timeout(Some(ANSWER_WAIT)).ok()?;
    stream.set_write_timeout(Some(QUESTION_WAIT)).ok()?;
    let question = Question {
        version: VERSION.to_string(),
        root: root.to_path_buf(),
    };
    write_line(&stream, &question).ok()?;
    let answer: Answer = serde_json::from_str(&read_line(&stream)?).ok()?;
    match answer {
        Answer::Snapshot {
            id,
            entries,
            hashed,
            bytes_written,
            full_walk,
        } if store.holds(&id) => Some((
            SnapshotId(id),
            SnapshotStats {
                entries,
                hashed,
                bytes_written,
                full_walk,
                by_watcher: true,
            },
        )),
        _ => None,
    }
}

/// Starts a watcher for `root` after a whole walk of `entries` paths, if
/// the tree is big enough and none holds the store's lock.
pub(super) fn start(store: &SnapshotStore, root: &Path, entries: usize) {
    let Some(setup) = SETUP.get() else { return };
    if entries < setup.min_entries {
        return;
    }
    let place = Place::of(&setup.runtime, store.dir());
    if make_private(&place.dir).is_err() || locked(&place.lock) {
        return;
    }
    let mut cmd = north_sandbox::Spawner::service(setup.exe.as_os_str(), root);
    cmd.arg("snapshot-watcher")
        .arg("--root")
        .arg(root)
        .arg("--store")
        .arg(store.dir())
        .arg("--runtime")
        .arg(&setup.runtime);
    match cmd.spawn() {
        // Reaped when it leaves, if this process is still there.
        Ok(mut child) => {
            let _ = std::thread::Builder::new()
                .name("snapshot-watcher-reaper".into())
                .spawn(move || child.wait());
        }
        Err(e) => tracing::debug!(error = %e, "the snapshot watcher did not start"),
    }
}

/// Whether a watcher holds the lock at `path`.
fn locked(path: &Path) -> bool {
    let Ok(file) = fs::OpenOptions::new().read(true).open(path) else {
        return false;
    };
    matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock))
}

/// What the watcher does after a question.
enum Next {
    Stay,
    Leave,
}

/// Runs the watcher of the store at `store_dir` for the tree at `root`,
/// with its socket in `runtime` (see the module docs). Returns when it
/// leaves; Ok at once when another watcher has the store.
pub fn serve(store_dir: &Path, root: &Path, runtime: &Path) -> Result<(), WatcherError> {
    let place = Place::of(runtime, store_dir);
    make_private(&place.dir)?;
    let store = SnapshotStore::open(store_dir)?;
    // From here on it writes only its store and its runtime files, runs
    // nothing and opens no TCP socket.
    let confined =
        north_sandbox::os_sandbox::confine_helper(&[store.dir().to_path_buf(), place.dir.clone()])?;
    tracing::info!(landlock_abi = ?confined, "snapshot watcher confined");
    let mut lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&place.lock)
        .map_err(io("open", &place.lock))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Ok(()),
        Err(fs::TryLockError::Error(e)) => return Err(io("lock", &place.lock)(e)),
    }
    // Who holds it, for `ps` and for tests that wait for it to leave.
    let _ = lock
        .set_len(0)
        .and_then(|()| writeln!(lock, "{}", std::process::id()));
    let root_ino = fs::metadata(root).map_err(io("read", root))?.ino();
    {
        let mut slot = store.slot();
        store.snapshot_here(&mut slot, root, false)?;
        if slot.live.is_none() {
            // Not watchable (out of watches): it keeps the lock for a
            // while without a socket, so each new process does not start
            // another watcher that fails the same way.
            drop(slot);
            let started = Instant::now();
            while started.elapsed() < IDLE && fs::metadata(root).is_ok_and(|m| m.ino() == root_ino)
            {
                std::thread::sleep(CHECK_EVERY);
            }
            return Ok(());
        }
    }
    let _ = fs::remove_file(&place.socket);
    let listener = UnixListener::bind(&place.socket).map_err(io("listen on", &place.socket))?;
    listener
        .set_nonblocking(true)
        .map_err(io("listen on", &place.socket))?;
    let socket_ino = fs::symlink_metadata(&place.socket)
        .map_err(io("read", &place.socket))?
        .ino();
    let result = watch(
        &store,
        root,
        &listener,
        root_ino,
        (&place.socket, socket_ino),
    );
    if fs::symlink_metadata(&place.socket).is_ok_and(|m| m.ino() == socket_ino) {
        let _ = fs::remove_file(&place.socket);
    }
    result
}

/// The watcher's loop: drains events, answers questions, and returns when
/// it should leave.
fn watch(
    store: &SnapshotStore,
    root: &Path,
    listener: &UnixListener,
    root_ino: u64,
    (socket, socket_ino): (&Path, u64),
) -> Result<(), WatcherError> {
    let mut asked = Instant::now();
    loop {
        let Some(left) = IDLE.checked_sub(asked.elapsed()) else {
            return Ok(());
        };
        let wait = PollTimeout::try_from(left.min(CHECK_EVERY)).unwrap_or(PollTimeout::MAX);
        let (events, question) = {
            let slot = store.slot();
            let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
            if let Some(live) = &slot.live {
                fds.push(PollFd::new(live.fd(), PollFlags::POLLIN));
            }
            match poll(&mut fds, wait) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(io("wait on", socket)(e.into())),
            }
            let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
            (
                fds.get(1).is_some_and(ready),
                fds.first().is_some_and(ready),
            )
        };
        if events && let Some(live) = store.slot().live.as_mut() {
            live.drain();
        }
        let here = |path: &Path, ino: u64| fs::symlink_metadata(path).is_ok_and(|m| m.ino() == ino);
        if !here(root, root_ino) || !here(socket, socket_ino) || !store.dir().is_dir() {
            return Ok(());
        }
        if !question {
            continue;
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    asked = Instant::now();
                    if let Next::Leave = answer(store, root, &stream) {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io("accept on", socket)(e)),
            }
        }
    }
}

/// Answers one question on `stream`.
fn answer(store: &SnapshotStore, root: &Path, stream: &UnixStream) -> Next {
    let ready = stream.set_nonblocking(false).is_ok()
        && stream.set_read_timeout(Some(QUESTION_WAIT)).is_ok()
        && stream.set_write_timeout(Some(QUESTION_WAIT)).is_ok();
    if !ready || peer(stream) != Some(me()) {
        return Next::Stay;
    }
    let Some(question) = read_line(stream).and_then(|l| serde_json::from_str::<Question>(&l).ok())
    else {
        return Next::Stay;
    };
    let refused = |reason: &str| Answer::Refused {
        reason: reason.to_string(),
    };
    if question.version != VERSION {
        // The asker starts a watcher of its own version once this one is
        // gone.
        let _ = write_line(stream, &refused("another version"));
        return Next::Leave;
    }
    if question.root != root {
        let _ = write_line(stream, &refused("another tree"));
        return Next::Stay;
    }
    let done = {
        let mut slot = store.slot();
        store.snapshot_here(&mut slot, root, false)
    };
    let reply = match done {
        Ok((id, stats)) => Answer::Snapshot {
            id: id.0,
            entries: stats.entries,
            hashed: stats.hashed,
            bytes_written: stats.bytes_written,
            full_walk: stats.full_walk,
        },
        Err(e) => refused(&e.to_string()),
    };
    let _ = write_line(stream, &reply);
    Next::Stay
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_store_has_its_own_socket_and_lock_in_the_runtime_dir() {
        let a = Place::of(Path::new("/run/u/north"), Path::new("/p/.north/snapshots"));
        let b = Place::of(Path::new("/run/u/north"), Path::new("/q/.north/snapshots"));
        assert_ne!(a.socket, b.socket);
        assert!(a.socket.starts_with("/run/u/north"));
        let name = a.socket.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("snap-") && name.ends_with(".sock"),
            "{name}"
        );
        assert_eq!(a.lock.with_extension("sock"), a.socket);
    }

    #[test]
    fn a_runtime_dir_others_may_enter_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!private(&open));
        assert!(matches!(
            make_private(&open),
            Err(WatcherError::NotPrivate(_))
        ));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(!private(&link));
        let fresh = dir.path().join("fresh/north");
        make_private(&fresh).unwrap();
        assert!(private(&fresh));
    }

    #[test]
    fn answers_round_trip_and_unknown_ones_are_not_believed() {
        let line = serde_json::to_string(&Answer::Snapshot {
            id: "ab".into(),
            entries: 3,
            hashed: 1,
            bytes_written: 9,
            full_walk: false,
        })
        .unwrap();
        assert!(line.contains("\"answer\":\"snapshot\""), "{line}");
        assert!(serde_json::from_str::<Answer>(&line).is_ok());
        assert!(serde_json::from_str::<Answer>(r#"{"answer":"maybe"}"#).is_err());
    }
}
