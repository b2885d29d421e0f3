//! `-w [NAME]`: a session in a git worktree of its own. The worktree is
//! made (or North's of that name found again) before the project opens,
//! and the project is then the worktree: its sessions, undo, sandbox and
//! trust are the worktree's. `--resume ID` of a session that ran in one of
//! North's worktrees goes back into it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use north_agent::store::SessionStore;
use north_protocol::{Event, HookEvent};
use north_worktree::{CreateRequest, DirtyPolicy, Owner, Worktree};

/// Options that put a session in a worktree.
#[derive(Debug, Clone, Default, Args)]
pub struct WorktreeArgs {
    /// Run the session in a git worktree of its own, beside the repository
    /// (`<repo>.worktrees/NAME`, branch `north/NAME`); North's worktree of
    /// that name is entered again. Without NAME North names it (then put
    /// a prompt after `--`).
    #[arg(short = 'w', long = "worktree", value_name = "NAME", num_args = 0..=1,
          default_missing_value = "")]
    pub worktree: Option<String>,
    /// With -w: the commit or branch a new worktree starts from [default: HEAD].
    #[arg(long, value_name = "REF", requires = "worktree")]
    pub worktree_base: Option<String>,
    /// With -w: carry the working tree's uncommitted changes into a new
    /// worktree (a tree with changes is refused otherwise).
    #[arg(long, requires = "worktree")]
    pub worktree_copy: bool,
}

/// The worktree a run entered, and whether it was made now.
pub struct Entered {
    /// The worktree.
    pub worktree: Worktree,
    /// Made by this run (its `WorktreeCreate` hooks are due).
    pub created: bool,
}

impl WorktreeArgs {
    /// Makes or finds the worktree `-w` asks for, from the project at
    /// `path` (else the current directory); None without `-w`.
    pub fn enter(&self, path: Option<&Path>) -> anyhow::Result<Option<Entered>> {
        let Some(name) = &self.worktree else {
            return Ok(None);
        };
        let from = match path {
            Some(p) => p.to_path_buf(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let req = CreateRequest {
            from,
            name: (!name.is_empty()).then(|| name.clone()),
            base: self.worktree_base.clone(),
            dirty: if self.worktree_copy {
                DirtyPolicy::Copy
            } else {
                DirtyPolicy::Refuse
            },
            owner: Owner::Session,
        };
        let (worktree, created) = north_runtime::worktrees::enter(&req).map_err(|e| {
            let hint = if name.contains(' ') {
                " (to let North name the worktree, put the prompt after `--`)"
            } else {
                ""
            };
            anyhow::anyhow!("{e}{hint}")
        })?;
        if !created && (self.worktree_base.is_some() || self.worktree_copy) {
            eprintln!(
                "north: worktree {} exists: entered as it is (--worktree-base and --worktree-copy shape a new one)",
                worktree.name
            );
        }
        eprintln!(
            "north: {} worktree {} at {} (branch {})",
            if created { "new" } else { "in" },
            worktree.name,
            worktree.path.display(),
            worktree.branch
        );
        Ok(Some(Entered { worktree, created }))
    }
}

/// The worktree of North's a session `id` ran in, when it is not a
/// session of the project at `path` itself: `--resume` goes back there.
pub fn resumed_in(path: Option<&Path>, id: &str) -> Option<Worktree> {
    let cwd = std::env::current_dir().ok()?;
    let root = north_tools::repo::resolve_root(path, &cwd).ok()?;
    if SessionStore::new(&root).resolve(id).is_ok() {
        return None;
    }
    let registry = north_runtime::worktrees::registry()?;
    let found = registry
        .of_repo(&root)
        .into_iter()
        .find(|wt| SessionStore::new(&wt.path).resolve(id).is_ok())?;
    eprintln!(
        "north: session {id} ran in worktree {} ({}); resuming there",
        found.name,
        found.path.display()
    );
    Some(found)
}

/// The project path a run uses: the worktree's when it entered one, else
/// the one the flags name.
pub fn project_path(
    wt: &WorktreeArgs,
    path: Option<&PathBuf>,
    resume: Option<&String>,
) -> anyhow::Result<(Option<PathBuf>, Option<Entered>)> {
    if let Some(entered) = wt.enter(path.map(PathBuf::as_path))? {
        return Ok((Some(entered.worktree.path.clone()), Some(entered)));
    }
    let back = resume.and_then(|id| resumed_in(path.map(PathBuf::as_path), id));
    Ok((back.map(|w| w.path).or_else(|| path.cloned()), None))
}

/// Runs the `WorktreeCreate` hooks of a worktree this run made (before
/// the session's runtime): a hook that says no takes the worktree back and
/// ends the run.
pub fn created_hooks(project: &north_runtime::Project, entered: &Entered) -> anyhow::Result<()> {
    if !entered.created {
        return Ok(());
    }
    run_hooks(|emit| {
        Box::pin(project.worktree_hooks(HookEvent::WorktreeCreate, &entered.worktree, "", emit))
    })
}

/// Each hook's line (a block, a failure) on stderr, as `exec` prints them.
fn print_hook(event: Event) {
    if let Event::Hook {
        event,
        command,
        outcome,
        message,
    } = event
        && let Some(line) = north_protocol::hook_line(event, &command, outcome, message.as_deref())
    {
        eprintln!("north: {line}");
    }
}

/// Runs worktree hooks in a runtime of their own.
pub fn run_hooks<'a>(
    fire: impl FnOnce(
        &'a (dyn Fn(Event) + Send + Sync),
    ) -> futures::future::BoxFuture<'a, Result<(), north_runtime::RuntimeError>>,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(fire(&print_hook))?;
    Ok(())
}
