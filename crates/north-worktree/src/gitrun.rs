//! North's git for worktrees: every run goes through the neutral git
//! directory of `north_tools::git` (no configuration, hook or attribute
//! driver of the repository), outside the sandbox because what it writes
//! (a branch, a checkout beside the repository) is North's own decision.

use std::ffi::OsStr;
use std::path::Path;

use std::time::Duration;

use north_tools::Spawner;
use north_tools::git::{GitOutput, NeutralRepo};

/// How long North's git may take here: a checkout or a status of a large
/// tree takes longer than a history read.
const TIMEOUT: Duration = Duration::from_secs(300);

use crate::error::WorktreeError;

/// A repository as North's worktree git sees it.
pub(crate) struct Git {
    repo: NeutralRepo,
    spawner: Spawner,
}

impl Git {
    /// North's git for the repository whose main tree is `top`.
    pub fn open(top: &Path) -> Result<Git, WorktreeError> {
        let repo = NeutralRepo::open(top).map_err(|source| match source {
            north_tools::git::GitError::NoRepository(p) => WorktreeError::NotARepository(p),
            source => WorktreeError::Git {
                what: "prepare",
                source,
            },
        })?;
        Ok(Git {
            repo,
            spawner: Spawner::unconfined(),
        })
    }

    /// The neutral git directory (where `git worktree add` leaves its
    /// bookkeeping, for North to move into the repository).
    pub fn dir(&self) -> &Path {
        self.repo.dir()
    }

    /// Runs git in `cwd` with `env` added; whatever its exit status.
    pub fn output(
        &self,
        what: &'static str,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &OsStr)],
    ) -> Result<GitOutput, WorktreeError> {
        self.repo
            .output_within(&self.spawner, cwd, args, env, TIMEOUT)
            .map_err(|source| WorktreeError::Git { what, source })
    }

    /// Runs git and returns its output, or what it said when it failed.
    pub fn ok(
        &self,
        what: &'static str,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &OsStr)],
    ) -> Result<Vec<u8>, WorktreeError> {
        let out = self.output(what, cwd, args, env)?;
        if out.status != 0 {
            return Err(WorktreeError::GitRefused {
                what,
                stderr: out.stderr,
            });
        }
        Ok(out.stdout)
    }

    /// The commit `rev` names, in full.
    pub fn commit(&self, cwd: &Path, rev: &str) -> Option<String> {
        let spec = format!("{rev}^{{commit}}");
        let out = self
            .output(
                "rev-parse",
                cwd,
                &["rev-parse", "--verify", "--quiet", &spec],
                &[],
            )
            .ok()?;
        let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status == 0 && !sha.is_empty()).then_some(sha)
    }

    /// The content of `path` at `commit` (None: not there); with `path`
    /// empty, of the blob `commit` names.
    pub fn blob(&self, cwd: &Path, commit: &str, path: &str) -> Option<Vec<u8>> {
        let spec = if path.is_empty() {
            commit.to_string()
        } else {
            format!("{commit}:{path}")
        };
        let out = self
            .output("cat-file", cwd, &["cat-file", "blob", &spec], &[])
            .ok()?;
        (out.status == 0).then_some(out.stdout)
    }

    /// Stores `bytes` as a blob in the repository (as they are: no
    /// filter); its id.
    pub fn store(&self, cwd: &Path, bytes: &[u8]) -> Result<String, WorktreeError> {
        let file = tempfile::NamedTempFile::new()
            .map_err(crate::error::io("create", &std::env::temp_dir()))?;
        std::fs::write(file.path(), bytes).map_err(crate::error::io("write", file.path()))?;
        let path = file.path().to_string_lossy().into_owned();
        let id = self.ok(
            "hash-object",
            cwd,
            &["hash-object", "-w", "--no-filters", &path],
            &[],
        )?;
        Ok(String::from_utf8_lossy(&id).trim().to_string())
    }

    /// The changed paths git reports with `-z` (`status --porcelain` or
    /// `diff --name-status`) in the work tree `tree` whose index is `index`.
    pub fn in_tree(
        &self,
        what: &'static str,
        tree: &Path,
        index: &Path,
        args: &[&str],
    ) -> Result<Vec<u8>, WorktreeError> {
        self.ok(
            what,
            tree,
            args,
            &[
                ("GIT_WORK_TREE", tree.as_os_str()),
                ("GIT_INDEX_FILE", index.as_os_str()),
            ],
        )
    }

    /// git's three-way merge of one file: the merged content (with
    /// conflict markers where both sides changed the same lines) and the
    /// number of conflicts.
    pub fn merge_file(
        &self,
        ours: (&str, &[u8]),
        base: &[u8],
        theirs: (&str, &[u8]),
    ) -> Result<(Vec<u8>, usize), WorktreeError> {
        let dir = tempfile::Builder::new()
            .prefix("north-merge-")
            .tempdir()
            .map_err(crate::error::io("create", &std::env::temp_dir()))?;
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).map_err(crate::error::io("write", &p))?;
            Ok::<_, WorktreeError>(p.to_string_lossy().into_owned())
        };
        let (o, b, t) = (
            write("ours", ours.1)?,
            write("base", base)?,
            write("theirs", theirs.1)?,
        );
        let out = self.output(
            "merge-file",
            dir.path(),
            &[
                "merge-file",
                "-p",
                "-L",
                ours.0,
                "-L",
                "base",
                "-L",
                theirs.0,
                &o,
                &b,
                &t,
            ],
            &[],
        )?;
        // The exit status is the number of conflicts; a negative one is an error.
        match usize::try_from(out.status) {
            Ok(conflicts) if out.status < 128 => Ok((out.stdout, conflicts)),
            _ => Err(WorktreeError::GitRefused {
                what: "merge-file",
                stderr: out.stderr,
            }),
        }
    }
}

/// The paths of `git status --porcelain -z` output (the new path of a
/// rename, and its old one).
pub(crate) fn status_paths(out: &[u8]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        paths.push(String::from_utf8_lossy(&entry[3..]).into_owned());
        if matches!(entry[0], b'R' | b'C')
            && let Some(old) = fields.next()
        {
            paths.push(String::from_utf8_lossy(old).into_owned());
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_entries_give_every_path_a_rename_touches() {
        let out = b" M a.txt\0R  new.txt\0old.txt\0?? dir/u.txt\0";
        assert_eq!(
            status_paths(out),
            ["a.txt", "new.txt", "old.txt", "dir/u.txt"]
        );
    }
}
