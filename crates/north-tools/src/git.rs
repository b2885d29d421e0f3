//! North's own `git`: reading history without letting the repository run
//! code.
//!
//! A repository's `.git/config` can make git run programs (`core.fsmonitor`,
//! `gpg.program` with `log.showSignature`, `diff.external`, textconv and
//! filter drivers, `core.pager`, lazy fetches from a promisor remote), and a
//! repository can arrive with its `.git` (an archive, a shared volume). So
//! North never points git at a repository's own git directory: it builds a
//! private *neutral* git directory whose `config` it wrote itself, with the
//! repository's object store and refs linked in as data. Git then reads the
//! history and nothing else of the repository — no config, no hooks, no
//! `info/attributes` — with global and system config off, no work tree, the
//! key-free environment, and (when the spawner is confined) inside the OS
//! sandbox.
//!
//! Reading callers run no subcommand that writes. The one writer is
//! `north-worktree` (creating a worktree and its branch, which North
//! decided and the user asked for): it runs git through the same neutral
//! directory, so even then no configuration or hook of the repository
//! runs.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::Spawner;

/// How long North waits for its own git before giving up.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes of git output North reads.
const MAX_OUTPUT: usize = 16 * 1024 * 1024;

/// Why North's own git gave no answer (callers fall back, never fail).
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No git directory North can read safely (none, a `.git` file, a link).
    #[error("no plain .git directory at or above {0}")]
    NoRepository(PathBuf),
    /// Building the neutral git directory failed.
    #[error("cannot prepare a neutral git directory: {0}")]
    Prepare(#[source] std::io::Error),
    /// git could not be started.
    #[error("cannot start git: {0}")]
    Spawn(#[source] std::io::Error),
    /// git ran past its time and was killed.
    #[error("git took longer than {0}s and was stopped")]
    Timeout(u64),
    /// git exited with an error.
    #[error("git failed: {0}")]
    Failed(String),
}

/// A repository as North's own git sees it: its history through a neutral
/// git directory.
#[derive(Debug)]
pub struct NeutralRepo {
    /// The private directory git is pointed at (removed on drop).
    dir: tempfile::TempDir,
    /// The path of the project root below the repository's top, `/`-joined
    /// (empty when the root is the top).
    prefix: String,
}

impl NeutralRepo {
    /// Prepares the neutral git directory for the repository holding `root`.
    pub fn open(root: &Path) -> Result<Self, GitError> {
        let (top, git_dir) = find_git_dir(root)?;
        let prefix = root
            .strip_prefix(&top)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        let dir = tempfile::Builder::new()
            .prefix("north-git-")
            .tempdir()
            .map_err(GitError::Prepare)?;
        let head = read_small(&git_dir.join("HEAD")).map_err(GitError::Prepare)?;
        std::fs::write(dir.path().join("HEAD"), head).map_err(GitError::Prepare)?;
        // North's own config: a bare repository with nothing configured.
        std::fs::write(
            dir.path().join("config"),
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
        )
        .map_err(GitError::Prepare)?;
        for data in ["objects", "refs", "packed-refs", "shallow"] {
            let target = git_dir.join(data);
            if target.exists() {
                std::os::unix::fs::symlink(&target, dir.path().join(data))
                    .map_err(GitError::Prepare)?;
            }
        }
        // What the user told git to ignore is data too: the repository's
        // `info/exclude`, and the user's own ignore file.
        let exclude = git_dir.join("info/exclude");
        if exclude.is_file() {
            std::fs::create_dir(dir.path().join("info")).map_err(GitError::Prepare)?;
            std::os::unix::fs::symlink(&exclude, dir.path().join("info/exclude"))
                .map_err(GitError::Prepare)?;
        }
        if let Some(ignore) = user_ignore_file() {
            let mut config = std::fs::OpenOptions::new()
                .append(true)
                .open(dir.path().join("config"))
                .map_err(GitError::Prepare)?;
            let path = ignore
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            std::io::Write::write_all(
                &mut config,
                format!("\texcludesFile = \"{path}\"\n").as_bytes(),
            )
            .map_err(GitError::Prepare)?;
        }
        Ok(NeutralRepo { dir, prefix })
    }

    /// The project root's path below the repository's top (`""` at the top).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The neutral git directory (what `GIT_DIR` names).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `git ARGS` against the neutral directory through `spawner`, in
    /// `cwd`, and returns its standard output (at most 16 MiB).
    pub fn run(&self, spawner: &Spawner, cwd: &Path, args: &[&str]) -> Result<String, GitError> {
        let out = self.output(spawner, cwd, args, &[])?;
        if out.status != 0 {
            return Err(GitError::Failed(out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs `git ARGS` with `env` added (`GIT_WORK_TREE`, `GIT_INDEX_FILE`
    /// for a command that needs a work tree) and returns what it said,
    /// whatever its exit status.
    pub fn output(
        &self,
        spawner: &Spawner,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &OsStr)],
    ) -> Result<GitOutput, GitError> {
        self.output_within(spawner, cwd, args, env, GIT_TIMEOUT)
    }

    /// As [`NeutralRepo::output`], given `timeout` (a checkout of a large
    /// tree takes longer than a history read).
    pub fn output_within(
        &self,
        spawner: &Spawner,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &OsStr)],
        timeout: Duration,
    ) -> Result<GitOutput, GitError> {
        let mut cmd = spawner
            .keeping(self.dir.path())
            .std_command(OsStr::new("git"), cwd);
        cmd.args(["--no-pager", "-c", "core.quotePath=false"])
            .args(args)
            .env("GIT_DIR", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().map_err(GitError::Spawn)?;
        let stdout = child.stdout.take();
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(out) = stdout {
                let _ = out.take(MAX_OUTPUT as u64).read_to_end(&mut buf);
            }
            buf
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) | Err(_) => {
                    kill_group(&mut child);
                    return Err(GitError::Timeout(timeout.as_secs()));
                }
            }
        };
        let stdout = reader.join().unwrap_or_default();
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = (&mut e).take(4096).read_to_string(&mut err);
        }
        Ok(GitOutput {
            // A signal is a failure like any other.
            status: status.code().unwrap_or(-1),
            stdout,
            stderr: err.trim().to_owned(),
        })
    }
}

