//! What a front end's process sets up once, before its first session: the
//! key that marks North's own state as this user's, and the snapshot
//! watcher a big tree's whole walk may start. Front ends call
//! [`prepare`]; a library user who opens sessions without it gets a key
//! for the run only and no watcher.

use std::path::PathBuf;

/// Installs North's state key and enables the snapshot watcher (started
/// as `exe snapshot-watcher`). Returns a warning for the front end to show
/// when the saved key could not be used (this run then uses a key of its
/// own, so state from earlier runs is not recognised).
pub fn prepare(exe: Option<PathBuf>) -> Option<String> {
    let warning = install_state_key();
    if let Some(exe) = exe {
        north_tools::snapshot::watcher::enable(exe, north_config::runtime_dir());
    }
    warning
}

/// Installs the key that marks North's own state (sessions, edit journals,
/// the card cache, memories) as this user's: kept in the user's config dir
/// (`state.key`, mode 0600, hidden from sandboxed commands), created on
/// first use. Without a config dir the key lives for this run only, so
/// nothing a repository ships can pass for North's state either way.
fn install_state_key() -> Option<String> {
    let path = north_config::global_config_path().map(|p| p.with_file_name("state.key"));
    let (key, warning) = match path.as_deref().map(north_tools::owner::load_or_create) {
        Some(Ok(key)) => (key, None),
        Some(Err(e)) => (
            ephemeral_key(),
            Some(format!(
                "cannot use the state key {}: {e}; state from earlier runs is not recognised this run",
                path.as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )),
        ),
        None => (ephemeral_key(), None),
    };
    north_tools::owner::install(key);
    warning
}

fn ephemeral_key() -> [u8; 32] {
    use std::io::Read;
    let mut key = [0u8; 32];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .is_err()
    {
        // The standard library seeds each RandomState from the OS.
        use std::hash::BuildHasher;
        for chunk in key.chunks_mut(8) {
            let word = std::collections::hash_map::RandomState::new().hash_one(chunk.as_ptr());
            chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
        }
    }
    key
}
