//! `/worktree`: North's worktrees of this repository, and one's changes
//! reviewed back into the session's tree through the session's own edit
//! review (per file and per hunk, as any edit).

use ratatui::text::{Line, Span};

use crate::approver::UiMsg;

/// North's record and the repository's main tree this session runs in.
fn registry_and_top(
    root: &std::path::Path,
) -> Result<(north_worktree::Registry, std::path::PathBuf), String> {
    north_runtime::worktrees::of_repository(root).map_err(|e| e.to_string())
}

/// `/worktree` (`list`): each worktree, what it holds to merge, its path.
pub(crate) fn list(root: &std::path::Path) -> UiMsg {
    let (registry, top) = match registry_and_top(root) {
        Ok(r) => r,
        Err(e) => return UiMsg::Failed(e),
    };
    let all = registry.of_repo(&top);
    let lines = all
        .iter()
        .map(|wt| {
            let state = north_worktree::state(wt);
            Line::from(vec![
                Span::styled(format!("{} ", wt.name), crate::style::code()),
                Span::raw(format!("{state} · {}", wt.branch)),
                Span::styled(format!("  {}", wt.path.display()), crate::style::dim()),
            ])
        })
        .collect();
    UiMsg::Info {
        title: if all.is_empty() {
            "Worktrees · none (north -w NAME starts a session in one)".into()
        } else {
            format!(
                "Worktrees · {} (/worktree merge NAME reviews one)",
                all.len()
            )
        },
        lines,
    }
}

/// `/worktree merge NAME`: its changes as one review; what happened.
pub(crate) async fn merge(
    agent: &mut north_runtime::LiveSession,
    root: &std::path::Path,
    name: &str,
    emit: &north_agent::Emit<'_>,
) -> UiMsg {
    let (registry, top) = match registry_and_top(root) {
        Ok(r) => r,
        Err(e) => return UiMsg::Failed(e),
    };
    let wt = match registry.named(&top, name) {
        Ok(wt) => wt,
        Err(e) => return UiMsg::Failed(e.to_string()),
    };
    let report = agent
        .merge_worktree(&wt, &registry, &format!("worktree-{name}"), emit)
        .await;
    let said = |key: &str| report[key].as_str().map(str::to_string);
    if let Some(error) = said("error") {
        return UiMsg::Failed(format!("worktree {name}: {error}"));
    }
    let title = match (report["changes"].as_u64(), report["accepted"].as_bool()) {
        (Some(0), _) => format!("Worktree {name} · nothing to merge"),
        (_, Some(true)) => format!("Worktree {name} · merged what you accepted"),
        (_, Some(false)) => format!("Worktree {name} · nothing written"),
        _ => format!("Worktree {name}"),
    };
    let lines = said("note")
        .into_iter()
        .map(|n| Line::from(Span::styled(n, crate::style::dim())))
        .collect();
    UiMsg::Info { title, lines }
}
