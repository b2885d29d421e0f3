//! The sandbox: every path a tool touches resolves inside the project root.
//!
//! Paths from a model are untrusted text. They must be relative, free of `..`
//! and NUL bytes, of bounded length, and must still land inside the root after
//! every symlink on the way has been followed. Writes are also refused inside
//! `.git/` and `.north/`: a model that could edit `.north/allowlist.json` could
//! approve its own shell commands, and one that could write `.git/hooks` could
//! run code on the next commit.

use std::io;
use std::path::{Component, Path, PathBuf};

pub use north_policy::paths::{is_inside, physical_path};

/// Longest relative path (in bytes) a tool accepts.
pub(crate) const MAX_PATH_BYTES: usize = 1024;
/// Longest single path component (in bytes) a tool accepts.
pub(crate) const MAX_COMPONENT_BYTES: usize = 255;
/// Top-level directories no tool may write into.
pub(crate) const PROTECTED_DIRS: &[&str] = &[".git", ".north"];

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The path was empty where a file is required.
    #[error("path is empty; give a path relative to the project root (`.` is the root)")]
    Empty,
    /// The path contains a NUL byte.
    #[error("path {0:?} contains a NUL byte")]
    Nul(String),
    /// The path or one of its components is too long.
    #[error("path {path:?} is too long ({len} bytes; the limit is {max})")]
    TooLong {
        /// The offending path.
        path: String,
        /// Its length (of the whole path or the longest component).
        len: usize,
        /// The limit that was exceeded.
        max: usize,
    },
    /// The path is absolute.
    #[error("path {0:?} is absolute; use a path relative to the project root")]
    Absolute(String),
    /// The path contains a `..` component.
    #[error("path {0:?} contains `..`; use a path inside the project root")]
    ParentDir(String),
    /// The path resolves (through a symlink) outside the root.
    #[error("path {0:?} resolves outside the project root")]
    Outside(String),
    /// Following the path's symlinks loops.
    #[error("path {0:?} is a symlink loop")]
    Loop(String),
    /// The path is a symlink whose target does not exist.
    #[error("path {0:?} is a dangling symlink")]
    Dangling(String),
    /// The path does not exist.
    #[error("path {0:?} does not exist")]
    NotFound(String),
    /// The file holds the project's secrets (`.env`, `.env.local`, …).
    #[error(
        "{0} holds the project's secrets, which North never reads for the model; its template (e.g. .env.example) can be read"
    )]
    Secret(String),
    /// The project's ignore files exclude the path.
    #[error(
        "{0} is ignored by the project's .gitignore (or .ignore): North does not read ignored files (build output, dependencies, local secrets); ask the user to attach it with @{0} if it is needed"
    )]
    Ignored(String),
    /// A component before the last one is a file, not a directory.
    #[error("path {0:?} goes through a file as if it were a directory")]
    NotADirectory(String),
    /// The path is inside a directory tools may not write to.
    #[error("path {path:?} is inside `{dir}/`, which tools may not write to")]
    Protected {
        /// The offending path.
        path: String,
        /// The protected top-level directory.
        dir: String,
    },
    /// Another I/O error while resolving.
    #[error("cannot resolve path {path:?}: {message}")]
    Io {
        /// The offending path.
        path: String,
        /// The OS error.
        message: String,
    },
}

/// A path that passed the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute path inside the root with every existing symlink resolved.
    pub abs: PathBuf,
    /// The same path relative to the root, `/`-separated (`.` for the root).
    pub rel: String,
}

