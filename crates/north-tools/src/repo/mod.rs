//! The repo layer: root resolution, `.gitignore`-aware walking, text
//! detection with size limits, and atomic writes.

pub(crate) mod atomic;
mod files;
mod flock;

use std::io::Read;
use std::path::{Path, PathBuf};

pub use atomic::{atomic_write, fsync_dir, temp_path_for};
pub use files::FileIndex;
pub use flock::try_lock_exclusive;

/// North's per-project state directory, relative to the project root.
pub const STATE_DIR: &str = north_sandbox::STATE_DIR;

/// What `.north/.gitignore` says: North's own state (sessions, logs, caches,
/// apply journals) stays out of the user's repository; the files a team
/// shares are kept trackable.
const STATE_GITIGNORE: &str = "\
# Written by North: its local state (sessions, caches, apply journals) is not
# for version control. The settings a team shares stay trackable.
*
!project.json
!allowlist.json
!policy.json
!commands/
!commands/**
";

/// Creates `root/.north` when missing and, on first use, the `.gitignore`
/// that keeps North's state out of `git status`. An existing `.gitignore` is
/// the user's and is never rewritten.
pub fn ensure_state_dir(root: &Path) -> std::io::Result<PathBuf> {
    let dir = root.join(STATE_DIR);
    if state_dir_is_linked(root) {
        return Err(std::io::Error::other(format!(
            "{} is a symbolic link; North keeps its state only in a real directory (remove the link)",
            dir.display()
        )));
    }
    std::fs::create_dir_all(&dir)?;
    let ignore = dir.join(".gitignore");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&ignore)
    {
        Ok(mut f) => std::io::Write::write_all(&mut f, STATE_GITIGNORE.as_bytes())?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    Ok(dir)
}

/// Whether the project's state directory is a link: North never writes
/// its state (sessions, copies of files) wherever a repository points it.
pub fn state_dir_is_linked(root: &Path) -> bool {
    std::fs::symlink_metadata(root.join(STATE_DIR)).is_ok_and(|m| m.file_type().is_symlink())
}

/// The first component of `rel` under `root` that is a link (`.claude`,
/// then `.claude/skills`, …), if any: a repository's configuration
/// directories are read only where they really are, never through a link
/// that points out of the project.
pub fn linked_component(root: &Path, rel: &Path) -> Option<PathBuf> {
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(at);
        }
    }
    None
}

/// Largest file an edit or a full read will load into memory.
pub(crate) const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// How many leading bytes binary detection looks at.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Failures of the repo layer.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// An explicit root does not exist or is not a directory.
    #[error("project root {0:?} is not a directory")]
    NotADirectory(PathBuf),
    /// The file looks binary (contains a NUL byte).
    #[error("{0} is a binary file")]
    Binary(String),
    /// The file is not valid UTF-8.
    #[error("{0} is not UTF-8 text")]
    NotUtf8(String),
    /// The file is larger than the limit.
    #[error("{path} is too large ({size} bytes; the limit is {max})")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The path exists but is not a regular file.
    #[error("{0} is not a regular file")]
    NotAFile(String),
    /// An I/O error, with what was being done and where.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done (`read`, `write`, ...).
        op: &'static str,
        /// Where.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl RepoError {
    pub(crate) fn io(op: &'static str, path: impl Into<String>, source: std::io::Error) -> Self {
        RepoError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// The project root: `explicit` when given (it must be a directory),
/// otherwise the nearest ancestor of `start` holding `.git`, otherwise `start`.
pub fn resolve_root(explicit: Option<&Path>, start: &Path) -> Result<PathBuf, RepoError> {
    if let Some(dir) = explicit {
        return match std::fs::canonicalize(dir) {
            Ok(p) if p.is_dir() => Ok(p),
            _ => Err(RepoError::NotADirectory(dir.to_path_buf())),
        };
    }
    let start =
        std::fs::canonicalize(start).map_err(|_| RepoError::NotADirectory(start.to_path_buf()))?;
    for dir in start.ancestors() {
        if dir.join(".git").exists() {
            return Ok(dir.to_path_buf());
        }
    }
    Ok(start)
}

/// A walker over `dir` that honours `.gitignore`, `.ignore`, git's global
/// excludes and `.git/info/exclude`, includes dotfiles (`.github/`,
/// `.cargo/`, `.env.example` are part of a project), never follows
/// symlinks, and never enters `.git` or North's own state (`.north`).
pub fn walker(dir: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder
        .hidden(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            let name = entry.file_name();
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            name != ".git"
                && !(name == STATE_DIR && is_dir)
                && (is_dir || !is_secret_env_file(&name.to_string_lossy()))
        });
    builder
}

/// Whether the ignore files between `root` and `abs` (`.ignore` and
/// `.gitignore` in each directory, nearest first, then
/// `.git/info/exclude`) exclude `abs`, as the walk would. `abs` must be a
/// canonical path inside the canonical `root`.
pub(crate) fn is_ignored(root: &Path, abs: &Path) -> bool {
    let is_dir = abs.is_dir();
    let decide = |dir: &Path, file: &Path| -> Option<bool> {
        if !file.is_file() {
            return None;
        }
        let mut builder = ignore::gitignore::GitignoreBuilder::new(dir);
        // A file that does not parse is not a reason to refuse reads.
        let _ = builder.add(file);
        let matcher = builder.build().ok()?;
        match matcher.matched_path_or_any_parents(abs, is_dir) {
            ignore::Match::Ignore(_) => Some(true),
            ignore::Match::Whitelist(_) => Some(false),
            ignore::Match::None => None,
        }
    };
    let mut dir = abs.parent();
    while let Some(d) = dir {
        if !d.starts_with(root) {
            break;
        }
        for name in [".ignore", ".gitignore"] {
            if let Some(verdict) = decide(d, &d.join(name)) {
                return verdict;
            }
        }
        if d == root {
            break;
        }
        dir = d.parent();
    }
    decide(root, &root.join(".git/info/exclude")).unwrap_or(false)
}

/// `.env`, `.env.local`, `.env.production`…: files that hold a project's
/// secrets, which the walk never offers to the model. Their templates
/// (`.env.example`, `.env.sample`, `.env.template`, `.env.dist`) are shown.
pub fn is_secret_env_file(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(".env") else {
        return false;
    };
    match rest.strip_prefix('.') {
        None => rest.is_empty(),
        Some(suffix) => !["example", "sample", "template", "dist", "defaults"]
            .iter()
            .any(|t| suffix.eq_ignore_ascii_case(t) || suffix.ends_with(&format!(".{t}"))),
    }
}

/// Whether `bytes` look binary: a NUL byte in the first few kilobytes.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    let n = bytes.len().min(BINARY_SNIFF_BYTES);
    bytes[..n].contains(&0)
}

/// Whether the file at `path` looks binary (reads only its first kilobytes).
pub(crate) fn file_is_binary(path: &Path) -> std::io::Result<bool> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; BINARY_SNIFF_BYTES];
    let mut filled = 0;
    while filled < buf.len() {
        let n = file.read(&mut buf[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(is_binary(&buf[..filled]))
}

/// Reads a whole UTF-8 text file of at most `max` bytes; `shown` names it in errors.
pub fn read_text(path: &Path, shown: &str, max: u64) -> Result<String, RepoError> {
    let meta = std::fs::metadata(path).map_err(|e| RepoError::io("read", shown, e))?;
    if !meta.is_file() {
        return Err(RepoError::NotAFile(shown.to_owned()));
    }
    if meta.len() > max {
        return Err(RepoError::TooLarge {
            path: shown.to_owned(),
            size: meta.len(),
            max,
        });
    }
    let bytes = std::fs::read(path).map_err(|e| RepoError::io("read", shown, e))?;
    text_from_bytes(bytes, shown)
}

/// Interprets file bytes as text, refusing binary and non-UTF-8 content.
pub(crate) fn text_from_bytes(bytes: Vec<u8>, shown: &str) -> Result<String, RepoError> {
    if is_binary(&bytes) {
        return Err(RepoError::Binary(shown.to_owned()));
    }
    String::from_utf8(bytes).map_err(|_| RepoError::NotUtf8(shown.to_owned()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection_looks_for_nul() {
        assert!(is_binary(b"abc\0def"));
        assert!(!is_binary("héllo\n".as_bytes()));
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES + 10];
        late.push(0);
        assert!(!is_binary(&late));
    }

    #[test]
    fn root_is_nearest_git_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        let root = resolve_root(None, &dir.path().join("a/b")).unwrap();
        assert_eq!(root, std::fs::canonicalize(dir.path()).unwrap());
        let explicit = resolve_root(Some(&dir.path().join("a")), dir.path()).unwrap();
        assert!(explicit.ends_with("a"));
        assert!(resolve_root(Some(&dir.path().join("nope")), dir.path()).is_err());
    }
}
