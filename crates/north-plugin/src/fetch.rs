//! Fetching a plugin's files: git through a neutral environment (no
//! global or system config, no templates, no hooks, no prompts, no
//! submodules, only plain transports), a copy that refuses links leading
//! out of the folder, and the content hash the files are pinned to.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::error::PluginError;

/// How long a clone may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);
/// The most files a plugin may hold.
const MAX_FILES: usize = 5_000;
/// The most bytes a plugin may hold.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// A repository checked out at one commit, in a temporary folder.
pub(crate) struct Checkout {
    /// Removed on drop.
    _dir: tempfile::TempDir,
    /// The work tree.
    pub tree: PathBuf,
    /// The commit checked out.
    pub commit: String,
}

/// Clones `url` under `parent` and checks out `rev` (default: its HEAD).
pub(crate) fn clone(url: &str, rev: Option<&str>, parent: &Path) -> Result<Checkout, PluginError> {
    std::fs::create_dir_all(parent).map_err(PluginError::io("create", parent))?;
    let dir = tempfile::Builder::new()
        .prefix(".fetch-")
        .tempdir_in(parent)
        .map_err(PluginError::io("create a folder in", parent))?;
    let tree = dir.path().join("repo");
    let tree_arg = tree.display().to_string();
    let out = git(
        dir.path(),
        &[
            "clone",
            "--quiet",
            "--no-checkout",
            "--template=",
            "--",
            url,
            &tree_arg,
        ],
    )?;
    if out.status != 0 {
        return Err(PluginError::Unreachable {
            source_text: url.to_string(),
            message: out.stderr,
        });
    }
    let wanted = rev.unwrap_or("HEAD");
    let commit = [wanted.to_string(), format!("origin/{wanted}")]
        .iter()
        .find_map(|r| {
            let spec = format!("{r}^{{commit}}");
            let out = git(
                &tree,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    "--end-of-options",
                    &spec,
                ],
            )
            .ok()?;
            (out.status == 0).then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
        .filter(|c| !c.is_empty() && !wanted.starts_with('-'))
        .ok_or_else(|| PluginError::NoRevision {
            rev: wanted.to_string(),
            source_text: url.to_string(),
        })?;
    let out = git(
        &tree,
        &[
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "--detach",
            &commit,
        ],
    )?;
    if out.status != 0 {
        return Err(PluginError::Git(out.stderr));
    }
    Ok(Checkout {
        _dir: dir,
        tree,
        commit,
    })
}

/// What one run of git said.
struct GitOutput {
    status: i32,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs git in `cwd` with nothing of the user's or a repository's
/// configuration that could run a program, and no prompt.
fn git(cwd: &Path, args: &[&str]) -> Result<GitOutput, PluginError> {
    let mut cmd = north_sandbox::Spawner::unconfined().std_command(OsStr::new("git"), cwd);
    cmd.args([
        "--no-pager",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
    ])
    .args(args)
    .env("GIT_CONFIG_NOSYSTEM", "1")
    .env("GIT_CONFIG_GLOBAL", "/dev/null")
    .env("GIT_TERMINAL_PROMPT", "0")
    .env("GIT_ALLOW_PROTOCOL", "file:git:http:https:ssh")
    .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    .env("GIT_NO_REPLACE_OBJECTS", "1")
    .env_remove("GIT_DIR")
    .env_remove("GIT_WORK_TREE")
    .env_remove("GIT_INDEX_FILE")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| PluginError::Git(e.to_string()))?;
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(out) = stdout {
            let _ = out.take(16 * 1024 * 1024).read_to_end(&mut buf);
        }
        buf
    });
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = String::new();
        if let Some(err) = stderr {
            let _ = err.take(64 * 1024).read_to_string(&mut buf);
        }
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < GIT_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PluginError::Git(format!(
                    "git took longer than {}s and was stopped",
                    GIT_TIMEOUT.as_secs()
                )));
            }
        }
    };
    Ok(GitOutput {
        status: status.code().unwrap_or(-1),
        stdout: reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default().trim().to_string(),
    })
}

/// Copies the plugin at `from` to `to` (which must not exist): folders,
/// files (their executable bit kept) and links that stay inside `from`;
/// a `.git` at the top is left behind. A link out, a special file or a
/// plugin past the size limits is refused.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), PluginError> {
    let mut budget = (0usize, 0u64);
    std::fs::create_dir_all(to).map_err(PluginError::io("create", to))?;
    copy_dir(from, from, to, &mut budget)?;
    // Judged by words, a chain of links (`s -> .`, `x -> s/s/../..`) can
    // still climb out: in the copy, every link must resolve inside it.
    let top = to.canonicalize().map_err(PluginError::io("read", to))?;
    links_resolve_inside(&top, &top)
}

/// Every link under `dir` resolves, and to a place inside `top`.
fn links_resolve_inside(top: &Path, dir: &Path) -> Result<(), PluginError> {
    for entry in sorted_entries(dir)? {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).map_err(PluginError::io("read", &path))?;
        if meta.file_type().is_symlink() {
            let inside = std::fs::canonicalize(&path).is_ok_and(|real| real.starts_with(top));
            if !inside {
                return Err(PluginError::LinkOut {
                    path: path.strip_prefix(top).unwrap_or(&path).to_path_buf(),
                    target: std::fs::read_link(&path).unwrap_or_default(),
                });
            }
        } else if meta.is_dir() {
            links_resolve_inside(top, &path)?;
        }
    }
    Ok(())
}

