//! Skills (the Agent Skills format): folders holding a `SKILL.md` whose
//! front matter gives a `name` and a `description`. The model always sees
//! each skill's name and description (a line each in the system prompt);
//! the body — and the files beside it — load only when it calls the
//! `skill` tool.
//!
//! Found in `~/.config/north/skills/` (yours) and, in a trusted project
//! only, `.north/skills/`, `.claude/skills/` and `.agents/skills/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use north_tools::{Tool, ToolContext};
use serde_json::{Value, json};

/// The project directories skills are read from (trusted projects only).
pub(crate) const PROJECT_SKILL_DIRS: &[&str] =
    &[".north/skills", ".claude/skills", ".agents/skills"];

/// Characters of a description the model sees (about 100 tokens).
pub const MAX_DESCRIPTION: usize = 400;

/// The largest `SKILL.md` (or file beside it) read, in bytes.
const MAX_FILE: u64 = 512 * 1024;

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name.
    pub name: String,
    /// When it applies (what the model always sees).
    pub description: String,
    /// Its instructions (loaded on demand).
    pub body: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Where it was found, for `/skills` lists: `yours` or the project dir.
    pub source: String,
}

/// The skills available.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    skills: Vec<Skill>,
    /// Skills not taken, one line each.
    pub ignored: Vec<String>,
}

impl SkillSet {
    /// The user's (`config_dir/skills`), then — when `trusted` — the
    /// project's; a later skill of a name replaces an earlier one.
    pub fn load(root: &Path, config_dir: Option<&Path>, trusted: bool) -> SkillSet {
        let mut set = SkillSet::default();
        if let Some(dir) = config_dir {
            set.load_dir(&dir.join("skills"), "yours", true);
        }
        for rel in PROJECT_SKILL_DIRS {
            let dir = root.join(rel);
            if !dir.is_dir() {
                continue;
            }
            if let Some(link) = north_tools::repo::linked_component(root, Path::new(rel)) {
                set.ignored.push(format!(
                    "{rel}/: {} is a link; North reads a project's skills only from real directories inside it",
                    link.display()
                ));
                continue;
            }
            if trusted {
                set.load_dir(&dir, rel, false);
            } else {
                set.ignored.push(format!(
                    "{rel}/: the project is not trusted (a skill's instructions reach the model; run `north trust` after review)"
                ));
            }
        }
        set
    }

    /// Loads the skill folders of `dir`; folders that are links are
    /// followed only in the user's own directory (`follow_links`).
    fn load_dir(&mut self, dir: &Path, source: &str, follow_links: bool) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        // A project's skill folder that is a link is not followed: its
        // files (read by the `skill` tool) would lie outside.
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                if follow_links {
                    p.is_dir()
                } else {
                    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
                }
            })
            .collect();
        folders.sort();
        for folder in folders {
            let file = folder.join("SKILL.md");
            if !file.is_file() {
                continue;
            }
            match read_skill(&file, dir) {
                Ok(mut skill) => {
                    skill.source = source.to_string();
                    self.skills.retain(|s| s.name != skill.name);
                    self.skills.push(skill);
                }
                Err(why) => self.ignored.push(format!("{}: {why}", file.display())),
            }
        }
    }

    /// The skills of an installed plugin's skill folder `dir`, each named
    /// `PLUGIN:NAME` (`${CLAUDE_PLUGIN_ROOT}` in its instructions standing
    /// for the plugin's folder `root`); and what was not taken. Folders that
    /// are links are not followed.
    pub fn plugin(dir: &Path, plugin: &str, root: &Path) -> SkillSet {
        let mut set = SkillSet::default();
        let source = format!("plugin {plugin}");
        let own = dir.join("SKILL.md");
        match dir.parent() {
            // A path to one skill's folder (Claude Code's `"skills":
            // ["./my-skill"]`), or to a folder of skills.
            Some(parent) if own.is_file() => match read_skill(&own, parent) {
                Ok(mut skill) => {
                    skill.source = source;
                    set.skills.push(skill);
                }
                Err(why) => set.ignored.push(format!("{}: {why}", own.display())),
            },
            _ => set.load_dir(dir, &source, false),
        }
        for skill in &mut set.skills {
            skill.name = format!("{plugin}:{}", skill.name);
            skill.body = crate::commands::plugin_root_in(&skill.body, root);
        }
        set
    }

    /// Adds `other`'s skills; a name already here keeps its first.
    pub fn add(&mut self, other: SkillSet) {
        for skill in other.skills {
            if self.get(&skill.name).is_none() {
                self.skills.push(skill);
            }
        }
        self.ignored.extend(other.ignored);
    }

    /// Every skill.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// What the system prompt lists: a line a skill, name and description.
    pub fn listing(&self) -> String {
        self.skills
            .iter()
            .map(|s| format!("- {}: {}", s.name, s.description))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The `skill` tool over these skills (None when there are none).
    pub fn tool(self: &Arc<Self>) -> Option<Arc<dyn Tool>> {
        (!self.is_empty()).then(|| Arc::new(SkillTool(Arc::clone(self))) as Arc<dyn Tool>)
    }
}

