//! Starts the runtime's logging (`north_runtime::logging`) at the level the
//! flags chose, and notes what the process protection did.

use north_agent::redact::Redactor;

use crate::args::LogLevel;

/// Starts logging; returns the log file path when it could be opened.
pub fn init(level: LogLevel, redactor: &Redactor) -> Option<std::path::PathBuf> {
    let level = match level {
        LogLevel::Info => north_runtime::logging::LogLevel::Info,
        LogLevel::Debug => north_runtime::logging::LogLevel::Debug,
    };
    let path = north_runtime::logging::init(level, redactor);
    if let Some(p) = crate::guard::PROTECTION.get() {
        tracing::info!(
            secrets_scrubbed = p.scrubbed,
            secrets_sealed = p.sealed,
            non_dumpable = p.non_dumpable,
            "process protection"
        );
    }
    path
}
