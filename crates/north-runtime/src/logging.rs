//! Logging for every front end: one append-only log file at
//! `$XDG_STATE_HOME/north/north.log` (info or debug), plus warnings on
//! stderr (`NORTH_LOG` overrides that filter; errors are left to the front
//! end's own report unless it is set). Every line passes through the
//! redactor: no key reaches the log. It lives here, not in the binary, so
//! the libraries' log lines run no code of a front end's.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use north_agent::redact::Redactor;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How much the log file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogLevel {
    /// Requests, tool calls, approvals, errors.
    #[default]
    Info,
    /// Also tool metadata and retries (never file contents or keys).
    Debug,
}

/// A writer that scrubs secrets from each formatted event before writing.
#[derive(Clone)]
struct Redacting<W> {
    inner: Arc<Mutex<W>>,
    redactor: Arc<Redactor>,
}

struct Guard<'a, W: Write> {
    inner: &'a Mutex<W>,
    redactor: &'a Redactor,
}

impl<W: Write> Write for Guard<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let clean = self.redactor.scrub(&text);
        if let Ok(mut w) = self.inner.lock() {
            w.write_all(clean.as_bytes())?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.lock().map(|mut w| w.flush()).unwrap_or(Ok(()))
    }
}

impl<'a, W: Write + 'a> MakeWriter<'a> for Redacting<W> {
    type Writer = Guard<'a, W>;
    fn make_writer(&'a self) -> Self::Writer {
        Guard {
            inner: &self.inner,
            redactor: &self.redactor,
        }
    }
}

/// A panic is North's one fatal error (every other error is reported and
/// recovered from, and logged as `severity=recoverable`): it is logged with
/// `severity=fatal`, where it happened and a stack trace, before the
/// previous hook prints it and the terminal is restored.
fn log_fatal_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = north_agent::recovery::panic_message(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let backtrace = std::backtrace::Backtrace::force_capture();
        if north_agent::recovery::recovering() {
            // A tool's panic: its call fails and the session goes on.
            tracing::error!(
                severity = "recoverable",
                panic = %message,
                location = %location,
                backtrace = %backtrace,
                "a tool panicked (a bug); its call failed"
            );
        } else {
            tracing::error!(
                severity = "fatal",
                panic = %message,
                location = %location,
                backtrace = %backtrace,
                "North stopped on a bug"
            );
        }
        previous(info);
    }));
}

/// Starts logging; returns the log file path when it could be opened.
pub fn init(level: LogLevel, redactor: &Redactor) -> Option<std::path::PathBuf> {
    let redactor = Arc::new(redactor.clone());
    // Errors reach the user through the front end's own report (`north:
    // error: …`, the TUI's ✗ line); echoing them here too printed each twice.
    let user_set = std::env::var_os("NORTH_LOG").is_some();
    let stderr_filter =
        EnvFilter::try_from_env("NORTH_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let not_error = tracing_subscriber::filter::filter_fn(move |meta| {
        user_set || *meta.level() != tracing::Level::ERROR
    });
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(Redacting {
            inner: Arc::new(Mutex::new(io::stderr())),
            redactor: redactor.clone(),
        })
        .with_target(false)
        .without_time()
        .with_filter(stderr_filter)
        .with_filter(not_error);
    let path = north_config::state_dir().map(|d| d.join("north.log"));
    let file: Option<File> = path.as_ref().and_then(|p| {
        std::fs::create_dir_all(p.parent()?).ok()?;
        OpenOptions::new().create(true).append(true).open(p).ok()
    });
    let opened = file.is_some();
    let file_layer = file.map(|f| {
        let lvl = match level {
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        };
        tracing_subscriber::fmt::layer()
            .with_writer(Redacting {
                inner: Arc::new(Mutex::new(f)),
                redactor,
            })
            .with_ansi(false)
            .with_filter(EnvFilter::new(format!(
                "{lvl},hyper=warn,reqwest=warn,rustls=warn,h2=warn"
            )))
    });
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file_layer)
        .try_init();
    log_fatal_panics();
    if opened { path } else { None }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    /// The panic hook is process-wide: one test at a time replaces it.
    static HOOK: Mutex<()> = Mutex::new(());

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// What North's panic hook logs while `run` runs (the hook set up as
    /// `init` sets it, then put back).
    fn logged_while(run: impl FnOnce()) -> String {
        let _one = HOOK.lock().unwrap_or_else(|e| e.into_inner());
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        tracing::subscriber::with_default(subscriber, || {
            super::log_fatal_panics();
            run();
        });
        let _ = std::panic::take_hook();
        std::panic::set_hook(before);
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_panic_is_logged_as_fatal_with_where_and_a_stack_trace() {
        let log = logged_while(|| {
            let _ = std::panic::catch_unwind(|| panic!("boom in the test"));
        });
        assert!(log.contains("severity=\"fatal\""), "{log}");
        assert!(log.contains("boom in the test"), "{log}");
        assert!(log.contains("logging.rs:"), "where it happened: {log}");
        assert!(log.contains("backtrace="), "{log}");
    }

    #[test]
    fn a_panic_north_recovers_from_is_logged_as_recoverable() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let log = logged_while(|| {
            let caught = runtime.block_on(north_agent::recovery::guarded(async {
                panic!("tool bug in the test")
            }));
            assert!(caught.is_err());
        });
        assert!(log.contains("severity=\"recoverable\""), "{log}");
        assert!(!log.contains("severity=\"fatal\""), "{log}");
        assert!(log.contains("tool bug in the test"), "{log}");
    }
}