fn read_skill(file: &Path, dir: &Path) -> Result<Skill, String> {
    let text = crate::frontmatter::read_within(file, dir, MAX_FILE).map_err(|e| e.to_string())?;
    let doc = crate::frontmatter::parse(&text);
    let folder = file
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let name = doc.text("name").unwrap_or_else(|| folder.to_string());
    let description = doc
        .text("description")
        .ok_or("no `description` in its front matter (the model chooses skills by it)")?;
    let mut description: String = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if description.chars().count() > MAX_DESCRIPTION {
        description = description.chars().take(MAX_DESCRIPTION - 1).collect();
        description.push('…');
    }
    Ok(Skill {
        name,
        description,
        body: doc.body.trim().to_string(),
        dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        source: String::new(),
    })
}

/// `skill {"name"}`: a skill's instructions and the files beside them;
/// `skill {"name", "file"}`: one of those files.
struct SkillTool(Arc<SkillSet>);

/// The files in a skill's folder (relative, bounded), for the model to ask for.
fn files_of(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file()
                && let Ok(rel) = p.strip_prefix(dir)
                && rel != Path::new("SKILL.md")
            {
                out.push(rel.display().to_string());
            }
            if out.len() >= 200 {
                return out;
            }
        }
    }
    out.sort();
    out
}

impl Tool for SkillTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "skill".into(),
            description: "Load a skill listed under Skills in your instructions: its full instructions and the files beside them. Pass `file` to read one of those files.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill's name."},
                    "file": {"type": "string", "description": "A file of the skill's folder, as listed."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
            approval: ApprovalPolicy::None,
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn intent(&self, args: &Value) -> Option<String> {
        let name = args.get("name").and_then(Value::as_str)?;
        Some(match args.get("file").and_then(Value::as_str) {
            Some(file) => format!("Reading skill `{name}`: {file}"),
            None => format!("Loading skill `{name}`"),
        })
    }

    fn summary(&self, outcome: &ToolOutcome) -> Option<String> {
        let out = &outcome.output;
        let name = out.get("name").and_then(Value::as_str)?;
        out.get("instructions")?;
        let files = out
            .get("files")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Some(match files {
            0 => format!("loaded the skill `{name}`"),
            n => format!("loaded the skill `{name}` ({n} file(s) beside it)"),
        })
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(name) = args.get("name").and_then(Value::as_str) else {
                return ToolOutcome::err("missing `name`: the skill to load");
            };
            let Some(skill) = self.0.get(name) else {
                let names: Vec<&str> = self.0.skills().iter().map(|s| s.name.as_str()).collect();
                return ToolOutcome::err(format!(
                    "no skill `{name}`; skills: {}",
                    names.join(", ")
                ));
            };
            let shown_dir = skill.dir.strip_prefix(&ctx.root).map_or_else(
                |_| skill.dir.display().to_string(),
                |p| p.display().to_string(),
            );
            match args.get("file").and_then(Value::as_str) {
                None => ToolOutcome::ok(json!({
                    "name": skill.name,
                    "instructions": skill.body,
                    "folder": shown_dir,
                    "files": files_of(&skill.dir),
                })),
                Some(file) => read_beside(&skill.dir, file),
            }
        })
    }
}

/// A file of a skill's folder: never one outside it.
fn read_beside(dir: &Path, file: &str) -> ToolOutcome {
    let path = dir.join(file);
    let inside = std::fs::canonicalize(&path)
        .ok()
        .zip(std::fs::canonicalize(dir).ok())
        .is_some_and(|(f, d)| f.starts_with(d));
    if !inside {
        return ToolOutcome::err(format!("`{file}` is not a file of this skill"));
    }
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() && m.len() <= MAX_FILE => match std::fs::read(&path) {
            Ok(bytes) => ToolOutcome::ok(json!({
                "file": file,
                "content": String::from_utf8_lossy(&bytes),
            })),
            Err(e) => ToolOutcome::err(format!("cannot read `{file}`: {e}")),
        },
        _ => ToolOutcome::err(format!("`{file}` is not a file of at most 512 KiB")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_skill_lists_its_description_and_loads_its_body_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join(".claude/skills/pdf");
        std::fs::create_dir_all(s.join("scripts")).unwrap();
        std::fs::write(
            s.join("SKILL.md"),
            "---\nname: pdf\ndescription: Fill PDF forms\n---\n# PDF\nRun scripts/fill.py.\n",
        )
        .unwrap();
        std::fs::write(s.join("scripts/fill.py"), "print('x')\n").unwrap();
        let set = Arc::new(SkillSet::load(dir.path(), None, true));
        assert_eq!(set.listing(), "- pdf: Fill PDF forms");
        let tool = set.tool().unwrap();
        let ctx = ToolContext::for_project(dir.path().to_path_buf());
        let out = tool.call(json!({"name": "pdf"}), &ctx).await;
        assert!(out.ok);
        assert!(
            out.output["instructions"]
                .as_str()
                .unwrap()
                .contains("Run scripts/fill.py")
        );
        assert_eq!(out.output["files"], json!(["scripts/fill.py"]));
        // What the timeline says of it: the skill loaded, not "0 result(s)".
        assert_eq!(
            tool.summary(&out).unwrap(),
            "loaded the skill `pdf` (1 file(s) beside it)"
        );
        let out = tool
            .call(json!({"name": "pdf", "file": "scripts/fill.py"}), &ctx)
            .await;
        assert_eq!(out.output["content"], "print('x')\n");
        let out = tool
            .call(json!({"name": "pdf", "file": "../../../etc/passwd"}), &ctx)
            .await;
        assert!(!out.ok);
        assert!(SkillSet::load(dir.path(), None, false).is_empty());
    }
}
