//! Sessions on disk, in `.north/sessions/<id>/`:
//!
//! - `log.jsonl` — the history, append-only ([`log`]): what the agent
//!   resumes from, synced to disk before every model request and tool run;
//! - `checkpoint.json` — a compact snapshot in the runtime-contracts §1
//!   shape (state, the most recent messages as text), written atomically at
//!   the end of a turn, for people and tools that read sessions;
//! - `trace.jsonl` — the trace, append-only ([`trace`]);
//! - `name` — the name the user gave it (`/rename`), if any ([`names`]).
//!
//! [`markdown`] renders a session for people (`export`).
//!
//! Sessions written before the log existed (a checkpoint with full
//! `messages`) still resume: the checkpoint is their history.

mod export;
pub(crate) mod log;
mod names;
mod trace;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use north_protocol::{ChatMessage, Checkpoint, ContentBlock, Message};
use thiserror::Error;

pub use export::markdown;
pub use log::{LOG_FILE, Replayed, SessionLog};

/// Where an imported session says what it came from.
pub const IMPORTED_FILE: &str = "imported.json";
pub use trace::Tracer;

use crate::redact::Redactor;

/// Messages kept (as text) in a checkpoint's `recent_messages`.
pub const RECENT_MESSAGES: usize = 20;
/// Characters kept of each of them.
const RECENT_CHARS: usize = 2_000;

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
    /// A session name that cannot be used.
    #[error(
        "invalid session name `{0}`: use 1 to 64 letters, digits, spaces, `-`, `_` or `.`, not only digits and dashes like an id"
    )]
    InvalidName(String),
    /// More than one session has the name asked for.
    #[error("{count} sessions are named `{name}`: resume one by its id ({ids})")]
    Ambiguous {
        /// The name.
        name: String,
        /// How many have it.
        count: usize,
        /// Their ids.
        ids: String,
    },
    /// A session North did not create here: it came with the repository.
    #[error(
        "session `{0}` was not created by your North in this project (it came with the repository); it is never resumed or undone"
    )]
    Foreign(String),
    /// North's state directory is a link (it would write wherever it points).
    #[error("{0} is a symbolic link; North keeps its state only in a real directory there")]
    LinkedStateDir(PathBuf),
    /// Another process has the session open.
    #[error(
        "the session in {0} is open in another North process; wait for it to end, or start a new session"
    )]
    Busy(PathBuf),
}

pub(crate) fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> StoreError + 'a {
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
pub(crate) fn now_ts() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `YYYYMMDD-HHMMSS` in UTC for a Unix time.
pub fn utc_stamp(secs: u64) -> String {
    stamp(secs)
}

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

