//! Context windows local servers reported, remembered per base URL and
//! model for an hour in the user's state directory: a session's first
//! request then waits for no probe (`north config` always asks afresh and
//! refreshes the entry).

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use north_llm::Discovered;
use serde::{Deserialize, Serialize};

/// How long a reported window is trusted: a server restarted with another
/// context size is asked again within the hour.
const FRESH: Duration = Duration::from_secs(3600);

/// Entries kept, newest first.
const KEPT: usize = 32;

#[derive(Serialize, Deserialize)]
struct Entry {
    base_url: String,
    model: String,
    discovered: Discovered,
    /// Seconds since the Unix epoch.
    at: u64,
}

fn path() -> Option<PathBuf> {
    north_config::state_dir().map(|d| d.join("context-windows.json"))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn load() -> Vec<Entry> {
    path()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The window the server at `base_url` reported for `model` within the hour.
pub fn cached(base_url: &str, model: &str) -> Option<Discovered> {
    let now = now();
    load()
        .into_iter()
        .find(|e| e.base_url == base_url && e.model == model)
        .filter(|e| now.saturating_sub(e.at) < FRESH.as_secs())
        .map(|e| e.discovered)
}

/// Remembers what the server at `base_url` reported for `model`. A cache
/// that cannot be written costs a probe next time, nothing else.
pub fn remember(base_url: &str, model: &str, discovered: Discovered) {
    let Some(path) = path() else { return };
    let mut entries = load();
    entries.retain(|e| !(e.base_url == base_url && e.model == model));
    entries.insert(
        0,
        Entry {
            base_url: base_url.to_string(),
            model: model.to_string(),
            discovered,
            at: now(),
        },
    );
    entries.truncate(KEPT);
    let Ok(bytes) = serde_json::to_vec(&entries) else {
        return;
    };
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| north_agent::store::write_atomic(&path, &bytes));
    if let Err(e) = written {
        tracing::debug!(error = %e, "context window cache not written");
    }
}
