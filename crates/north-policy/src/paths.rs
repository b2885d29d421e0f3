//! Where a path really goes: every symlink on the way followed, so a check
//! of "inside the project" cannot be fooled by a link (the command policy's
//! path check and the tools' sandbox both build on it).

use std::io;
use std::path::{Component, Path, PathBuf};

/// Where `path` lands on disk, read from `base` (relative paths) or the
/// filesystem root (absolute ones): every component that exists is followed
/// through its symlinks, and the components that do not exist yet are
/// appended as written (`..` among them pops one). This is North's single
/// notion of "where a path goes"; [`is_inside`] and the tools' `Sandbox` build on it.
///
/// Fails when a symlink on the way dangles or loops, or a component before
/// the last is not a directory: such a path cannot be proven to go anywhere.
pub fn physical_path(base: &Path, path: &Path) -> io::Result<PathBuf> {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut current = PathBuf::new();
    let mut missing = false;
    for component in full.components() {
        match component {
            Component::Prefix(p) => current.push(p.as_os_str()),
            Component::RootDir => current.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                // `current` is physical (or lexically new), so its parent is
                // where `..` really leads.
                current.pop();
            }
            Component::Normal(part) => {
                let next = current.join(part);
                if missing {
                    current = next;
                    continue;
                }
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        current = std::fs::canonicalize(&next)?;
                    }
                    Ok(_) => current = next,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        if !current.as_os_str().is_empty() && !current.is_dir() {
                            return Err(io::Error::from(io::ErrorKind::NotADirectory));
                        }
                        missing = true;
                        current = next;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(current)
}

/// Whether `path`, read from `base`, lands inside `root` (canonical) once
/// every symlink on it is followed. A path that cannot be resolved (a
/// dangling or looping symlink) is not inside.
pub fn is_inside(root: &Path, base: &Path, path: &Path) -> bool {
    physical_path(base, path).is_ok_and(|p| p.starts_with(root))
}
