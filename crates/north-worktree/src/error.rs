//! What can go wrong with a worktree, each saying what to do.

use std::path::PathBuf;

/// Why a worktree could not be made, read, merged or removed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// The directory is not a repository's main tree.
    #[error(
        "{0} is not in a git repository's main tree (North makes worktrees of a repository with a plain .git directory; run it from there, not from inside a worktree)"
    )]
    NotARepository(PathBuf),
    /// A name North cannot use.
    #[error(
        "`{0}` is not a worktree name: use letters, digits, `.`, `_` and `-` (at most 64, not starting with `.` or `-`)"
    )]
    BadName(String),
    /// The source tree has changes a new worktree would not have.
    #[error(
        "the working tree has uncommitted changes ({}); commit or stash them, or pass --worktree-copy to carry them into the worktree",
        .0.join(", ")
    )]
    Dirty(Vec<String>),
    /// The base named is not a commit.
    #[error("`{0}` is not a commit of this repository (the repository may have no commit yet)")]
    BadBase(String),
    /// Something of that name is already there.
    #[error("{0} already exists: choose another name, or remove it first")]
    Exists(String),
    /// North did not create a worktree of that name here.
    #[error(
        "North did not create a worktree named `{0}` for this repository (`north worktree list` shows North's own; others are git's to manage)"
    )]
    NotOwned(String),
    /// The worktree holds work that was not merged back.
    #[error(
        "worktree `{name}` has {count} change(s) not merged into the main tree: `north worktree merge {name}` first, or pass --force to discard them"
    )]
    Unmerged {
        /// The worktree.
        name: String,
        /// Files changed since its base.
        count: usize,
    },
    /// North's own git failed.
    #[error("git {what}: {source}")]
    Git {
        /// What North asked git to do.
        what: &'static str,
        /// Why it failed.
        #[source]
        source: north_tools::git::GitError,
    },
    /// git said no.
    #[error("git {what} failed: {stderr}")]
    GitRefused {
        /// What North asked git to do.
        what: &'static str,
        /// What git said.
        stderr: String,
    },
    /// Reading or writing a file failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What North was doing.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Writing the accepted changes failed (nothing was written).
    #[error("applying the accepted changes failed, nothing was written: {0}")]
    Apply(#[from] north_tools::edit::ApplyError),
    /// The main tree's path checks refused a file.
    #[error("{0}")]
    Path(#[from] north_tools::sandbox::SandboxError),
}

/// An [`WorktreeError::Io`] maker for `map_err`.
pub(crate) fn io(
    what: &'static str,
    path: &std::path::Path,
) -> impl Fn(std::io::Error) -> WorktreeError {
    let path = path.to_path_buf();
    move |source| WorktreeError::Io {
        what,
        path: path.clone(),
        source,
    }
}
