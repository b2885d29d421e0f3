//! Sessions on disk: `.north/sessions/<id>/checkpoint.json` (written
//! atomically after every turn) and `trace.jsonl` (append-only).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use north_protocol::{Checkpoint, TraceEvent, TraceKind};
use serde_json::Value;
use thiserror::Error;

use crate::redact::Redactor;

/// A storage failure, naming the file.
#[derive(Debug, Error)]
pub enum StoreError {
    /// I/O on a path failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A file did not parse.
    #[error("{path} is not a valid {what}: {message}")]
    Parse {
        /// Where.
        path: PathBuf,
        /// What it should be.
        what: &'static str,
        /// The parser's message.
        message: String,
    },
    /// No such session.
    #[error("no session `{0}` (see `north sessions list`)")]
    NotFound(String),
    /// A session id with characters that are not allowed.
    #[error("invalid session id `{0}`")]
    InvalidId(String),
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` atomically (temp file beside it, fsync, rename,
/// directory fsync; permissions kept): a crash leaves either the old file
/// or the new one, never a mix. One implementation for all of North:
/// [`north_tools::repo::atomic_write`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    north_tools::repo::atomic_write(path, bytes).map_err(|e| io::Error::other(e.to_string()))
}

/// Seconds since the Unix epoch.
pub fn now_ts() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `YYYYMMDD-HHMMSS` in UTC for a Unix time.
fn stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (proleptic Gregorian), valid for all dates we will see.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// All sessions of a project.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// One session's directory.
#[derive(Debug, Clone)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// `.north/sessions/<id>`.
    pub dir: PathBuf,
}

impl SessionStore {
    /// The store of the project at `root` (`root/.north/sessions`).
    pub fn new(root: &Path) -> Self {
        SessionStore {
            dir: root.join(".north").join("sessions"),
        }
    }

    /// Where sessions live.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates a new, empty session.
    pub fn create(&self) -> Result<Session, StoreError> {
        fs::create_dir_all(&self.dir).map_err(io_err("create", &self.dir))?;
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        for _ in 0..16 {
            let id = format!("{}-{:04x}", stamp(secs), fastrand::u16(..));
            let dir = self.dir.join(&id);
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(Session { id, dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_err("create", &dir)(e)),
            }
        }
        Err(StoreError::Io {
            action: "create",
            path: self.dir.clone(),
            source: io::Error::other("could not find a free session id"),
        })
    }

    /// Opens an existing session.
    pub fn open(&self, id: &str) -> Result<Session, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::InvalidId(id.into()));
        }
        let dir = self.dir.join(id);
        if !dir.is_dir() {
            return Err(StoreError::NotFound(id.into()));
        }
        Ok(Session { id: id.into(), dir })
    }

    /// Every session with its checkpoint (if any), newest first.
    pub fn list(&self) -> Result<Vec<(Session, Option<Checkpoint>)>, StoreError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("list", &self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let Some(id) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if !valid_id(&id) || !entry.path().is_dir() {
                continue;
            }
            let session = Session {
                id,
                dir: entry.path(),
            };
            let cp = session.load_checkpoint().ok().flatten();
            out.push((session, cp));
        }
        out.sort_by(|a, b| {
            let ta = a.1.as_ref().map(|c| c.updated_ts).unwrap_or(0.0);
            let tb = b.1.as_ref().map(|c| c.updated_ts).unwrap_or(0.0);
            tb.total_cmp(&ta).then_with(|| b.0.id.cmp(&a.0.id))
        });
        Ok(out)
    }

    /// The most recently updated session with a checkpoint.
    pub fn latest(&self) -> Result<Option<Session>, StoreError> {
        Ok(self
            .list()?
            .into_iter()
            .find(|(_, cp)| cp.is_some())
            .map(|(s, _)| s))
    }
}

impl Session {
    /// `checkpoint.json`.
    pub fn checkpoint_path(&self) -> PathBuf {
        self.dir.join("checkpoint.json")
    }

    /// `trace.jsonl`.
    pub fn trace_path(&self) -> PathBuf {
        self.dir.join("trace.jsonl")
    }

    /// The last checkpoint written, if any.
    pub fn load_checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let path = self.checkpoint_path();
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("read", &path)(e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StoreError::Parse {
                path,
                what: "checkpoint",
                message: e.to_string(),
            })
    }

    /// Writes `checkpoint` atomically (secrets scrubbed).
    pub fn save_checkpoint(
        &self,
        checkpoint: &Checkpoint,
        redactor: &Redactor,
    ) -> Result<(), StoreError> {
        let path = self.checkpoint_path();
        let text = serde_json::to_string_pretty(checkpoint).map_err(|e| StoreError::Parse {
            path: path.clone(),
            what: "checkpoint",
            message: e.to_string(),
        })?;
        write_atomic(&path, redactor.scrub(&text).as_bytes()).map_err(io_err("write", &path))
    }

    /// Opens the session's trace for appending.
    pub fn tracer(&self, redactor: Redactor) -> Result<Tracer, StoreError> {
        Tracer::open(&self.trace_path(), redactor)
    }
}

/// Append-only JSONL trace (runtime-contracts §6).
#[derive(Debug)]
pub struct Tracer {
    file: Mutex<File>,
    path: PathBuf,
    redactor: Redactor,
}

impl Tracer {
    /// Opens (creating) `path` for appending.
    pub fn open(path: &Path, redactor: Redactor) -> Result<Self, StoreError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_err("open", path))?;
        Ok(Tracer {
            file: Mutex::new(file),
            path: path.to_path_buf(),
            redactor,
        })
    }

    /// Where the trace is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event. Failures are logged, never fatal: a full disk
    /// must not end the user's session.
    pub fn record(&self, kind: TraceKind, data: Value) {
        let event = TraceEvent {
            ts: now_ts(),
            kind,
            data,
        };
        let Ok(mut line) = serde_json::to_string(&event) else {
            return;
        };
        line = self.redactor.scrub(&line).into_owned();
        line.push('\n');
        // One write call per line: O_APPEND keeps concurrent lines whole.
        if let Ok(mut f) = self.file.lock()
            && let Err(e) = f.write_all(line.as_bytes())
        {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot append to trace");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(stamp(0), "19700101-000000");
        assert_eq!(stamp(1_795_000_000), "20261118-110640");
        assert_eq!(stamp(951_782_400), "20000229-000000");
    }

    #[test]
    fn ids_with_path_characters_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        for bad in ["../x", "a/b", "", ".", "x y"] {
            assert!(
                matches!(store.open(bad), Err(StoreError::InvalidId(_))),
                "{bad}"
            );
        }
    }
}
