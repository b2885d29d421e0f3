//! North's record of the worktrees it made: one small JSON file per
//! worktree in the user's data directory (never in the repository, where a
//! command or a repository's author could write one), so North only ever
//! removes, merges or trusts a worktree it created.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{WorktreeError, io};

/// Who a worktree was made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Owner {
    /// A session started with `-w`.
    Session,
    /// A sub-agent with `isolation: worktree`.
    Agent {
        /// The agent's name.
        agent: String,
    },
}

/// One worktree North made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worktree {
    /// Its name (`feat`).
    pub name: String,
    /// Its directory (`<repo>.worktrees/<name>`).
    pub path: PathBuf,
    /// The repository's main tree.
    pub repo: PathBuf,
    /// The repository's git directory (`<repo>/.git`).
    pub git_dir: PathBuf,
    /// Its own git directory (`<repo>/.git/worktrees/<name>`).
    pub admin: PathBuf,
    /// Its branch (`north/<name>`).
    pub branch: String,
    /// The commit it started from (what its changes are measured against).
    pub base: String,
    /// When it was made (seconds since the epoch).
    pub created: u64,
    /// Who it was made for.
    pub owner: Owner,
    /// When its changes were last merged into the main tree.
    #[serde(default)]
    pub merged: Option<u64>,
    /// What North last wrote to the main tree from it, path by path:
    /// while the main tree still holds that, the next merge of the file
    /// starts from the worktree's version of then, not from `base`.
    #[serde(default)]
    pub merged_files: std::collections::BTreeMap<String, MergedFile>,
}

/// One file as a merge left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedFile {
    /// The sha256 of what was written to the main tree.
    pub main: String,
    /// The git blob of the worktree's version merged then.
    pub theirs: String,
}

impl Worktree {
    /// Makes sure the directories a commit in it writes exist (git's own
    /// maintenance may remove an empty one), so the sandbox can open them.
    pub fn prepare_git_dirs(&self) {
        for dir in ["refs/heads/north", "logs/refs/heads/north"] {
            let _ = std::fs::create_dir_all(self.git_dir.join(dir));
        }
    }

    /// What a `WorktreeCreate` / `WorktreeRemove` hook is told of it
    /// (Claude Code's fields).
    pub fn hook_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut fields = serde_json::Map::new();
        fields.insert("name".into(), self.name.clone().into());
        fields.insert(
            "worktree_path".into(),
            self.path.display().to_string().into(),
        );
        fields.insert("branch".into(), self.branch.clone().into());
        fields.insert("base_commit".into(), self.base.clone().into());
        fields
    }

    /// The sandbox's view of its shared git state.
    pub fn git(&self) -> north_tools::os_sandbox::WorktreeGit {
        north_tools::os_sandbox::WorktreeGit {
            admin: self.admin.clone(),
            common: self.git_dir.clone(),
        }
    }
}

/// Whether `name` can name a worktree (and its branch and directory).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".lock")
        && !name.ends_with('.')
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Where North keeps its record of worktrees.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    /// The registry in `dir` (the binary passes `<data dir>/worktrees`).
    pub fn at(dir: PathBuf) -> Registry {
        Registry { dir }
    }

    fn file(&self, path: &Path) -> PathBuf {
        let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
        let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.json"))
    }

    /// Records `wt` (replacing its earlier record).
    pub fn save(&self, wt: &Worktree) -> Result<(), WorktreeError> {
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        let file = self.file(&wt.path);
        let text = serde_json::to_string_pretty(wt).unwrap_or_default();
        let tmp = file.with_extension(format!("tmp{:04x}", fastrand::u16(..)));
        std::fs::write(&tmp, text).map_err(io("write", &tmp))?;
        std::fs::rename(&tmp, &file).map_err(io("write", &file))
    }

    /// Forgets `wt`.
    pub fn forget(&self, wt: &Worktree) -> Result<(), WorktreeError> {
        let file = self.file(&wt.path);
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", &file)(e)),
            _ => Ok(()),
        }
    }

    /// The worktree North made at `path`, if it made one there.
    pub fn at_path(&self, path: &Path) -> Option<Worktree> {
        let text = std::fs::read_to_string(self.file(path)).ok()?;
        let wt: Worktree = serde_json::from_str(&text).ok()?;
        (wt.path == path).then_some(wt)
    }

    /// North's worktrees of the repository whose main tree is `repo`, by
    /// name.
    pub fn of_repo(&self, repo: &Path) -> Vec<Worktree> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<Worktree> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|t| serde_json::from_str::<Worktree>(&t).ok())
            .filter(|wt| wt.repo == repo)
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// North's worktree `name` of `repo`.
    pub fn named(&self, repo: &Path, name: &str) -> Result<Worktree, WorktreeError> {
        self.of_repo(repo)
            .into_iter()
            .find(|wt| wt.name == name)
            .ok_or_else(|| WorktreeError::NotOwned(name.to_string()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_or_confuse_git_are_refused() {
        for ok in ["feat", "fix-12", "a.b_c"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "x.",
            "../x",
            "a/b",
            "-x",
            ".x",
            "x.lock",
            "a..b",
            "é",
            &"x".repeat(65),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
