//! Sessions by name: `/rename fix-parser` (or `north sessions rename`)
//! writes `name` in the session's directory; `--resume fix-parser` and
//! `/resume fix-parser` find it by that name, an id still by its id.

use std::fs;
use std::io;

use super::{Session, SessionStore, StoreError, io_err, write_atomic};

/// The file holding a session's name.
const NAME_FILE: &str = "name";

/// Whether `name` can name a session: 1 to 64 letters, digits, spaces,
/// `-`, `_` or `.`, with something besides digits and dashes (so a name
/// never looks like an id).
fn valid_name(name: &str) -> bool {
    let chars = name.chars().count();
    (1..=64).contains(&chars)
        && name.trim() == name
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'))
        && name.chars().any(|c| !(c.is_ascii_digit() || c == '-'))
}

impl Session {
    /// The name the user gave this session, if any.
    pub fn name(&self) -> Option<String> {
        fs::read_to_string(self.dir.join(NAME_FILE))
            .ok()
            .map(|n| n.trim().to_string())
            .filter(|n| valid_name(n))
    }

    /// Names this session `name`; an empty name removes it.
    pub fn rename(&self, name: &str) -> Result<(), StoreError> {
        let path = self.dir.join(NAME_FILE);
        let name = name.trim();
        if name.is_empty() {
            return match fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err("remove", &path)(e)),
            };
        }
        if !valid_name(name) {
            return Err(StoreError::InvalidName(name.to_string()));
        }
        write_atomic(&path, name.as_bytes()).map_err(io_err("write", &path))
    }
}

impl SessionStore {
    /// The session `id_or_name` names: the session with that id, else the
    /// one session with that name.
    pub fn resolve(&self, id_or_name: &str) -> Result<Session, StoreError> {
        match self.open(id_or_name) {
            Err(StoreError::NotFound(_) | StoreError::InvalidId(_)) => {}
            found => return found,
        }
        let named: Vec<Session> = self
            .list()?
            .into_iter()
            .map(|(s, _)| s)
            .filter(|s| s.name().as_deref() == Some(id_or_name))
            .collect();
        match named.len() {
            0 => Err(StoreError::NotFound(id_or_name.to_string())),
            1 => Ok(named
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::NotFound(id_or_name.to_string()))?),
            count => Err(StoreError::Ambiguous {
                name: id_or_name.to_string(),
                count,
                ids: named
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_its_name_and_still_by_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let a = store.create().unwrap();
        let b = store.create().unwrap();
        a.rename("fix parser").unwrap();
        assert_eq!(store.resolve("fix parser").unwrap().id, a.id);
        assert_eq!(store.resolve(&b.id).unwrap().id, b.id);
        assert!(matches!(
            store.resolve("nothing"),
            Err(StoreError::NotFound(_))
        ));
        // Two with one name: the ids are asked for.
        b.rename("fix parser").unwrap();
        let err = store.resolve("fix parser").unwrap_err();
        assert!(
            matches!(err, StoreError::Ambiguous { count: 2, .. }),
            "{err}"
        );
        // Bad names are refused; an empty one removes the name.
        for bad in ["", "a/b", "12-34", "tab\there", &"x".repeat(65)] {
            if !bad.is_empty() {
                assert!(
                    matches!(b.rename(bad), Err(StoreError::InvalidName(_))),
                    "{bad}"
                );
            }
        }
        b.rename("").unwrap();
        assert_eq!(b.name(), None);
        assert_eq!(store.resolve("fix parser").unwrap().id, a.id);
    }
}
