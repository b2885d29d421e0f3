//! Making a worktree: its branch and checkout through North's neutral git,
//! its bookkeeping moved into the repository's `.git/worktrees` (so the
//! user's own git knows it), the uncommitted changes or ignored files the
//! user asked for copied in, and North's record of it.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{WorktreeError, io};
use crate::gitrun::{Git, status_paths};
use crate::record::{Owner, Registry, Worktree, valid_name};

/// What to do when the source tree has uncommitted changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirtyPolicy {
    /// Refuse to create the worktree (the default: its files would not be
    /// the ones the user sees).
    #[default]
    Refuse,
    /// Create it from the base and copy the changed and untracked files in.
    Copy,
}

/// What [`create`] needs.
#[derive(Debug, Clone)]
pub struct CreateRequest {
    /// A directory in the repository's main tree.
    pub from: PathBuf,
    /// The worktree's name (None: one made from the time).
    pub name: Option<String>,
    /// The commit to start from (None: HEAD).
    pub base: Option<String>,
    /// Uncommitted changes in the source tree.
    pub dirty: DirtyPolicy,
    /// Who it is for.
    pub owner: Owner,
}

/// The file naming ignored files a worktree gets a copy of (Claude Code's).
const INCLUDE_FILE: &str = ".worktreeinclude";
/// The largest ignored file copied in.
const MAX_INCLUDED: u64 = 64 * 1024 * 1024;
/// How many dirty paths an error names.
const NAMED_PATHS: usize = 5;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A name for a worktree the user did not name: the time, and a few
/// random letters so two made in one second differ.
fn generated_name() -> String {
    let secs = now();
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    format!("wt-{h:02}{m:02}{s:02}-{:04x}", fastrand::u16(..))
}

/// Creates the worktree `req` asks for and records it in `registry`.
pub fn create(req: &CreateRequest, registry: &Registry) -> Result<Worktree, WorktreeError> {
    let name = match &req.name {
        Some(n) if valid_name(n) => n.clone(),
        Some(n) => return Err(WorktreeError::BadName(n.clone())),
        None => generated_name(),
    };
    let (top, git_dir) = north_tools::git::repository_of(&req.from)
        .map_err(|_| WorktreeError::NotARepository(req.from.clone()))?;
    let git = Git::open(&top)?;
    let dirty = dirty_paths(&git, &top, &git_dir)?;
    if !dirty.is_empty() && req.dirty == DirtyPolicy::Refuse {
        let mut named: Vec<String> = dirty.iter().take(NAMED_PATHS).cloned().collect();
        if dirty.len() > NAMED_PATHS {
            named.push(format!("and {} more", dirty.len() - NAMED_PATHS));
        }
        return Err(WorktreeError::Dirty(named));
    }
    let rev = req.base.as_deref().unwrap_or("HEAD");
    let base = git
        .commit(&top, rev)
        .ok_or_else(|| WorktreeError::BadBase(rev.to_string()))?;
    let mut wt = plan(&top, &git_dir, name, base, req.owner.clone())?;
    claim(&git, &wt)?;
    let made = checkout(&git, &wt).and_then(|()| {
        if req.dirty == DirtyPolicy::Copy && !dirty.is_empty() {
            copy_paths(&top, &wt.path, &dirty)?;
            wt.base = carry(&git, &wt)?;
        }
        copy_included(&git, &top, &git_dir, &wt.path)?;
        registry.save(&wt)
    });
    if let Err(e) = made {
        undo_create(&wt);
        return Err(e);
    }
    tracing::info!(name = %wt.name, path = %wt.path.display(), base = %wt.base, "worktree created");
    Ok(wt)
}

/// Where the worktree `name` of the repository at `top` goes.
fn plan(
    top: &Path,
    git_dir: &Path,
    name: String,
    base: String,
    owner: Owner,
) -> Result<Worktree, WorktreeError> {
    let repo_name = top
        .file_name()
        .map_or_else(|| "repo".into(), |n| n.to_string_lossy().into_owned());
    let parent = top.parent().unwrap_or(top);
    Ok(Worktree {
        path: parent.join(format!("{repo_name}.worktrees")).join(&name),
        admin: git_dir.join("worktrees").join(&name),
        branch: format!("north/{name}"),
        repo: top.to_path_buf(),
        git_dir: git_dir.to_path_buf(),
        name,
        base,
        created: now(),
        owner,
        merged: None,
        merged_files: std::collections::BTreeMap::new(),
    })
}

