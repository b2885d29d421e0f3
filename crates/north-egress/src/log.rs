//! The hosts each proxy reached or refused, kept a while so a command's
//! result can say which hosts it reached (and the session's trace with it).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One connection a proxy allowed or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// The host asked for.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// Allowed (true) or refused.
    pub allowed: bool,
    /// When.
    pub at: Instant,
}

/// The most entries kept (the older half goes when it is reached).
const MAX_ENTRIES: usize = 8192;

/// How long an entry is kept: longer than any one command needs.
const KEPT: Duration = Duration::from_secs(3600);

/// Entries by the socket of the proxy that made them.
static LOG: Mutex<Vec<(PathBuf, Reached)>> = Mutex::new(Vec::new());

pub(crate) fn record(socket: &Path, host: &str, port: u16, allowed: bool) {
    let Ok(mut log) = LOG.lock() else { return };
    let now = Instant::now();
    log.retain(|(_, r)| now.duration_since(r.at) < KEPT);
    // A command connecting in a loop does not grow it without end.
    if log.len() >= MAX_ENTRIES {
        log.drain(..MAX_ENTRIES / 2);
    }
    log.push((
        socket.to_path_buf(),
        Reached {
            host: host.to_string(),
            port,
            allowed,
            at: now,
        },
    ));
}

/// What the proxy at `socket` reached or refused since `since`, each host
/// and port once (refused wins over allowed), in the order first seen.
pub fn reached_since(socket: &Path, since: Instant) -> Vec<Reached> {
    let Ok(log) = LOG.lock() else {
        return Vec::new();
    };
    let mut out: Vec<Reached> = Vec::new();
    for (_, r) in log.iter().filter(|(s, r)| s == socket && r.at >= since) {
        match out
            .iter_mut()
            .find(|o| o.host == r.host && o.port == r.port)
        {
            Some(seen) => seen.allowed &= r.allowed,
            None => out.push(r.clone()),
        }
    }
    out
}
