//! The session's trace: append-only JSONL (runtime-contracts §6), one
//! scrubbed line per event.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use north_protocol::{TraceEvent, TraceKind};
use serde_json::Value;

use super::{StoreError, io_err, now_ts};
use crate::redact::Redactor;

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