/// Takes the worktree's directory, git directory and branch name, or says
/// which is taken.
fn claim(git: &Git, wt: &Worktree) -> Result<(), WorktreeError> {
    if wt.admin.symlink_metadata().is_ok() {
        return Err(WorktreeError::Exists(wt.admin.display().to_string()));
    }
    let branch_ref = format!("refs/heads/{}", wt.branch);
    if git.commit(&wt.repo, &branch_ref).is_some() {
        return Err(WorktreeError::Exists(format!("branch {}", wt.branch)));
    }
    if let Some(parent) = wt.path.parent() {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    // Creating the directory is the claim: two sessions naming one
    // worktree at once cannot both get it.
    std::fs::create_dir(&wt.path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => WorktreeError::Exists(wt.path.display().to_string()),
        _ => io("create", &wt.path)(e),
    })
}

/// Checks the branch out into the worktree with North's neutral git, then
/// moves git's bookkeeping for it into the repository's own `.git`.
fn checkout(git: &Git, wt: &Worktree) -> Result<(), WorktreeError> {
    let path = wt.path.to_string_lossy();
    git.ok(
        "worktree add",
        &wt.repo,
        &[
            "worktree", "add", "--quiet", "-b", &wt.branch, &path, &wt.base,
        ],
        &[],
    )?;
    let made = git.dir().join("worktrees").join(&wt.name);
    if let Some(parent) = wt.admin.parent() {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    // Created, not reused: one the user's git made meanwhile is theirs.
    std::fs::create_dir(&wt.admin).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => WorktreeError::Exists(wt.admin.display().to_string()),
        _ => io("create", &wt.admin)(e),
    })?;
    copy_dir(&made, &wt.admin)?;
    // git's `gitdir` names the worktree's `.git`, and `commondir` is `../..`:
    // both hold in the repository's `.git/worktrees` as they did in the
    // neutral directory. Only the worktree's pointer back changes.
    let pointer = wt.path.join(".git");
    std::fs::write(&pointer, format!("gitdir: {}\n", wt.admin.display()))
        .map_err(io("write", &pointer))?;
    // Empty, so the sandbox can hold it read-only like the other pointers.
    let config = wt.admin.join("config.worktree");
    std::fs::write(&config, "").map_err(io("write", &config))?;
    // Where a commit in the worktree logs its branch's moves.
    let logs = wt.git_dir.join("logs/refs/heads/north");
    std::fs::create_dir_all(&logs).map_err(io("create", &logs))
}

/// Commits the changes carried in from the main tree on the worktree's
/// branch, so its base is the tree the user had (what comes back later is
/// only what was done in the worktree). Plumbing only, through a private
/// index: no hook, no configuration of the repository.
fn carry(git: &Git, wt: &Worktree) -> Result<String, WorktreeError> {
    let scratch = tempfile::Builder::new()
        .prefix("north-carry-")
        .tempdir()
        .map_err(io("create", &std::env::temp_dir()))?;
    let index = scratch.path().join("index");
    let admin_index = wt.admin.join("index");
    std::fs::copy(&admin_index, &index).map_err(io("copy", &admin_index))?;
    git.in_tree("add", &wt.path, &index, &["add", "-A"])?;
    let tree = git.in_tree("write-tree", &wt.path, &index, &["write-tree"])?;
    let tree = String::from_utf8_lossy(&tree).trim().to_string();
    let who: [(&str, &std::ffi::OsStr); 4] = [
        ("GIT_AUTHOR_NAME", "North".as_ref()),
        ("GIT_AUTHOR_EMAIL", "north@localhost".as_ref()),
        ("GIT_COMMITTER_NAME", "North".as_ref()),
        ("GIT_COMMITTER_EMAIL", "north@localhost".as_ref()),
    ];
    let message = "north: uncommitted changes carried from the main tree";
    let commit = git.ok(
        "commit-tree",
        &wt.path,
        &["commit-tree", &tree, "-p", &wt.base, "-m", message],
        &who,
    )?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    let branch = format!("refs/heads/{}", wt.branch);
    git.ok(
        "update-ref",
        &wt.path,
        &["update-ref", &branch, &commit, &wt.base],
        &[],
    )?;
    std::fs::copy(&index, &admin_index).map_err(io("write", &admin_index))?;
    Ok(commit)
}

