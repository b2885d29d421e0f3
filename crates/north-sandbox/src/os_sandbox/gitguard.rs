//! A git directory a sandboxed command makes is set aside, not left for the
//! user's git to trust.
//!
//! The sandbox keeps an existing `.git/config` and `.git/hooks` read-only,
//! but it cannot stop a command from *creating* what git reads as
//! configuration: a whole `.git` where there was none (`git init` followed
//! by a `core.fsmonitor` line), or a `commondir`, `config.worktree`,
//! `modules/` or `worktrees/` entry that points git at such a config. The
//! user's own git would run that code the next time it is used. So after
//! every sandboxed child — the moment it appears, through the launcher's
//! supervisor ([`super::supervise`]), and again after each foreground
//! command — North compares the root's git directory with what it was
//! before, moves anything new of that kind into `.north/quarantine/`, and
//! tells the model (and so the user) what it did.
//!
//! A rebase or cherry-pick the sandbox left in progress is set aside too
//! when its to-do list holds `exec` lines: the user's `git rebase
//! --continue` would run them outside the sandbox.

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
pub struct GitState {
    existed: bool,
    present: Vec<&'static str>,
    /// Sequencer directories whose to-do list already ran commands.
    exec_todos: Vec<&'static str>,
    /// Quarantine directories already there: one that appears during the
    /// command was made by another guard (the launcher's supervisor sets a
    /// new `.git` aside the moment it appears), and the model is told of
    /// it all the same.
    quarantined: Vec<PathBuf>,
}

/// Sequencer directories whose to-do lists can run commands.
const TODOS: &[(&str, &str)] = &[("rebase-merge", "git-rebase-todo"), ("sequencer", "todo")];

/// Looks at `root/.git` now.
pub fn observe(root: &Path) -> GitState {
    let git = root.join(".git");
    let existed = std::fs::symlink_metadata(&git).is_ok();
    let present = WATCHED
        .iter()
        .copied()
        .filter(|name| std::fs::symlink_metadata(git.join(name)).is_ok())
        .collect();
    let exec_todos = TODOS
        .iter()
        .map(|(dir, _)| *dir)
        .filter(|dir| runs_commands(&git, dir))
        .collect();
    GitState {
        existed,
        present,
        exec_todos,
        quarantined: quarantines(root),
    }
}

/// Every quarantine directory under `root` (either place
/// [`quarantine_dir`] puts one), sorted.
fn quarantines(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(crate::STATE_DIR).join("quarantine"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    found.extend(
        std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".north-quarantine-")
            })
            .map(|e| e.path()),
    );
    found.sort();
    found
}

/// What other guards set aside since `before`, as labels (`.git`,
/// `.git/commondir`), leaving out `own`.
fn set_aside_by_others(root: &Path, before: &GitState, own: Option<&Path>) -> Vec<String> {
    quarantines(root)
        .into_iter()
        .filter(|dir| !before.quarantined.contains(dir) && Some(dir.as_path()) != own)
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .replacen(".git_", ".git/", 1)
        })
        .collect()
}

/// Whether the to-do list of `dir` (a sequencer directory) has a line
/// that runs a command (`exec`, `x`).
fn runs_commands(git: &Path, dir: &str) -> bool {
    let Some((_, file)) = TODOS.iter().find(|(d, _)| *d == dir) else {
        return false;
    };
    let Ok(text) = std::fs::read(git.join(dir).join(file)) else {
        return false;
    };
    String::from_utf8_lossy(&text).lines().any(|line| {
        let word = line.split_whitespace().next().unwrap_or("");
        matches!(word, "exec" | "x")
    })
}

/// Where set-aside entries go: `.north/quarantine/<stamp>` when `.north`
/// is a real directory, else a dot-directory beside `.git` that git never
/// reads.
fn quarantine_dir(root: &Path) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = format!("{stamp}-{:04x}", fastrand::u16(..));
    let state = root.join(crate::STATE_DIR);
    match std::fs::symlink_metadata(&state) {
        Ok(m) if m.file_type().is_symlink() || !m.is_dir() => {
            root.join(format!(".north-quarantine-{name}"))
        }
        _ => state.join("quarantine").join(name),
    }
}

/// Moves what a command created since `before` into the quarantine and
/// says so; `None` when nothing changed.
pub fn seal(root: &Path, before: &GitState) -> Option<String> {
    let git = root.join(".git");
    let mut moved: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut quarantine: Option<PathBuf> = None;
    let mut set_aside = |from: &Path, label: String| {
        let dir = quarantine.get_or_insert_with(|| quarantine_dir(root));
        let name = label.replace('/', "_");
        let result =
            std::fs::create_dir_all(&*dir).and_then(|()| std::fs::rename(from, dir.join(name)));
        match result {
            Ok(()) => moved.push(label),
            // Another guard (the launcher's supervisor) was first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
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
        for (dir, _) in TODOS {
            if !before.exec_todos.contains(dir) && runs_commands(&git, dir) {
                set_aside(&git.join(dir), format!(".git/{dir}"));
            }
        }
    }
    if let Some(dir) = &quarantine {
        // Empty when the supervisor was first; those entries are counted
        // below.
        let _ = std::fs::remove_dir(dir);
    }
    for label in set_aside_by_others(root, before, quarantine.as_deref()) {
        if !moved.contains(&label) {
            moved.push(label);
        }
    }
    if moved.is_empty() && failed.is_empty() {
        return None;
    }
    let mut note = String::new();
    if !moved.is_empty() {
        note.push_str(&format!(
            "North moved {} into .north/quarantine/: a sandboxed command may not create git configuration or a rebase that runs commands, which git would run outside the sandbox. Ask the user to run `git init` (or the git setup) themselves.",
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

    #[test]
    fn what_another_guard_set_aside_first_is_still_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".north/quarantine/1-old")).unwrap();
        let before = observe(root);
        // The supervisor wins the race: the .git is gone before the
        // foreground check runs.
        let theirs = root.join(".north/quarantine/2-abcd");
        std::fs::create_dir_all(theirs.join(".git")).unwrap();
        std::fs::create_dir_all(theirs.join(".git_commondir")).unwrap();
        let note = seal(root, &before).unwrap();
        assert!(
            note.contains(".git, .git/commondir") || note.contains(".git/commondir, .git"),
            "{note}"
        );
        let dirs = std::fs::read_dir(root.join(".north/quarantine"))
            .unwrap()
            .count();
        assert_eq!(dirs, 2, "no empty quarantine directory of its own is left");
        assert_eq!(seal(root, &observe(root)), None, "reported once");
    }
}