fn copy_dir(
    root: &Path,
    dir: &Path,
    to: &Path,
    budget: &mut (usize, u64),
) -> Result<(), PluginError> {
    for entry in sorted_entries(dir)? {
        let path = entry.path();
        if dir == root && entry.file_name() == ".git" {
            continue;
        }
        budget.0 += 1;
        if budget.0 > MAX_FILES {
            return Err(too_large(
                root,
                format!("over {MAX_FILES} files"),
                MAX_FILES.to_string() + " files",
            ));
        }
        let meta = std::fs::symlink_metadata(&path).map_err(PluginError::io("read", &path))?;
        let dest = to.join(entry.file_name());
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(&path).map_err(PluginError::io("read", &path))?;
            if !stays_inside(root, &path, &target) {
                return Err(PluginError::LinkOut {
                    path: path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
                    target,
                });
            }
            std::os::unix::fs::symlink(&target, &dest).map_err(PluginError::io("create", &dest))?;
        } else if kind.is_dir() {
            std::fs::create_dir(&dest).map_err(PluginError::io("create", &dest))?;
            copy_dir(root, &path, &dest, budget)?;
        } else if kind.is_file() {
            budget.1 += meta.len();
            if budget.1 > MAX_BYTES {
                return Err(too_large(root, "over 64 MiB".into(), "64 MiB".into()));
            }
            std::fs::copy(&path, &dest).map_err(PluginError::io("copy", &path))?;
            // The store's copy is the user's own: never writable by others,
            // executable or not as the plugin said.
            use std::os::unix::fs::PermissionsExt;
            let mode = if meta.permissions().mode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
                .map_err(PluginError::io("write", &dest))?;
        } else {
            return Err(PluginError::Special(path));
        }
    }
    Ok(())
}

/// The entries of `dir`, by name (the order the hash and the copy walk).
pub(crate) fn sorted_entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>, PluginError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(PluginError::io("read", dir))?
        .flatten()
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    Ok(entries)
}

fn too_large(root: &Path, what: String, limit: String) -> PluginError {
    PluginError::TooLarge {
        path: root.to_path_buf(),
        what,
        limit,
    }
}

/// Whether the link at `link` to `target` stays inside `root`, judged on
/// the words alone (no link is followed to decide).
fn stays_inside(root: &Path, link: &Path, target: &Path) -> bool {
    if target.is_absolute() {
        return false;
    }
    let Some(parent) = link.parent().and_then(|p| p.strip_prefix(root).ok()) else {
        return false;
    };
    let mut depth: Vec<Component<'_>> = parent.components().collect();
    for part in target.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            Component::Normal(_) => depth.push(part),
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// The content hash of the plugin folder `dir`: every path, kind,
/// executable bit, link target and file's bytes, in path order.
pub fn content_hash(dir: &Path) -> Result<String, PluginError> {
    let mut hasher = Sha256::new();
    let mut budget = (0usize, 0u64);
    hash_dir(dir, dir, &mut hasher, &mut budget)?;
    let digest = hasher.finalize();
    Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
}

fn hash_dir(
    root: &Path,
    dir: &Path,
    hasher: &mut Sha256,
    budget: &mut (usize, u64),
) -> Result<(), PluginError> {
    use std::os::unix::fs::PermissionsExt;
    for entry in sorted_entries(dir)? {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path);
        let meta = std::fs::symlink_metadata(&path).map_err(PluginError::io("read", &path))?;
        hasher.update(rel.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map_err(PluginError::io("read", &path))?;
            hasher.update(b"L");
            hasher.update(target.as_os_str().as_encoded_bytes());
        } else if meta.is_dir() {
            hasher.update(b"D");
            hash_dir(root, &path, hasher, budget)?;
        } else if meta.is_file() {
            // The same limits as the copy: a store that grew past them is
            // not what was reviewed.
            budget.0 += 1;
            budget.1 += meta.len();
            if budget.0 > MAX_FILES || budget.1 > MAX_BYTES {
                return Err(too_large(
                    root,
                    "past the limits".into(),
                    "64 MiB in 5,000 files".into(),
                ));
            }
            let exec = meta.permissions().mode() & 0o111 != 0;
            hasher.update(if exec { b"X" } else { b"F" });
            hasher.update(meta.len().to_le_bytes());
            let bytes = std::fs::read(&path).map_err(PluginError::io("read", &path))?;
            hasher.update(&bytes);
        } else {
            return Err(PluginError::Special(path));
        }
        hasher.update([0]);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn links_are_judged_by_where_they_lead() {
        let root = Path::new("/p");
        let link = Path::new("/p/hooks/run");
        assert!(stays_inside(root, link, Path::new("../scripts/run.sh")));
        assert!(stays_inside(root, link, Path::new("./x")));
        assert!(!stays_inside(root, link, Path::new("../../etc/passwd")));
        assert!(!stays_inside(root, link, Path::new("/etc/passwd")));
        assert!(!stays_inside(root, Path::new("/p/top"), Path::new("..")));
    }
}
