//! Where North keeps its record of the worktrees it made, and whether a
//! project root is one of them (what the sandbox asks).

use std::path::Path;

use north_worktree::{Registry, Worktree};

/// North's record of the worktrees it made (None: no data directory).
pub fn registry() -> Option<Registry> {
    north_config::data_dir().map(|d| Registry::at(d.join("worktrees")))
}

/// The worktree North made at `root`, when `root` is one.
pub fn owned(root: &Path) -> Option<Worktree> {
    registry()?.at_path(root)
}
