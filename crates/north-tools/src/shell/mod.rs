//! The project's persistent PTY shell (placeholder until implemented).

use std::path::PathBuf;

/// Owns the project's persistent shell session, started lazily on first use.
pub struct ShellManager {
    root: PathBuf,
}

impl ShellManager {
    /// A manager for a shell rooted at `root`; nothing is spawned yet.
    pub fn new(root: PathBuf) -> Self {
        ShellManager { root }
    }

    /// The directory new sessions start in.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }
}