/// The project root and the rules for resolving paths under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    /// A sandbox rooted at `root`, which is canonicalized (it must exist).
    pub fn new(root: &Path) -> Result<Self, SandboxError> {
        let root =
            std::fs::canonicalize(root).map_err(|e| io_error(&root.display().to_string(), &e))?;
        Ok(Sandbox { root })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Checks the text of `path` without touching the disk and returns it as a
    /// clean relative path (empty for the root itself).
    pub(crate) fn check_syntax(path: &str) -> Result<PathBuf, SandboxError> {
        if path.contains('\0') {
            return Err(SandboxError::Nul(path.to_owned()));
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(SandboxError::TooLong {
                path: shorten(path),
                len: path.len(),
                max: MAX_PATH_BYTES,
            });
        }
        let mut clean = PathBuf::new();
        for component in Path::new(path).components() {
            match component {
                Component::Normal(part) => {
                    let len = part.len();
                    if len > MAX_COMPONENT_BYTES {
                        return Err(SandboxError::TooLong {
                            path: shorten(path),
                            len,
                            max: MAX_COMPONENT_BYTES,
                        });
                    }
                    clean.push(part);
                }
                Component::CurDir => {}
                Component::ParentDir => return Err(SandboxError::ParentDir(path.to_owned())),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(SandboxError::Absolute(path.to_owned()));
                }
            }
        }
        Ok(clean)
    }

    /// Resolves an existing path for reading, listing or searching. `.` is
    /// the root; an empty path is refused, as for writes (the reference
    /// resolver treats `""` as no path at all).
    pub fn resolve_existing(&self, path: &str) -> Result<Resolved, SandboxError> {
        if path.is_empty() {
            return Err(SandboxError::Empty);
        }
        let clean = Self::check_syntax(path)?;
        let joined = self.root.join(&clean);
        let abs = match std::fs::canonicalize(&joined) {
            Ok(abs) => abs,
            Err(e) => return Err(self.explain_failure(path, &joined, &e)),
        };
        self.inside(path, abs)
    }

    /// Reads a project file North itself uses (`AGENTS.md`, a custom
    /// command, a skill) with the containment the model's reads have: a
    /// link pointing out of the project is refused. At most `max` bytes;
    /// `Ok(None)` when there is no such file.
    pub fn read_own(&self, path: &str, max: u64) -> Result<Option<String>, SandboxError> {
        use std::io::Read;
        if std::fs::symlink_metadata(self.root.join(path)).is_err() {
            return Ok(None);
        }
        let resolved = self.resolve_existing(path)?;
        if !resolved.abs.is_file() {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        let read =
            std::fs::File::open(&resolved.abs).and_then(|f| f.take(max).read_to_end(&mut bytes));
        Ok(read
            .ok()
            .map(|_| String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Resolves an existing file the model may read: as
    /// [`Sandbox::resolve_existing`], and neither a secret env file nor
    /// excluded by the project's ignore files (reads are ignore-aware, as
    /// listings and searches are).
    pub(crate) fn resolve_readable(&self, path: &str) -> Result<Resolved, SandboxError> {
        let resolved = self.resolve_existing(path)?;
        let name = resolved
            .abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if crate::repo::is_secret_env_file(&name) {
            return Err(SandboxError::Secret(resolved.rel));
        }
        if crate::repo::is_ignored(&self.root, &resolved.abs) {
            return Err(SandboxError::Ignored(resolved.rel));
        }
        Ok(resolved)
    }

    /// Resolves a path a write may create or replace. Existing symlinks on the
    /// way (the file itself included) are followed and must stay inside the
    /// root; missing components are new and cannot point anywhere.
    pub fn resolve_for_write(&self, path: &str) -> Result<Resolved, SandboxError> {
        let clean = Self::check_syntax(path)?;
        if clean.as_os_str().is_empty() {
            return Err(SandboxError::Empty);
        }
        let joined = self.root.join(&clean);
        let current = match physical_path(&self.root, &clean) {
            Ok(p) => p,
            Err(e) => return Err(self.explain_failure(path, &joined, &e)),
        };
        let resolved = self.inside(path, current)?;
        let first = resolved.rel.split('/').next().unwrap_or_default();
        if let Some(dir) = PROTECTED_DIRS.iter().find(|d| **d == first) {
            return Err(SandboxError::Protected {
                path: path.to_owned(),
                dir: (*dir).to_owned(),
            });
        }
        Ok(resolved)
    }

    /// The `/`-separated path of `abs` relative to the root, if it is inside.
    pub fn relative(&self, abs: &Path) -> Option<String> {
        let rel = abs.strip_prefix(&self.root).ok()?;
        if rel.as_os_str().is_empty() {
            return Some(".".to_owned());
        }
        let parts: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Some(parts.join("/"))
    }

    fn inside(&self, path: &str, abs: PathBuf) -> Result<Resolved, SandboxError> {
        match self.relative(&abs) {
            Some(rel) => Ok(Resolved { abs, rel }),
            None => Err(SandboxError::Outside(path.to_owned())),
        }
    }

    /// Turns a failed canonicalize into the most helpful refusal.
    fn explain_failure(&self, path: &str, joined: &Path, e: &io::Error) -> SandboxError {
        if e.raw_os_error() == Some(libc::ELOOP) {
            return SandboxError::Loop(path.to_owned());
        }
        if e.raw_os_error() == Some(libc::ENAMETOOLONG) {
            return SandboxError::TooLong {
                path: shorten(path),
                len: path.len(),
                max: MAX_PATH_BYTES,
            };
        }
        if e.kind() == io::ErrorKind::NotFound {
            if std::fs::symlink_metadata(joined).is_ok_and(|m| m.file_type().is_symlink()) {
                return SandboxError::Dangling(path.to_owned());
            }
            return SandboxError::NotFound(path.to_owned());
        }
        if e.kind() == io::ErrorKind::NotADirectory {
            return SandboxError::NotADirectory(path.to_owned());
        }
        io_error(path, e)
    }
}

fn io_error(path: &str, e: &io::Error) -> SandboxError {
    SandboxError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// Keeps error messages short when a path is huge.
fn shorten(path: &str) -> String {
    if path.len() <= 80 {
        return path.to_owned();
    }
    let mut end = 60;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &path[..end])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn syntax_accepts_plain_relative_paths() {
        assert_eq!(
            Sandbox::check_syntax("./src//a.rs").unwrap(),
            PathBuf::from("src/a.rs")
        );
        assert_eq!(Sandbox::check_syntax(".").unwrap(), PathBuf::new());
    }

    #[test]
    fn syntax_refuses_escapes() {
        assert!(matches!(
            Sandbox::check_syntax("a/../b"),
            Err(SandboxError::ParentDir(_))
        ));
        assert!(matches!(
            Sandbox::check_syntax("/etc"),
            Err(SandboxError::Absolute(_))
        ));
        assert!(matches!(
            Sandbox::check_syntax("a\0b"),
            Err(SandboxError::Nul(_))
        ));
        assert!(matches!(
            Sandbox::check_syntax(&"a".repeat(300)),
            Err(SandboxError::TooLong { max: 255, .. })
        ));
    }
}
