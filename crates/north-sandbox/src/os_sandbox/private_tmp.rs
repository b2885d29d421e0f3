//! A private temp dir: a fresh tmpfs over the system temp dir in the
//! sandbox's mount namespace, so a command cannot see or touch what other
//! processes keep there (another session's shell scripts, a tmux socket,
//! other users' files) and leaves nothing behind in it.
//!
//! What the command needs from the real temp dir — the project when it
//! lives there, the directories the user made writable, the shell's own
//! working directory — is opened before the tmpfs covers it and bound back
//! at the same path.

use std::path::{Path, PathBuf};

/// Covers `tmp` with an empty tmpfs and binds each of `keep` that lies
/// under it back in place.
pub(super) fn cover(tmp: &Path, keep: &[PathBuf]) -> Result<(), String> {
    super::mounts::cover(tmp, keep, c"mode=1777", 0).map(|_| ())
}
