//! Background commands: dev servers, watchers, long test suites. A command
//! the policy approved starts outside the persistent PTY session (through
//! the same spawner: the key-free environment, the OS sandbox when the
//! shell is confined, a process group of its own) and runs on while the
//! model works; its output is kept bounded (head and tail) and read in
//! pieces. At most [`MAX_JOBS`] run at once; all are killed with their
//! process groups when the manager is dropped or [`Jobs::kill_all`] runs.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;

use crate::Spawner;

/// Background commands running at once, at most.
pub(crate) const MAX_JOBS: usize = 8;
/// Bytes of the start of a job's output kept.
const HEAD: usize = 8 * 1024;
/// Bytes of the end of a job's output kept.
const TAIL: usize = 24 * 1024;

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Still running.
    Running,
    /// Exited with this code (None: ended by a signal).
    Exited(Option<i32>),
    /// Killed by North (`shell_kill`, or the session ended).
    Killed,
}

/// What one read of a job's output returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRead {
    /// The job's id.
    pub id: String,
    /// Its command line.
    pub command: String,
    /// Output since the previous read (stdout and stderr as they came),
    /// with a marker where kept bounds dropped some.
    pub output: String,
    /// Its state now.
    pub state: JobState,
}

/// One line about a job, for `/ps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSummary {
    /// The job's id.
    pub id: String,
    /// Its command line.
    pub command: String,
    /// Its state.
    pub state: JobState,
    /// The last line it printed.
    pub last_line: String,
}

#[derive(Default)]
struct Buffer {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Buffer {
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.head.len() < HEAD {
                self.head.push(b);
            } else {
                if self.tail.len() == TAIL {
                    self.tail.pop_front();
                }
                self.tail.push_back(b);
            }
        }
        self.total += bytes.len() as u64;
    }

    /// Everything after byte `from` still kept, with a marker for a gap.
    fn since(&self, from: u64) -> String {
        let head_len = self.head.len() as u64;
        let tail_start = self.total - self.tail.len() as u64;
        let mut out = Vec::new();
        if from < head_len {
            out.extend_from_slice(&self.head[from as usize..]);
        }
        let from_tail = from.max(head_len);
        if from_tail < tail_start {
            out.extend_from_slice(
                format!(
                    "\n[… {} bytes of output not kept …]\n",
                    tail_start - from_tail
                )
                .as_bytes(),
            );
        }
        let skip = from_tail.saturating_sub(tail_start) as usize;
        out.extend(self.tail.iter().skip(skip));
        String::from_utf8_lossy(&out).into_owned()
    }

    fn last_line(&self) -> String {
        let all = self.since(self.total.saturating_sub(512));
        all.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .chars()
            .take(160)
            .collect()
    }
}

struct Job {
    command: String,
    pid: Option<u32>,
    buffer: Buffer,
    read: u64,
    state: JobState,
    announced: bool,
    changed: Arc<Notify>,
}

/// The background commands of one shell.
#[derive(Default)]
pub struct Jobs {
    jobs: Mutex<BTreeMap<String, Job>>,
    next: Mutex<u32>,
}

/// Why a background command could not start.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// [`MAX_JOBS`] are running.
    #[error(
        "{MAX_JOBS} background commands are running already; read or kill one first (shell_kill)"
    )]
    TooMany,
    /// The process could not be started.
    #[error("cannot start the background command: {0}")]
    Spawn(String),
}

