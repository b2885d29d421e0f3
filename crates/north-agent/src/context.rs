//! What the model is told: the system prompt (built with north-prompt) and
//! the project card (README snippet, root tree, languages, hot files),
//! cached in `.north/cache.json` and refreshed when the repository changes.

use std::path::Path;

use north_prompt::{
    MarkdownSection, Prompt, PromptOverrides, PromptParams, PromptTemplate, RenderOptions,
    RenderedPrompt, SectionVisibility, VisibilityOverrides, template,
};
use north_protocol::State;
use north_tools::{Registry, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::store::write_atomic;

/// The project card (north.md §5.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProjectCard {
    /// Fingerprint of what the card was computed from.
    pub fingerprint: String,
    /// README excerpt.
    pub readme: String,
    /// Root entries, one per line (`dir/` for directories).
    pub tree: String,
    /// Language composition, e.g. `Rust 91%, Markdown 6%`.
    pub languages: String,
    /// Most important files, one per line.
    pub hotfiles: String,
    /// This user's mark over the rest: a cache a repository shipped (it
    /// would inject its own text into the system prompt) is recomputed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl ProjectCard {
    fn signed(&self) -> Vec<u8> {
        serde_json::to_vec(&ProjectCard {
            owner: None,
            ..self.clone()
        })
        .unwrap_or_default()
    }
}

const README_CHARS: usize = 500;

/// Root entries the card lists.
const TREE_SHOWN: usize = 40;

fn git_head(root: &Path) -> String {
    let head = std::fs::read_to_string(root.join(".git/HEAD")).unwrap_or_default();
    match head.trim().strip_prefix("ref: ") {
        Some(r) => std::fs::read_to_string(root.join(".git").join(r)).unwrap_or_default(),
        None => head,
    }
}

fn array(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .values()
            .find_map(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| v.get(*k))
}

