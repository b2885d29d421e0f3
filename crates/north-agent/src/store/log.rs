//! A session's history as an append-only log: `log.jsonl` in the session
//! directory, one scrubbed JSON record per line.
//!
//! Records say how the history changed — "keep the first `keep` messages,
//! then append these", "the first `drop` messages were condensed", "the
//! state is now", "the model is now" — so an ordinary step appends only what
//! is new and bytes written grow with the transcript, not with its square.
//! The file is never rewritten: everything the session said stays in it for
//! good. The model's view (the replayed `messages`) is derived from it;
//! messages condensed out of that view stay in the transcript (`earlier`),
//! and any earlier view can be read back from a byte offset (rewind).
//!
//! Durability: every append is `fdatasync`ed before the agent acts on it
//! (before a model request and before a tool runs), so a crash loses at most
//! the record being written. A torn last line is dropped on the next open;
//! a torn line anywhere else is corruption and is reported, never guessed
//! at. One process at a time writes a session: the log holds an advisory
//! lock on `lock` in the session directory.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use north_protocol::{Message, ModelRef, State, Usage};
use serde::{Deserialize, Serialize};

use super::{StoreError, io_err};
use crate::redact::Redactor;

/// The log's file name in the session directory.
pub const LOG_FILE: &str = "log.jsonl";

/// One line of the log.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Record {
    /// Keep the first `keep` messages, then append `messages`.
    Sync {
        /// Revision after this record.
        rev: u64,
        /// Messages kept.
        keep: usize,
        /// Messages appended.
        messages: Vec<Message>,
    },
    /// The first `drop` messages of the view were condensed into the
    /// session summary: they leave the model's view, not the transcript.
    /// `lead` (a note restating the request) then opens the view.
    Condense {
        /// Revision after this record.
        rev: u64,
        /// Messages that left the view.
        drop: usize,
        /// The note that now opens the view, if any.
        lead: Option<Message>,
    },
    /// The view goes back to an earlier one (a rewind past a condensation):
    /// the transcript keeps its first `earlier` condensed messages, and the
    /// view is `messages`.
    Restore {
        /// Revision after this record.
        rev: u64,
        /// Condensed messages still before the view.
        earlier: usize,
        /// Whether the view opens with a condensation note.
        lead: bool,
        /// The view.
        messages: Vec<Message>,
    },
    /// The agent state is now `state`.
    State {
        /// The state.
        state: State,
    },
    /// The session continues on `model`.
    Model {
        /// The model.
        model: ModelRef,
    },
    /// Tokens used over the session so far.
    Usage {
        /// The running total.
        total: Usage,
    },
}

/// A session replayed from disk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replayed {
    /// The history as the model sees it.
    pub messages: Vec<Message>,
    /// Messages condensed out of the view, oldest first: with `messages`
    /// (less its opening note, see `lead`) the whole transcript.
    pub earlier: Vec<Message>,
    /// The view opens with a condensation note, not a message of the
    /// conversation.
    pub lead: bool,
    /// The state.
    pub state: State,
    /// The model that wrote the last records.
    pub model: Option<ModelRef>,
    /// Tokens used over the session, when recorded.
    pub usage: Option<Usage>,
    /// The revision of the last record.
    pub revision: u64,
    /// Whether anything was read.
    pub found: bool,
    /// A torn last line that was dropped (its length), if any.
    pub dropped_torn_bytes: u64,
}

impl Replayed {
    fn apply(&mut self, record: Record) {
        self.found = true;
        match record {
            Record::Sync {
                rev,
                keep,
                messages,
            } => {
                self.messages.truncate(keep);
                self.messages.extend(messages);
                self.lead &= keep > 0;
                self.revision = rev;
            }
            Record::Condense { rev, drop, lead } => {
                let drop = drop.min(self.messages.len());
                let skip = usize::from(self.lead && drop > 0);
                let gone: Vec<Message> = self.messages.drain(..drop).skip(skip).collect();
                self.earlier.extend(gone);
                self.lead = lead.is_some();
                if let Some(note) = lead {
                    self.messages.insert(0, note);
                }
                self.revision = rev;
            }
            Record::Restore {
                rev,
                earlier,
                lead,
                messages,
            } => {
                self.earlier.truncate(earlier);
                self.messages = messages;
                self.lead = lead;
                self.revision = rev;
            }
            Record::State { state } => self.state = state,
            Record::Model { model } => self.model = Some(model),
            Record::Usage { total } => self.usage = Some(total),
        }
    }
}