/// What one run of git said.
#[derive(Debug, Clone)]
pub struct GitOutput {
    /// The exit status (-1: killed by a signal).
    pub status: i32,
    /// Standard output, at most 16 MiB.
    pub stdout: Vec<u8>,
    /// The first 4 KiB of standard error, trimmed.
    pub stderr: String,
}

/// The top of the repository holding `root` and its git directory, when
/// that is a plain `.git` directory (not a link, not a worktree's `gitdir:`
/// file, which could point anywhere).
pub fn repository_of(root: &Path) -> Result<(PathBuf, PathBuf), GitError> {
    find_git_dir(root)
}

fn kill_group(child: &mut std::process::Child) {
    crate::Spawner::kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// The repository's top and its git directory: the nearest `.git` at or
/// above `root` that is a real directory (not a link, not a `gitdir:` file,
/// which could point anywhere).
fn find_git_dir(root: &Path) -> Result<(PathBuf, PathBuf), GitError> {
    for dir in root.ancestors() {
        let git = dir.join(".git");
        match std::fs::symlink_metadata(&git) {
            Ok(meta) if meta.file_type().is_dir() => return Ok((dir.to_path_buf(), git)),
            Ok(_) => return Err(GitError::NoRepository(root.to_path_buf())),
            Err(_) => continue,
        }
    }
    Err(GitError::NoRepository(root.to_path_buf()))
}

/// The user's global ignore file where git looks for it by default
/// (`$XDG_CONFIG_HOME/git/ignore`, else `~/.config/git/ignore`).
fn user_ignore_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("git/ignore")).filter(|p| p.is_file())
}

fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(4096)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
    }

    #[test]
    fn the_repositorys_config_never_runs_code() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        git(&root, &["add", "a.txt"]);
        git(&root, &["commit", "-qm", "first"]);
        let marker = tmp.path().join("ran");
        let script = tmp.path().join("evil.sh");
        std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        std::os::unix::fs::PermissionsExt::set_mode(
            &mut std::fs::metadata(&script).unwrap().permissions(),
            0o755,
        );
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut config = std::fs::read_to_string(root.join(".git/config")).unwrap();
        let s = script.display();
        config.push_str(&format!(
            "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {s}\n[core]\n\tfsmonitor = {s}\n\tpager = {s}\n[diff]\n\texternal = {s}\n"
        ));
        std::fs::write(root.join(".git/config"), config).unwrap();
        let repo = NeutralRepo::open(&root).unwrap();
        let out = repo
            .run(
                &Spawner::unconfined(),
                &root,
                &["log", "--numstat", "--format=%x00%G?", "-p"],
            )
            .unwrap();
        assert!(out.contains("a.txt"), "{out}");
        assert!(!marker.exists(), "a program from .git/config ran");
    }

    #[test]
    fn a_git_file_or_link_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".git"), "gitdir: /somewhere/else\n").unwrap();
        assert!(matches!(
            NeutralRepo::open(tmp.path()),
            Err(GitError::NoRepository(_))
        ));
    }
}
