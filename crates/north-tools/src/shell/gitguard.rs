//! A git directory a sandboxed command makes is set aside, not left for the
//! user's git to trust.
//!
//! The sandbox keeps an existing `.git/config` and `.git/hooks` read-only,
//! but it cannot stop a command from *creating* what git reads as
//! configuration: a whole `.git` where there was none (`git init` followed
//! by a `core.fsmonitor` line), or a `commondir`, `config.worktree`,
//! `modules/` or `worktrees/` entry that points git at such a config. The
//! user's own git would run that code the next time it is used. So after
//! every sandboxed command North compares the root's git directory with
//! what it was before, moves anything new of that kind into
//! `.north/quarantine/`, and tells the model (and so the user) what it did.

use std::path::{Path, PathBuf};

/// Entries of an existing `.git` that redirect git to other configuration.
const WATCHED: &[&str] = &[
    "commondir",
    "config",
    "config.worktree",
    "modules",
    "worktrees",
];

/// The root's git directory as it was before a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitState {
    existed: bool,
    present: Vec<&'static str>,
}

/// Looks at `root/.git` now.
pub(crate) fn observe(root: &Path) -> GitState {
    let git = root.join(".git");
    let existed = std::fs::symlink_metadata(&git).is_ok();
    let present = WATCHED
        .iter()
        .copied()
        .filter(|name| std::fs::symlink_metadata(git.join(name)).is_ok())
        .collect();
    GitState { existed, present }
}

/// Moves what a command created since `before` into the quarantine and
/// says so; `None` when nothing changed.
pub(crate) fn seal(root: &Path, before: &GitState) -> Option<String> {
    let git = root.join(".git");
    let mut moved: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut quarantine: Option<PathBuf> = None;
    let mut set_aside = |from: &Path, label: String| {
        let dir = quarantine.get_or_insert_with(|| {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            root.join(crate::repo::STATE_DIR)
                .join("quarantine")
                .join(format!("{stamp}-{:04x}", fastrand::u16(..)))
        });
        let name = label.replace('/', "_");
        let result =
            std::fs::create_dir_all(&*dir).and_then(|()| std::fs::rename(from, dir.join(name)));
        match result {
            Ok(()) => moved.push(label),
            Err(e) => {
                tracing::warn!(error = %e, path = %from.display(), "cannot set aside a git entry");
                failed.push(label);
            }
        }
    };
    if !before.existed {
        if std::fs::symlink_metadata(&git).is_ok() {
            set_aside(&git, ".git".into());
        }
    } else {
        for name in WATCHED {
            if !before.present.contains(name) && std::fs::symlink_metadata(git.join(name)).is_ok() {
                set_aside(&git.join(name), format!(".git/{name}"));
            }
        }
    }
    if moved.is_empty() && failed.is_empty() {
        return None;
    }
    let mut note = String::new();
    if !moved.is_empty() {
        note.push_str(&format!(
            "North moved {} into .north/quarantine/: a sandboxed command may not create git configuration, which git would run outside the sandbox. Ask the user to run `git init` (or the git setup) themselves.",
            moved.join(", ")
        ));
    }
    if !failed.is_empty() {
        note.push_str(&format!(
            " North could not set aside {}; the user should inspect it before using git here.",
            failed.join(", ")
        ));
    }
    Some(note)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_new_git_dir_or_redirect_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let before = observe(root);
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        let note = seal(root, &before).unwrap();
        assert!(note.contains(".git"), "{note}");
        assert!(!root.join(".git").exists());
        assert!(root.join(".north/quarantine").is_dir());

        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        let before = observe(root);
        std::fs::write(root.join(".git/commondir"), "../evil\n").unwrap();
        std::fs::write(root.join(".git/index"), "ok").unwrap();
        let note = seal(root, &before).unwrap();
        assert!(note.contains(".git/commondir"), "{note}");
        assert!(!root.join(".git/commondir").exists());
        assert!(root.join(".git/index").exists(), "ordinary git state stays");
        assert_eq!(seal(root, &observe(root)), None);
    }
}
