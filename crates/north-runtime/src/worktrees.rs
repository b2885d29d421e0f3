//! The worktrees North runs sessions and sub-agents in (`north-worktree`
//! makes them): where North keeps its record of them, the one made or
//! found for `-w`, a sub-agent's own (its tools, shell and modes rooted
//! there), and the `WorktreeCreate` / `WorktreeRemove` hooks around them.

use std::path::Path;
use std::sync::Arc;

use north_protocol::{Event, HookEvent};
use north_worktree::{CreateRequest, DirtyPolicy, Owner, Registry, Worktree};

use crate::RuntimeError;
use crate::project::Project;

pub use crate::worktree_record::{owned, registry};

/// North's record, and the main tree of the repository `root` is in (a
/// front end's `/worktree` and `north worktree`): an error from inside a
/// worktree, whose repository's main tree is elsewhere.
pub fn of_repository(root: &Path) -> Result<(Registry, std::path::PathBuf), RuntimeError> {
    let (top, _) = north_tools::git::repository_of(root)
        .map_err(|_| north_worktree::WorktreeError::NotARepository(root.to_path_buf()))?;
    let registry = registry().ok_or(RuntimeError::NoDataDir)?;
    Ok((registry, top))
}

/// The worktree a session started with `-w` runs in: North's worktree of
/// that name when there is one (a resumed session goes back into it), else
/// a new one. `created` says which. A new worktree of a trusted
/// repository is trusted too (its settings are the repository's own at
/// `base`); its later changes are judged like any project's.
pub fn enter(req: &CreateRequest) -> Result<(Worktree, bool), RuntimeError> {
    let registry = registry().ok_or(RuntimeError::NoDataDir)?;
    let from = std::fs::canonicalize(&req.from).map_err(RuntimeError::CurrentDir)?;
    if let (Some(name), Ok((top, _))) = (&req.name, north_tools::git::repository_of(&from))
        && let Ok(found) = registry.named(&top, name)
    {
        return Ok((found, false));
    }
    let req = CreateRequest {
        from,
        ..req.clone()
    };
    let wt = north_worktree::create(&req, &registry)?;
    // Trust carries over only to the same settings: a worktree of another
    // revision (`--worktree-base`) whose settings differ is asked about.
    if let Some(store) = north_agent::trust::TrustStore::user()
        && let (Ok(main), Ok(new)) = (store.evaluate(&wt.repo), store.evaluate(&wt.path))
        && store.chosen(&main)
        && main.fingerprint == new.fingerprint
    {
        store.trust(&wt.path)?;
    }
    Ok((wt, true))
}

/// The hooks of the project at `root` as a session there would run them
/// (its trust decided, nothing asked), for a command that opens no
/// session (`north worktree remove`); None when it has none.
pub fn project_hooks(root: &Path) -> Result<Option<north_agent::hooks::Hooks>, RuntimeError> {
    let mut notices = Vec::new();
    let (trust, _) = crate::project::decide_trust(root, false, None, &mut notices)?;
    let sandbox = crate::SandboxChoice::for_project(root, None);
    Ok(crate::hooking::loaded_hooks(
        root,
        trust.applies(),
        &sandbox,
        &[],
    ))
}

/// Runs `hooks`' `event` hooks for `wt`. A `WorktreeCreate` hook that
/// blocks (exit 2) takes the worktree back: it is removed, and the reason
/// returned.
pub async fn fire(
    hooks: &north_agent::hooks::Hooks,
    event: HookEvent,
    wt: &Worktree,
    session_id: &str,
    emit: &(dyn Fn(Event) + Send + Sync),
) -> Result<(), RuntimeError> {
    if hooks.set().matching(event, None).is_empty() {
        return Ok(());
    }
    let said = hooks
        .fire_outside_turn(event, session_id, wt.hook_fields(), emit)
        .await;
    match said {
        Err(reason) => {
            if event == HookEvent::WorktreeCreate
                && let Some(registry) = registry()
            {
                let _ = north_worktree::remove(wt, &registry, true);
            }
            Err(RuntimeError::WorktreeRefused(reason.reason))
        }
        Ok(()) => Ok(()),
    }
}

impl Project {
    /// Runs this project's `event` hooks for `wt` (see [`fire`]).
    pub async fn worktree_hooks(
        &self,
        event: HookEvent,
        wt: &Worktree,
        session_id: &str,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> Result<(), RuntimeError> {
        fire(&self.hooks(), event, wt, session_id, emit).await
    }

    /// The tools' context rooted at `root` (a sub-agent's worktree): its
    /// own shell, confined to it as the project's is to the project.
    pub fn tool_context_at(&self, root: &Path) -> north_tools::ToolContext {
        let mut ctx = north_tools::ToolContext::for_project(root.to_path_buf());
        ctx.net_allowlist = self.config.net_allowlist.value.clone();
        let defs = self
            .code
            .as_ref()
            .map(|c| c.defs().to_vec())
            .unwrap_or_default();
        ctx.code = crate::language_servers::at(root, defs, &self.sandbox, &self.grants)
            .map(|c| c as Arc<dyn north_tools::services::Code>);
        let spawner = self.sandbox.spawner(
            root,
            &self.grants,
            north_tools::os_sandbox::ChildKind::Command,
        );
        ctx.shell = Arc::new(north_tools::shell::ShellManager::with_spawner(
            root.to_path_buf(),
            spawner,
        ));
        ctx
    }
}

/// A name for a sub-agent's worktree: the agent's, and a few random
/// letters so parallel ones differ.
fn agent_worktree_name(agent: &str) -> String {
    let stem: String = agent
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .take(40)
        .collect();
    let stem = stem.trim_start_matches('-');
    let stem = if stem.is_empty() { "agent" } else { stem };
    format!("{stem}-{:04x}", fastrand::u16(..))
}

/// How a session gives a sub-agent a worktree of its own: made from the
/// main tree as it is now (uncommitted changes carried in and committed as
/// its base), with tools, shell and modes rooted there.
pub(crate) fn isolator(project: Arc<Project>) -> north_agent::Isolator {
    Arc::new(move |agent: &str| {
        let registry = registry().ok_or_else(|| RuntimeError::NoDataDir.to_string())?;
        let mut req = CreateRequest {
            from: project.root.clone(),
            name: Some(agent_worktree_name(agent)),
            base: None,
            dirty: DirtyPolicy::Copy,
            owner: Owner::Agent {
                agent: agent.to_string(),
            },
        };
        // A name taken by chance gets another suffix.
        let mut made = north_worktree::create(&req, &registry);
        for _ in 0..3 {
            if !matches!(made, Err(north_worktree::WorktreeError::Exists(_))) {
                break;
            }
            req.name = Some(agent_worktree_name(agent));
            made = north_worktree::create(&req, &registry);
        }
        let worktree = made.map_err(|e| e.to_string())?;
        Ok(north_agent::Isolated {
            registry,
            ctx: project.tool_context_at(&worktree.path),
            kit: crate::project::mode_kit_at(&project, &worktree.path),
            worktree,
        })
    })
}