impl Jobs {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Job>> {
        self.jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts `command` in `cwd` through `spawner`; returns its id.
    pub fn start(
        self: &Arc<Self>,
        spawner: &Spawner,
        command: &str,
        cwd: &Path,
    ) -> Result<String, JobError> {
        if self
            .lock()
            .values()
            .filter(|j| j.state == JobState::Running)
            .count()
            >= MAX_JOBS
        {
            return Err(JobError::TooMany);
        }
        let shell = if which_bash() { "bash" } else { "sh" };
        let mut cmd = spawner.tokio_command(OsStr::new(shell), cwd);
        cmd.arg("-c")
            .arg(command)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            // The job outlives this call; the table kills it, not a drop.
            .kill_on_drop(false);
        let mut child = cmd.spawn().map_err(|e| JobError::Spawn(e.to_string()))?;
        let id = {
            let mut next = self
                .next
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *next += 1;
            format!("bg{}", *next)
        };
        let changed = Arc::new(Notify::new());
        self.lock().insert(
            id.clone(),
            Job {
                command: command.to_string(),
                pid: child.id(),
                buffer: Buffer::default(),
                read: 0,
                state: JobState::Running,
                announced: false,
                changed: changed.clone(),
            },
        );
        let readers: Vec<_> = [
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn AsyncRead + Send + Unpin>),
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn AsyncRead + Send + Unpin>),
        ]
        .into_iter()
        .flatten()
        .map(|pipe| tokio::spawn(pump(Arc::downgrade(self), id.clone(), pipe)))
        .collect();
        let table = Arc::downgrade(self);
        let job = id.clone();
        tokio::spawn(async move {
            let status = child.wait().await.ok();
            // The output that was written before the exit is read first.
            for r in readers {
                let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
            }
            if let Some(table) = table.upgrade() {
                let mut jobs = table.lock();
                if let Some(j) = jobs.get_mut(&job) {
                    if j.state == JobState::Running {
                        j.state = JobState::Exited(status.and_then(|s| s.code()));
                    }
                    j.changed.notify_waiters();
                }
            }
        });
        Ok(id)
    }

    /// New output of job `id` since the last read, after waiting up to
    /// `wait` for it to exit (what came meanwhile included). `None`: no
    /// such job.
    pub async fn read(&self, id: &str, wait: Duration) -> Option<JobRead> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notify = {
                let mut jobs = self.lock();
                let job = jobs.get_mut(id)?;
                if job.state != JobState::Running || tokio::time::Instant::now() >= deadline {
                    let output = job.buffer.since(job.read);
                    job.read = job.buffer.total;
                    if job.state != JobState::Running {
                        // Read after it ended: the model knows already.
                        job.announced = true;
                    }
                    return Some(JobRead {
                        id: id.to_string(),
                        command: job.command.clone(),
                        output,
                        state: job.state,
                    });
                }
                job.changed.clone()
            };
            let _ = tokio::time::timeout_at(deadline, notify.notified()).await;
        }
    }

    /// Kills job `id` and what it started; `None`: no such job.
    pub fn kill(&self, id: &str) -> Option<JobState> {
        let mut jobs = self.lock();
        let job = jobs.get_mut(id)?;
        if job.state == JobState::Running {
            if let Some(pid) = job.pid {
                Spawner::kill_group(pid);
            }
            job.state = JobState::Killed;
            job.announced = true;
            job.changed.notify_waiters();
        }
        Some(job.state)
    }

    /// Kills every running job (the session ends).
    pub fn kill_all(&self) {
        let ids: Vec<String> = self.lock().keys().cloned().collect();
        for id in ids {
            self.kill(&id);
        }
    }

    /// One line for each job that ended since it was last announced (and
    /// was not read after it ended), marking them announced.
    pub fn take_exits(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (id, job) in self.lock().iter_mut() {
            if let JobState::Exited(code) = job.state
                && !job.announced
            {
                job.announced = true;
                let code = code.map_or("a signal".into(), |c| format!("exit code {c}"));
                out.push(format!(
                    "background command {id} (`{}`) ended with {code}; read the rest of its output with shell_output",
                    job.command
                ));
            }
        }
        out
    }

    /// Every job, for `/ps`.
    pub fn list(&self) -> Vec<JobSummary> {
        self.lock()
            .iter()
            .map(|(id, j)| JobSummary {
                id: id.clone(),
                command: j.command.clone(),
                state: j.state,
                last_line: j.buffer.last_line(),
            })
            .collect()
    }

    /// How many run now.
    pub fn running(&self) -> usize {
        self.lock()
            .values()
            .filter(|j| j.state == JobState::Running)
            .count()
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.kill_all();
    }
}

fn which_bash() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("bash").is_file()))
}

async fn pump(
    table: std::sync::Weak<Jobs>,
    id: String,
    mut pipe: Box<dyn AsyncRead + Send + Unpin>,
) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let Some(table) = table.upgrade() else { return };
                let mut jobs = table.lock();
                if let Some(job) = jobs.get_mut(&id) {
                    job.buffer.push(&buf[..n]);
                    job.changed.notify_waiters();
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_keeps_head_and_tail_and_reads_from_a_cursor() {
        let mut b = Buffer::default();
        b.push(b"hello ");
        assert_eq!(b.since(0), "hello ");
        b.push(&vec![b'x'; HEAD + TAIL + 100]);
        let all = b.since(0);
        assert!(all.starts_with("hello "));
        assert!(all.contains("bytes of output not kept"));
        assert_eq!(b.since(b.total - 3), "xxx");
    }

    #[tokio::test]
    async fn a_job_is_read_as_it_goes_and_its_exit_is_announced_once() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = Arc::new(Jobs::default());
        let id = jobs
            .start(
                &Spawner::unconfined(),
                "echo one; sleep 0.2; echo BG-DONE",
                dir.path(),
            )
            .unwrap();
        let mut seen = String::new();
        let mut state = JobState::Running;
        for _ in 0..50 {
            let r = jobs.read(&id, Duration::from_secs(10)).await.unwrap();
            seen.push_str(&r.output);
            state = r.state;
            if state != JobState::Running {
                break;
            }
        }
        assert!(seen.contains("one") && seen.contains("BG-DONE"), "{seen}");
        assert_eq!(state, JobState::Exited(Some(0)));
        assert!(
            jobs.take_exits().is_empty(),
            "read after it ended: no notice"
        );
        assert!(jobs.read("bg99", Duration::ZERO).await.is_none());
    }

    #[tokio::test]
    async fn kill_stops_the_job_and_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let jobs = Arc::new(Jobs::default());
        let id = jobs
            .start(
                &Spawner::unconfined(),
                &format!("(sleep 1; touch {}) & sleep 30", marker.display()),
                dir.path(),
            )
            .unwrap();
        assert_eq!(jobs.kill(&id), Some(JobState::Killed));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!marker.exists());
    }
}