/// Copies the regular files and directories under `from` to `to`.
fn copy_dir(from: &Path, to: &Path) -> Result<(), WorktreeError> {
    std::fs::create_dir_all(to).map_err(io("create", to))?;
    for entry in std::fs::read_dir(from).map_err(io("read", from))?.flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            copy_dir(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).map_err(io("copy", &src))?;
        }
    }
    Ok(())
}

/// Takes back what a failed create made.
fn undo_create(wt: &Worktree) {
    let _ = std::fs::remove_dir_all(&wt.path);
    let _ = std::fs::remove_dir_all(&wt.admin);
    let _ = std::fs::remove_file(wt.git_dir.join("refs/heads").join(&wt.branch));
}

/// The paths `git status` reports changed or untracked in the main tree.
fn dirty_paths(git: &Git, top: &Path, git_dir: &Path) -> Result<Vec<String>, WorktreeError> {
    let out = git.in_tree(
        "status",
        top,
        &git_dir.join("index"),
        // Never into a nested repository: git would run its config.
        &[
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=all",
        ],
    )?;
    Ok(status_paths(&out)
        .into_iter()
        .filter(|p| !p.starts_with(north_tools::repo::STATE_DIR))
        .collect())
}

/// Copies `paths` (relative) from `from` to `to` as they are now: a file
/// gone from `from` is removed from `to`; links are not followed.
fn copy_paths(from: &Path, to: &Path, paths: &[String]) -> Result<(), WorktreeError> {
    for rel in paths {
        let (src, dst) = (from.join(rel), to.join(rel));
        // Never write through a link the checkout made.
        if crate::changes::through_link(to, rel) {
            continue;
        }
        match std::fs::symlink_metadata(&src) {
            Ok(meta) if meta.is_file() => {
                if let Some(dir) = dst.parent() {
                    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
                }
                let _ = std::fs::remove_file(&dst);
                std::fs::copy(&src, &dst).map_err(io("copy", &src))?;
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&src).map_err(io("read", &src))?;
                let _ = std::fs::remove_file(&dst);
                std::os::unix::fs::symlink(target, &dst).map_err(io("link", &dst))?;
            }
            Ok(_) => {}
            Err(_) => {
                let _ = std::fs::remove_file(&dst);
            }
        }
    }
    Ok(())
}

/// Copies the ignored files `.worktreeinclude` names (gitignore patterns)
/// into the new worktree: a `.env` the work needs and git never carries.
fn copy_included(git: &Git, top: &Path, git_dir: &Path, to: &Path) -> Result<(), WorktreeError> {
    let list = top.join(INCLUDE_FILE);
    if !std::fs::symlink_metadata(&list).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let mut builder = ignore::gitignore::GitignoreBuilder::new(top);
    if let Some(e) = builder.add(&list) {
        tracing::warn!(error = %e, "a line of .worktreeinclude was not understood");
    }
    let Ok(patterns) = builder.build() else {
        return Ok(());
    };
    let out = git.in_tree(
        "ls-files",
        top,
        &git_dir.join("index"),
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
        ],
    )?;
    let wanted: Vec<String> = out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !p.starts_with(north_tools::repo::STATE_DIR))
        .filter(|p| {
            patterns
                .matched_path_or_any_parents(Path::new(p), false)
                .is_ignore()
        })
        .filter(|p| {
            std::fs::symlink_metadata(top.join(p))
                .is_ok_and(|m| m.is_file() && m.len() <= MAX_INCLUDED)
        })
        .collect();
    copy_paths(top, to, &wanted)
}
