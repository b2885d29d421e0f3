//! A ceiling on how many processes a sandboxed command may run at once, so
//! a fork bomb stops at the ceiling instead of taking the machine.
//!
//! As an ordinary user, `RLIMIT_NPROC` does it (set to what the user runs
//! now plus the allowance). The kernel exempts root from that limit, so as
//! root the command goes into a fresh `pids` cgroup with `pids.max` (cgroup
//! v1 or v2, where writable). Cgroups left by earlier commands are removed
//! once empty.

use std::fs;
use std::path::{Path, PathBuf};

/// Prefix of the cgroups North creates.
const PREFIX: &str = "north-sandbox-";

/// How the ceiling is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ceiling {
    /// `RLIMIT_NPROC` at this many processes of the user.
    Rlimit(u64),
    /// A pids cgroup at this path.
    Cgroup(PathBuf),
}

/// The processes of `uid` now (every `/proc/<pid>` it owns).
fn processes_of(uid: u32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                })
                .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
                .count() as u64
        })
        .unwrap_or(0)
}

/// Where this process's pids cgroup lives in the mounted hierarchy, for
/// cgroup v1 (`N:pids:/path`) and v2 (`0::/path`).
fn pids_cgroup_dirs() -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            out.push(Path::new("/sys/fs/cgroup/pids").join(rel));
        } else if controllers.is_empty() {
            out.push(Path::new("/sys/fs/cgroup").join(rel));
            out.push(Path::new("/sys/fs/cgroup/unified").join(rel));
        }
    }
    out
}

/// Removes the empty cgroups earlier sandboxed commands left in `parent`.
fn sweep(parent: &Path) {
    if let Ok(dir) = fs::read_dir(parent) {
        for e in dir.filter_map(Result::ok) {
            if e.file_name().to_string_lossy().starts_with(PREFIX) {
                // Fails while processes are still in it: that is the point.
                let _ = fs::remove_dir(e.path());
            }
        }
    }
}

fn cgroup_ceiling(max: u64) -> Option<PathBuf> {
    for parent in pids_cgroup_dirs() {
        if !parent.is_dir() {
            continue;
        }
        sweep(&parent);
        let dir = parent.join(format!("{PREFIX}{}", std::process::id()));
        if fs::create_dir(&dir).is_err() {
            continue;
        }
        let ok = fs::write(dir.join("pids.max"), max.to_string()).is_ok()
            && fs::write(dir.join("cgroup.procs"), "0").is_ok();
        if ok {
            return Some(dir);
        }
        let _ = fs::remove_dir(&dir);
    }
    None
}

/// Puts the current process (and so everything it starts) under a ceiling
/// of `max` more processes; None when nothing here can enforce one.
pub(super) fn limit(max: u64) -> Option<Ceiling> {
    // SAFETY: plain libc getter.
    let uid = unsafe { libc::geteuid() };
    if uid != 0 {
        let n = processes_of(uid).saturating_add(max);
        let lim = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        // SAFETY: setrlimit reads the struct we pass.
        if unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &lim) } == 0 {
            return Some(Ceiling::Rlimit(n));
        }
        return None;
    }
    cgroup_ceiling(max).map(Ceiling::Cgroup)
}
