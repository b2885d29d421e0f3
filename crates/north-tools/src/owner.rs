//! Proof that this user's North wrote a piece of state.
//!
//! A repository can ship anything under `.north/`: sessions dated in the
//! future, snapshot stores, edit journals, a project-card cache, memories.
//! None of it may be replayed, restored, resumed or trusted as North's own.
//! So what North writes there carries a *mark*: an HMAC-SHA256, under a
//! per-user key kept in the user's config directory (mode 0600, hidden from
//! every sandboxed command), of what the state is, which project it belongs
//! to and its identity or content. Another machine's North, a repository
//! author or a sandboxed command cannot make a mark that verifies here.
//!
//! The binary installs the key at start ([`install`]); a library user that
//! installs none gets [`Provenance::Unverified`] — state is taken as it is,
//! as before marks existed.
//!
//! This module must not print or log the key.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hmac::{Hmac, Mac};
use sha2::Sha256;

static KEY: OnceLock<[u8; 32]> = OnceLock::new();

/// What kind of state a mark vouches for (part of what is signed, so a
/// session's mark cannot pass for a journal's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    /// A session directory (payload: its id).
    Session,
    /// An edit journal (payload: its content without the mark).
    Journal,
    /// The project-card cache (payload: its content without the mark).
    CardCache,
    /// A memory entry (payload: its id).
    Memory,
}

impl StateKind {
    fn label(self) -> &'static str {
        match self {
            StateKind::Session => "session",
            StateKind::Journal => "journal",
            StateKind::CardCache => "card-cache",
            StateKind::Memory => "memory",
        }
    }
}

/// Where a piece of state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// This user's North wrote it.
    Own,
    /// It carries no valid mark: a repository (or someone else) put it there.
    Foreign,
    /// No key is installed in this process, so nothing can be told apart.
    Unverified,
}

impl Provenance {
    /// Whether the state may be used (own, or nothing can be checked).
    pub fn usable(self) -> bool {
        self != Provenance::Foreign
    }
}

/// Installs the process's key (once; later calls do nothing).
pub fn install(key: [u8; 32]) {
    let _ = KEY.set(key);
}

/// Reads the key at `path`, creating it (32 random bytes, mode 0600) when
/// missing. A file of the wrong size is an error, never silently replaced.
pub fn load_or_create(path: &Path) -> std::io::Result<[u8; 32]> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let mut key = [0u8; 32];
            let mut rest = Vec::new();
            f.read_exact(&mut key)?;
            f.read_to_end(&mut rest)?;
            if !rest.is_empty() {
                return Err(std::io::Error::other(format!(
                    "{} is not a North state key (32 bytes)",
                    path.display()
                )));
            }
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut key = [0u8; 32];
            std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)?;
            f.write_all(&key)?;
            f.sync_all()?;
            Ok(key)
        }
        Err(e) => Err(e),
    }
}

/// `root` made canonical, remembered for the last root asked: a start
/// checks every session of one project, each against the same root.
fn canonical(root: &Path) -> PathBuf {
    static LAST: std::sync::Mutex<Option<(PathBuf, PathBuf)>> = std::sync::Mutex::new(None);
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((asked, canonical)) = last.as_ref()
        && asked == root
    {
        return canonical.clone();
    }
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    *last = Some((root.to_path_buf(), canonical.clone()));
    canonical
}

fn mac(key: &[u8; 32], kind: StateKind, root: &Path, payload: &[u8]) -> Option<Hmac<Sha256>> {
    let root = canonical(root);
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
    m.update(kind.label().as_bytes());
    m.update(&[0]);
    m.update(root.as_os_str().as_encoded_bytes());
    m.update(&[0]);
    m.update(payload);
    Some(m)
}

/// The mark for `payload` of `kind` in the project at `root`, or `None`
/// when no key is installed.
pub fn mark(kind: StateKind, root: &Path, payload: &[u8]) -> Option<String> {
    let key = KEY.get()?;
    let m = mac(key, kind, root, payload)?;
    Some(
        m.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// Whether `mark` is this user's mark for `payload` (compared in constant
/// time).
pub fn check(kind: StateKind, root: &Path, payload: &[u8], mark: Option<&str>) -> Provenance {
    let Some(key) = KEY.get() else {
        return Provenance::Unverified;
    };
    let Some(mark) = mark else {
        return Provenance::Foreign;
    };
    let Some(bytes) = decode_hex(mark) else {
        return Provenance::Foreign;
    };
    match mac(key, kind, root, payload).map(|m| m.verify_slice(&bytes)) {
        Some(Ok(())) => Provenance::Own,
        _ => Provenance::Foreign,
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn marks_verify_only_for_the_same_key_kind_root_and_payload() {
        let dir = tempfile::tempdir().unwrap();
        let key_path = dir.path().join("config/state.key");
        let key = load_or_create(&key_path).unwrap();
        assert_eq!(load_or_create(&key_path).unwrap(), key, "kept, not remade");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&key_path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            check(StateKind::Session, dir.path(), b"s1", None),
            Provenance::Unverified,
            "no key installed yet"
        );
        install(key);
        let m = mark(StateKind::Session, dir.path(), b"s1").unwrap();
        assert_eq!(
            check(StateKind::Session, dir.path(), b"s1", Some(&m)),
            Provenance::Own
        );
        for (kind, payload) in [
            (StateKind::Session, &b"s2"[..]),
            (StateKind::Journal, b"s1"),
        ] {
            assert_eq!(
                check(kind, dir.path(), payload, Some(&m)),
                Provenance::Foreign
            );
        }
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            check(StateKind::Session, other.path(), b"s1", Some(&m)),
            Provenance::Foreign
        );
        assert_eq!(
            check(StateKind::Session, dir.path(), b"s1", None),
            Provenance::Foreign
        );
        assert_eq!(
            check(StateKind::Session, dir.path(), b"s1", Some("zz")),
            Provenance::Foreign
        );
    }
}