impl ProjectCard {
    /// Loads the cached card, or computes it with the read-only tools when
    /// the repository changed (a new HEAD or a different root listing).
    pub(crate) async fn load_or_compute(tools: &Registry, ctx: &ToolContext) -> ProjectCard {
        // A registry without the read-only context tools (the mesh profile)
        // has no card to offer; it must not overwrite the cached one.
        if tools.get("list_root").is_none() {
            return ProjectCard::default();
        }
        let listing = tools.call("list_root", json!({}), ctx).await;
        let entries = array(&listing.output);
        let tree: Vec<String> = entries
            .iter()
            .take(80)
            .filter_map(|e| {
                let name = field(e, &["path", "name"])?.as_str()?;
                let dir = field(e, &["type", "kind"]).and_then(Value::as_str) == Some("dir");
                Some(if dir {
                    format!("{name}/")
                } else {
                    name.to_string()
                })
            })
            .collect();
        let fingerprint = format!(
            "{:x}",
            Sha256::digest(format!("{}\n{}", git_head(&ctx.root), tree.join("\n")).as_bytes())
        );
        // The card shows the first entries; the rest are a `find_files` away.
        let mut tree = tree;
        if entries.len() > TREE_SHOWN {
            tree.truncate(TREE_SHOWN);
            tree.push(format!("… and {} more", entries.len() - TREE_SHOWN));
        }
        let tree = tree.join("\n");
        let cache = ctx.root.join(".north").join("cache.json");
        if let Some(card) = cached(&cache, &ctx.root, &fingerprint) {
            return card;
        }
        let readme = tools.call("read_readme", json!({}), ctx).await;
        let readme: String = field(&readme.output, &["content"])
            .and_then(Value::as_str)
            .unwrap_or_default()
            .chars()
            .take(README_CHARS + 1)
            .collect();
        // Cut at a line's end: half a sentence reads as the whole story.
        let readme = match readme.char_indices().nth(README_CHARS) {
            Some((end, _)) => readme[..end]
                .rsplit_once('\n')
                .map_or(&readme[..end], |(kept, _)| kept)
                .to_string(),
            None => readme,
        };
        let langs = tools.call("detect_languages", json!({}), ctx).await;
        let languages = array(&langs.output)
            .iter()
            .take(6)
            .filter_map(|l| {
                let name = l.get("language")?.as_str()?;
                let pct = l.get("percent")?.as_f64()?;
                Some(format!("{name} {pct:.0}%"))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let hot = tools.call("hotfiles", json!({"limit": 10}), ctx).await;
        let hotfiles = array(&hot.output)
            .iter()
            .filter_map(|h| h.get("path")?.as_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join("\n");
        let mut card = ProjectCard {
            fingerprint,
            readme,
            tree,
            languages,
            hotfiles,
            owner: None,
        };
        card.save(&cache, &ctx.root);
        card
    }

    /// Marks the card as this user's North's and caches it (never through
    /// a linked state directory).
    fn save(&mut self, cache: &std::path::Path, root: &std::path::Path) {
        self.owner = north_tools::owner::mark(
            north_tools::owner::StateKind::CardCache,
            root,
            &self.signed(),
        );
        if let Some(dir) = cache.parent()
            && !north_tools::repo::state_dir_is_linked(root)
            && std::fs::create_dir_all(dir).is_ok()
            && let Ok(text) = serde_json::to_string_pretty(&*self)
            && let Err(e) = write_atomic(cache, text.as_bytes())
        {
            tracing::warn!(path = %cache.display(), error = %e, "cannot write project card cache");
        }
    }
}

/// The cached card at `cache`, when North wrote it for this fingerprint.
fn cached(
    cache: &std::path::Path,
    root: &std::path::Path,
    fingerprint: &str,
) -> Option<ProjectCard> {
    let text = std::fs::read_to_string(cache).ok()?;
    let card = serde_json::from_str::<ProjectCard>(&text).ok()?;
    // A stale card is not worth checking the mark of.
    if card.fingerprint != fingerprint {
        return None;
    }
    north_tools::owner::check(
        north_tools::owner::StateKind::CardCache,
        root,
        &card.signed(),
        card.owner.as_deref(),
    )
    .usable()
    .then_some(card)
}

/// Parameters of North's system prompt.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, PromptParams)]
pub(crate) struct SystemParams {
    /// The rules at the top (North's product rules, or an agent's role).
    pub rules: String,
    /// README excerpt.
    pub readme: String,
    /// Root entries.
    pub tree: String,
    /// Languages.
    pub languages: String,
    /// Hot files.
    pub hotfiles: String,
    /// The instruction files (`AGENTS.md`, `CLAUDE.md`, …; see
    /// [`crate::instructions`]).
    pub agents_md: String,
    /// What the model sees of a long `AGENTS.md` until it reads or opens
    /// the section: its beginning and how to get the rest.
    pub agents_md_summary: String,
    /// The skills: a line each, name and description.
    pub skills: String,
    /// The retrieved-memory block.
    pub retrieved: String,
    /// Session state (goals, decisions, ...).
    pub state: String,
    /// Whether tools travel as text blocks.
    pub text_protocol: bool,
    /// Text-protocol instructions.
    pub protocol: String,
}

/// North's product rules, the first section of the assistant's system prompt.
pub(crate) const RULES: &str = "You are North, a coding assistant working in the user's repository through tools.
- Never claim to have changed a file: propose edits with the edit tools; the user reviews a diff and accepts or rejects it. Edits match text exactly (no fuzzy matching): read the current text before editing, and on a failed anchor read more context and retry.
- Shell commands need the user's approval unless allowlisted; a denied command is final for this turn.
- Keep context small: search and read targeted line ranges instead of whole large files.
- Be brief. Say what you did and what is left.
- To update your working notes, you may end a message with <<<NOTES_JSON>>>{\"set_goals\":[..],\"add_open_loops\":[..],\"close_open_loops\":[..],\"add_decisions\":[..],\"add_constraints\":[..],\"set_episode_summary\":\"..\",\"actions\":[\"condense_smart\",\"request_permission:net\"]}<<<END_NOTES_JSON>>> (all keys optional; hidden from the user). Cite retrieved memory as [mem:<id>].";

/// Builds the system prompt template (validated once).
fn template() -> Result<PromptTemplate, north_prompt::PromptValidationError> {
    PromptTemplate::builder(SYSTEM_PROMPT_NS, SYSTEM_PROMPT_KEY)
        .name("north_system")
        .section(MarkdownSection::<SystemParams>::new("Rules", "rules", template!(SystemParams, "${rules}")))
        .section(
            MarkdownSection::<SystemParams>::new(
                "Project",
                "project",
                template!(SystemParams, "Languages: ${languages}\n\nRoot:\n${tree}\n\nHot files:\n${hotfiles}\n\nREADME (excerpt):\n${readme}"),
            )
            .enabled(|p| !p.tree.is_empty() || !p.readme.is_empty()),
        )
        .section(
            MarkdownSection::<SystemParams>::new("Project instructions", "agents", template!(SystemParams, "${agents_md}"))
                .summary("${agents_md_summary}")
                // A long AGENTS.md is disclosed progressively: its beginning
                // now, the rest through `read_section` (native tool calls
                // only; the text protocol lists no such tool).
                .visibility_with(|p| {
                    if p.agents_md.chars().count() > AGENTS_MD_INLINE && !p.text_protocol {
                        SectionVisibility::Summary
                    } else {
                        SectionVisibility::Full
                    }
                })
                .enabled(|p| !p.agents_md.trim().is_empty()),
        )
        .section(
            // Only names and descriptions: a skill's body loads when the
            // model asks for it (the `skill` tool).
            MarkdownSection::<SystemParams>::new(
                "Skills",
                "skills",
                template!(SystemParams, "When a task matches a skill, load it with the `skill` tool first and follow it.\n${skills}"),
            )
            .enabled(|p| !p.skills.trim().is_empty()),
        )
        .section(
            MarkdownSection::<SystemParams>::new("Session state", "state", template!(SystemParams, "${state}"))
                .enabled(|p| !p.state.trim().is_empty()),
        )
        .section(
            MarkdownSection::<SystemParams>::new("Memory", "memory", template!(SystemParams, "${retrieved}"))
                .enabled(|p| !p.retrieved.trim().is_empty()),
        )
        .section(
            MarkdownSection::<SystemParams>::new("Tool protocol", "protocol", template!(SystemParams, "${protocol}"))
                .enabled(|p| p.text_protocol),
        )
        .build()
}

/// The state as prompt text (empty when there is nothing).
pub fn state_text(state: &State) -> String {
    let mut out = Vec::new();
    let list = |name: &str, items: &[String]| {
        (!items.is_empty()).then(|| {
            format!(
                "{name}:\n{}",
                items
                    .iter()
                    .map(|i| format!("- {i}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
    };
    out.extend(list("Goals", &state.goals));
    out.extend(list("Open loops", &state.open_loops));
    out.extend(list("Decisions", &state.decisions));
    out.extend(list("Constraints", &state.constraints));
    if !state.episode_summary.is_empty() {
        out.push(format!(
            "Summary of the session so far:\n{}",
            state.episode_summary
        ));
    }
    if !state.capabilities_granted.is_empty() {
        out.push(format!(
            "Capabilities granted: {}",
            state
                .capabilities_granted
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.join("\n\n")
}

/// The namespace of North's system prompt, for [`PromptOverrides`].
pub const SYSTEM_PROMPT_NS: &str = "north/assistant";
/// The key of North's system prompt, for [`PromptOverrides`].
pub const SYSTEM_PROMPT_KEY: &str = "system";

/// Why the system prompt could not be built. The turn stops: a model must
/// never receive an empty or partial system prompt.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SystemPromptError {
    /// North's own template is invalid (a bug in North).
    #[error("North's system prompt template is invalid: {0}")]
    Template(#[from] north_prompt::PromptValidationError),
    /// Rendering failed, e.g. an override names a field that does not exist.
    #[error("the system prompt could not be rendered: {0}")]
    Render(#[from] north_prompt::PromptRenderError),
}

/// Renders the system prompt with the sections the session opened
/// (`visibility`): the text, and the disclosure tools (`read_section`,
/// `open_sections`) when a section is shown as a summary.
pub(crate) fn render_system_prompt(
    params: SystemParams,
    overrides: Option<&PromptOverrides>,
    visibility: &VisibilityOverrides,
) -> Result<RenderedPrompt, SystemPromptError> {
    let prompt = Prompt::new(template()?).bind(params);
    let mut options = RenderOptions::new().visibility(visibility);
    if let Some(o) = overrides {
        options = options.overrides(o);
    }
    Ok(prompt.render_with(&options)?)
}

/// Characters of `AGENTS.md` shown in full; past this the section is a
/// summary the model can expand.
pub(crate) const AGENTS_MD_INLINE: usize = 4_000;
/// The summary of a long `AGENTS.md`: its first [`AGENTS_MD_INLINE`]
/// characters and how to read the rest (empty when it is short).
pub(crate) fn agents_md_summary(agents_md: &str) -> String {
    let total = agents_md.chars().count();
    if total <= AGENTS_MD_INLINE {
        return String::new();
    }
    let head: String = agents_md.chars().take(AGENTS_MD_INLINE).collect();
    format!(
        "{head}\n\n[The instructions continue for {} more characters.]",
        total - AGENTS_MD_INLINE
    )
}