/// Reads `path`; a missing file replays to nothing. With `repair`, a torn
/// last line is cut off the file (only the writer may do that).
pub(crate) fn replay(path: &Path, repair: bool) -> Result<Replayed, StoreError> {
    replay_upto(path, repair, u64::MAX)
}

/// The session as it was when the log was `bytes` long: the view a turn
/// began with, read back for a rewind.
pub(crate) fn replay_prefix(path: &Path, bytes: u64) -> Result<Replayed, StoreError> {
    replay_upto(path, false, bytes)
}

fn replay_upto(path: &Path, repair: bool, limit: u64) -> Result<Replayed, StoreError> {
    use std::io::Read;
    let mut out = Replayed::default();
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io_err("read", path)(e)),
    };
    let mut reader = BufReader::new(file.take(limit));
    let mut line = Vec::new();
    let mut good: u64 = 0;
    let mut pending_error: Option<(u64, String)> = None;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(io_err("read", path))?;
        if n == 0 {
            break;
        }
        if let Some((at, message)) = pending_error.take() {
            // A bad line followed by more lines is not a torn tail.
            return Err(StoreError::Parse {
                path: path.to_path_buf(),
                what: "session log",
                message: format!("line at byte {at}: {message}"),
            });
        }
        let complete = line.last() == Some(&b'\n');
        match serde_json::from_slice::<Record>(&line) {
            Ok(record) if complete => {
                out.apply(record);
                good += n as u64;
            }
            Ok(_) => pending_error = Some((good, "no line end".into())),
            Err(e) => pending_error = Some((good, e.to_string())),
        }
    }
    if pending_error.is_some() {
        let len = std::fs::metadata(path)
            .map(|m| m.len())
            .map_err(io_err("read", path))?;
        out.dropped_torn_bytes = len - good;
        if repair {
            let f = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io_err("open", path))?;
            f.set_len(good).map_err(io_err("truncate", path))?;
            f.sync_all().map_err(io_err("sync", path))?;
        }
    }
    Ok(out)
}

/// The writer of one session's log; holds the session's lock.
#[derive(Debug)]
pub struct SessionLog {
    dir: PathBuf,
    path: PathBuf,
    file: File,
    _lock: File,
    redactor: Redactor,
    /// Messages known to be on disk as they are in memory.
    on_disk: usize,
    state_on_disk: Option<State>,
    model_on_disk: Option<ModelRef>,
    usage: Option<Usage>,
    usage_on_disk: Option<Usage>,
    /// The log's size.
    log_bytes: u64,
    /// Bytes this process wrote to the log.
    written: u64,
}

