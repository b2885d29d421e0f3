//! Hosts the user allowed commands to reach "always for this project", at
//! the proxy's question: kept in the user's own state directory, keyed by
//! the project's path — never in the project, so a repository cannot ship
//! hosts of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn path() -> Option<PathBuf> {
    north_config::state_dir().map(|d| d.join("network-hosts.json"))
}

fn load() -> BTreeMap<String, Vec<String>> {
    path()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The hosts allowed for `root`.
pub(crate) fn allowed(root: &Path) -> Vec<String> {
    load()
        .remove(&root.display().to_string())
        .unwrap_or_default()
}

/// Remembers `host` for `root`. A file that cannot be written costs a
/// question next session, nothing else.
pub(crate) fn remember(root: &Path, host: &str) {
    let Some(path) = path() else { return };
    let mut all = load();
    let hosts = all.entry(root.display().to_string()).or_default();
    if hosts.iter().any(|h| h == host) {
        return;
    }
    hosts.push(host.to_string());
    let Ok(bytes) = serde_json::to_vec_pretty(&all) else {
        return;
    };
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| north_agent::store::write_atomic(&path, &bytes));
    if let Err(e) = written {
        tracing::warn!(error = %e, "cannot remember an allowed host");
    }
}