/// The file in a session directory holding this user's mark.
const OWNER_FILE: &str = "owner";

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

    /// The project root.
    fn root(&self) -> Option<&Path> {
        self.dir.parent().and_then(Path::parent)
    }

    /// Whether `session` was created by this user's North here.
    fn provenance(&self, id: &str, dir: &Path) -> north_tools::owner::Provenance {
        let root = self.root().unwrap_or(dir);
        let mark = fs::read_to_string(dir.join(OWNER_FILE)).ok();
        north_tools::owner::check(
            north_tools::owner::StateKind::Session,
            root,
            id.as_bytes(),
            mark.as_deref().map(str::trim),
        )
    }

    /// Refuses a state directory that is a link.
    fn check_state_dir(&self) -> Result<(), StoreError> {
        for dir in [self.dir.parent(), Some(self.dir.as_path())]
            .into_iter()
            .flatten()
        {
            if fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(StoreError::LinkedStateDir(dir.to_path_buf()));
            }
        }
        Ok(())
    }

    /// Creates a new, empty session.
    pub fn create(&self) -> Result<Session, StoreError> {
        self.check_state_dir()?;
        if let Some(root) = self.root() {
            north_tools::repo::ensure_state_dir(root)
                .map_err(io_err("create", &root.join(north_tools::repo::STATE_DIR)))?;
        }
        fs::create_dir_all(&self.dir).map_err(io_err("create", &self.dir))?;
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        for _ in 0..16 {
            let id = format!("{}-{:04x}", stamp(secs), fastrand::u16(..));
            let dir = self.dir.join(&id);
            match fs::create_dir(&dir) {
                Ok(()) => {
                    let root = self.root().unwrap_or(&self.dir);
                    if let Some(mark) = north_tools::owner::mark(
                        north_tools::owner::StateKind::Session,
                        root,
                        id.as_bytes(),
                    ) {
                        write_atomic(&dir.join(OWNER_FILE), mark.as_bytes())
                            .map_err(io_err("mark", &dir))?;
                    }
                    return Ok(Session { id, dir });
                }
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

    /// A new session that continues `id` from where it stands: its log and
    /// turn records copied (so undo and rewind reach back into it), the
    /// original never written to again.
    pub fn fork(&self, id: &str) -> Result<Session, StoreError> {
        let from = self.open(id)?;
        let to = self.create()?;
        for name in [LOG_FILE, "turns.json"] {
            let src = from.dir.join(name);
            match fs::read(&src) {
                Ok(bytes) => write_atomic(&to.dir.join(name), &bytes)
                    .map_err(io_err("write", &to.dir.join(name)))?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err("read", &src)(e)),
            }
        }
        Ok(to)
    }

    /// A new session holding `messages` — a conversation brought from
    /// another tool — as its history, last answered by `model`, named
    /// `name`; `origin` (the tool and file it came from) is kept beside it
    /// in `imported.json`. It resumes like any session.
    pub fn import(
        &self,
        messages: &[north_protocol::Message],
        model: &north_protocol::ModelRef,
        name: &str,
        origin: &serde_json::Value,
    ) -> Result<Session, StoreError> {
        let session = self.create()?;
        let (mut log, _) = SessionLog::open(&session.dir, crate::redact::Redactor::from_env())?;
        log.sync(1, messages, 0, &north_protocol::State::default(), model)?;
        drop(log);
        let marker = session.dir.join(IMPORTED_FILE);
        write_atomic(
            &marker,
            serde_json::to_string_pretty(origin)
                .unwrap_or_default()
                .as_bytes(),
        )
        .map_err(io_err("write", &marker))?;
        session.rename(name)?;
        Ok(session)
    }

    /// Opens an existing session.
    pub fn open(&self, id: &str) -> Result<Session, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::InvalidId(id.into()));
        }
        self.check_state_dir()?;
        let dir = self.dir.join(id);
        if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Err(StoreError::NotFound(id.into()));
        }
        if !self.provenance(id, &dir).usable() {
            return Err(StoreError::Foreign(id.into()));
        }
        Ok(Session { id: id.into(), dir })
    }

    /// The ids of sessions under `.north/sessions` that North did not create
    /// here (a repository shipped them): never listed, resumed or undone.
    pub fn foreign(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|id| valid_id(id))
            .filter(|id| !self.provenance(id, &self.dir.join(id)).usable())
            .collect();
        out.sort();
        out
    }

    /// Every session of this user's with its checkpoint (if any), newest
    /// first; sessions a repository shipped are left out ([`Self::foreign`]).
    pub fn list(&self) -> Result<Vec<(Session, Option<Checkpoint>)>, StoreError> {
        self.check_state_dir()?;
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
            let is_dir = fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_dir());
            if !valid_id(&id) || !is_dir || !self.provenance(&id, &entry.path()).usable() {
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

    /// Removes the temp files killed writes left in every session nobody
    /// has open, so none survive a start.
    pub fn clean_stale_temps(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            if entry.path().is_dir() {
                log::clean_session_dir(&entry.path());
            }
        }
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

    /// A session kept inside this one (a sub-agent's transcript):
    /// `agents/<name>` in this session's directory.
    pub fn child(&self, name: &str) -> Result<Session, StoreError> {
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        let dir = self.dir.join("agents").join(&safe);
        fs::create_dir_all(&dir).map_err(io_err("create", &dir))?;
        Ok(Session {
            id: format!("{}/{safe}", self.id),
            dir,
        })
    }

    /// `log.jsonl`: the session's transcript, one record a line.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join(LOG_FILE)
    }

    /// `trace.jsonl`.
    pub(crate) fn trace_path(&self) -> PathBuf {
        self.dir.join("trace.jsonl")
    }

    /// The session as it is on disk (snapshot and log together), without
    /// taking its lock: for listing and showing. `None` for a session with
    /// nothing written yet.
    pub fn load_checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let snapshot = self.read_snapshot()?;
        let replayed = log::replay(&self.dir.join(LOG_FILE), false)?;
        Ok(merge(snapshot, replayed, &self.id, self.log_mtime()))
    }

    /// The whole transcript as the log keeps it — messages condensed out of
    /// the model's view included (`earlier`) — without taking the lock.
    pub fn transcript(&self) -> Result<Replayed, StoreError> {
        log::replay(&self.dir.join(LOG_FILE), false)
    }

    /// Opens the session for writing (its lock held until the log is
    /// dropped) and returns what to resume from.
    pub(crate) fn open_log(
        &self,
        redactor: Redactor,
    ) -> Result<(SessionLog, Option<Checkpoint>), StoreError> {
        let (log, replayed) = SessionLog::open(&self.dir, redactor)?;
        if replayed.dropped_torn_bytes > 0 {
            tracing::warn!(session = %self.id, bytes = replayed.dropped_torn_bytes, "dropped a torn last record of the session log");
        }
        let snapshot = self.read_snapshot()?;
        let mtime = self.log_mtime();
        Ok((log, merge(snapshot, replayed, &self.id, mtime)))
    }

    /// When the log was last written (Unix seconds; 0 without a log).
    fn log_mtime(&self) -> f64 {
        std::fs::metadata(self.dir.join(LOG_FILE))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64())
    }

    fn read_snapshot(&self) -> Result<Option<Checkpoint>, StoreError> {
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

    /// Writes the compact snapshot atomically (secrets scrubbed): the
    /// checkpoint with only its most recent messages, as text.
    pub(crate) fn save_checkpoint(
        &self,
        checkpoint: &Checkpoint,
        redactor: &Redactor,
    ) -> Result<(), StoreError> {
        let path = self.checkpoint_path();
        let compact = Checkpoint {
            recent_messages: recent(&checkpoint.messages, &checkpoint.recent_messages),
            messages: Vec::new(),
            ..checkpoint.clone()
        };
        let text = serde_json::to_string_pretty(&compact).map_err(|e| StoreError::Parse {
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

/// The snapshot and the log together: the log is the history when it
/// exists; an old session's checkpoint is its own history.
fn merge(
    snapshot: Option<Checkpoint>,
    replayed: Replayed,
    id: &str,
    log_mtime: f64,
) -> Option<Checkpoint> {
    if !replayed.found {
        return snapshot.map(|mut cp| {
            if cp.messages.is_empty() {
                return cp;
            }
            cp.recent_messages = cp.messages.iter().map(chat_message).collect();
            cp
        });
    }
    let base = snapshot.unwrap_or_else(|| Checkpoint {
        session_id: id.to_string(),
        revision: 0,
        updated_ts: 0.0,
        state: Default::default(),
        recent_messages: Vec::new(),
        trace_tail: vec!["trace.jsonl".into()],
        messages: Vec::new(),
        model: None,
        usage: None,
    });
    Some(Checkpoint {
        revision: replayed.revision.max(base.revision),
        updated_ts: base.updated_ts.max(log_mtime),
        state: replayed.state,
        recent_messages: replayed.messages.iter().map(chat_message).collect(),
        messages: replayed.messages,
        model: replayed.model.or(base.model),
        usage: replayed.usage.or(base.usage),
        ..base
    })
}

/// The text form of a message (runtime-contracts §1.3).
pub(crate) fn chat_message(m: &Message) -> ChatMessage {
    let mut content = String::new();
    for b in &m.content {
        match b {
            ContentBlock::Text { text } => content.push_str(text),
            ContentBlock::ToolCall(c) => content.push_str(&format!(
                "\n[tool_call {} {} {}]",
                c.id, c.name, c.arguments
            )),
            ContentBlock::ToolResult {
                call_id,
                content: c,
                ..
            } => content.push_str(&format!("[tool_result {call_id}] {c}")),
            _ => {}
        }
    }
    ChatMessage {
        role: m.role,
        content,
    }
}

/// The last [`RECENT_MESSAGES`] messages as text, each cut to a readable
/// length: a snapshot stays small however long the session grows.
fn recent(messages: &[Message], fallback: &[ChatMessage]) -> Vec<ChatMessage> {
    let all: Vec<ChatMessage> = if messages.is_empty() {
        fallback.to_vec()
    } else {
        messages.iter().map(chat_message).collect()
    };
    let skip = all.len().saturating_sub(RECENT_MESSAGES);
    all.into_iter()
        .skip(skip)
        .map(|mut m| {
            if m.content.chars().count() > RECENT_CHARS {
                let cut: String = m.content.chars().take(RECENT_CHARS).collect();
                m.content = format!("{cut}… [cut; the whole message is in log.jsonl]");
            }
            m
        })
        .collect()
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