impl SessionLog {
    /// Opens the log of the session in `dir` for writing: takes the
    /// session's lock, removes temp files a killed write left, drops a torn
    /// last line, and replays what is there.
    pub(crate) fn open(dir: &Path, redactor: Redactor) -> Result<(Self, Replayed), StoreError> {
        let lock_path = dir.join("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err("open", &lock_path))?;
        if !north_tools::repo::try_lock_exclusive(&lock).map_err(io_err("lock", &lock_path))? {
            return Err(StoreError::Busy(dir.to_path_buf()));
        }
        remove_stale_temps(dir);
        let path = dir.join(LOG_FILE);
        let replayed = replay(&path, true)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        let log_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let log = SessionLog {
            dir: dir.to_path_buf(),
            path,
            file,
            _lock: lock,
            redactor,
            on_disk: replayed.messages.len(),
            state_on_disk: replayed.found.then(|| replayed.state.clone()),
            model_on_disk: replayed.model.clone(),
            usage: replayed.usage,
            usage_on_disk: replayed.usage,
            log_bytes,
            written: 0,
        };
        Ok((log, replayed))
    }

    /// Records the session's running token total with the next sync.
    pub(crate) fn note_usage(&mut self, total: Usage) {
        self.usage = Some(total);
    }

    /// Brings the log up to date: `messages[..clean]` are unchanged since
    /// the last sync (as far as the caller knows), the rest are new or
    /// changed. Appends only what differs, then syncs the file to disk.
    pub(crate) fn sync(
        &mut self,
        rev: u64,
        messages: &[Message],
        clean: usize,
        state: &State,
        model: &ModelRef,
    ) -> Result<(), StoreError> {
        let keep = clean.min(self.on_disk).min(messages.len());
        let mut lines = String::new();
        if keep < messages.len() || keep < self.on_disk {
            let mut json = Vec::with_capacity(messages.len() - keep);
            for m in &messages[keep..] {
                let j = serde_json::to_string(m).map_err(|e| StoreError::Parse {
                    path: self.path.clone(),
                    what: "session log record",
                    message: e.to_string(),
                })?;
                json.push(j);
            }
            let record = format!(
                r#"{{"op":"sync","rev":{rev},"keep":{keep},"messages":[{}]}}"#,
                json.join(",")
            );
            lines.push_str(&self.redactor.scrub(&record));
            lines.push('\n');
        }
        if self.state_on_disk.as_ref() != Some(state) {
            self.push(
                &mut lines,
                &Record::State {
                    state: state.clone(),
                },
            )?;
        }
        if self.model_on_disk.as_ref() != Some(model) {
            self.push(
                &mut lines,
                &Record::Model {
                    model: model.clone(),
                },
            )?;
        }
        if let Some(total) = self.usage
            && self.usage_on_disk != self.usage
        {
            self.push(&mut lines, &Record::Usage { total })?;
        }
        self.append(&lines)?;
        self.on_disk = messages.len();
        self.state_on_disk = Some(state.clone());
        self.model_on_disk = Some(model.clone());
        self.usage_on_disk = self.usage;
        Ok(())
    }

    /// Records that the first `drop` messages on disk were condensed out of
    /// the view, and `lead` now opens it: the view on disk is then the
    /// caller's, and the condensed messages stay in the transcript.
    pub(crate) fn condensed(
        &mut self,
        rev: u64,
        drop: usize,
        lead: Option<&Message>,
    ) -> Result<(), StoreError> {
        let drop = drop.min(self.on_disk);
        let mut lines = String::new();
        self.push(
            &mut lines,
            &Record::Condense {
                rev,
                drop,
                lead: lead.cloned(),
            },
        )?;
        self.append(&lines)?;
        self.on_disk = self.on_disk - drop + usize::from(lead.is_some());
        Ok(())
    }

    /// Puts back a view read from an earlier point of the log (see
    /// [`replay_prefix`]): its condensed messages and its messages.
    pub(crate) fn restored(&mut self, rev: u64, past: &Replayed) -> Result<(), StoreError> {
        let mut lines = String::new();
        self.push(
            &mut lines,
            &Record::Restore {
                rev,
                earlier: past.earlier.len(),
                lead: past.lead,
                messages: past.messages.clone(),
            },
        )?;
        self.append(&lines)?;
        self.on_disk = past.messages.len();
        Ok(())
    }

    /// One write per record batch: O_APPEND keeps it whole against another
    /// reader, and a crash tears at most this last piece.
    fn append(&mut self, lines: &str) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        self.file
            .write_all(lines.as_bytes())
            .map_err(io_err("append to", &self.path))?;
        self.file.sync_data().map_err(io_err("sync", &self.path))?;
        self.log_bytes += lines.len() as u64;
        self.written += lines.len() as u64;
        Ok(())
    }

    /// The log's length now: where a turn begins, to read its view back.
    pub(crate) fn offset(&self) -> u64 {
        self.log_bytes
    }

    /// The log's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn push(&self, lines: &mut String, record: &Record) -> Result<(), StoreError> {
        let json = serde_json::to_string(record).map_err(|e| StoreError::Parse {
            path: self.path.clone(),
            what: "session log record",
            message: e.to_string(),
        })?;
        lines.push_str(&self.redactor.scrub(&json));
        lines.push('\n');
        Ok(())
    }

    /// How many messages the log holds.
    pub(crate) fn messages_on_disk(&self) -> usize {
        self.on_disk
    }

    /// Bytes this process wrote to the log.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Removes the temp files a killed write left in the session `dir`, unless
/// another process has the session open (its writes may be in flight).
pub(crate) fn clean_session_dir(dir: &Path) {
    // Most sessions have nothing to clean: look before taking the lock,
    // so a start with many sessions stays cheap.
    if stale_temps(dir).next().is_none() {
        return;
    }
    let lock_path = dir.join("lock");
    let Ok(lock) = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
    else {
        return;
    };
    if north_tools::repo::try_lock_exclusive(&lock).unwrap_or(false) {
        remove_stale_temps(dir);
    }
}

/// Temp files of atomic writes a killed process left in `dir`
/// (`.checkpoint.json.north-*.tmp`, `.log.jsonl.north-*.tmp`).
fn remove_stale_temps(dir: &Path) {
    for path in stale_temps(dir) {
        let _ = std::fs::remove_file(path);
    }
}

fn stale_temps(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with('.') && name.contains(".north-") && name.ends_with(".tmp")
        })
        .map(|entry| entry.path())
}

#[cfg(test)]
mod tests;
