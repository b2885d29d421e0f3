//! Custom slash commands: markdown files in `.north/commands/` (the
//! project's) and `commands/` in North's config dir (yours), as Claude Code
//! and opencode have them. The file name is the command (`review.md` →
//! `/review`); the body is a prompt template where `$ARGUMENTS` stands for
//! what follows the command. An optional front matter block may give a
//! `description:` for the palette.

use std::path::{Path, PathBuf};

/// Where a custom command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScope {
    /// The project's `.north/commands/`.
    Project,
    /// The user's config dir.
    User,
    /// An installed plugin's `commands/` (`/PLUGIN:NAME`).
    Plugin,
}

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// The command with its slash (`/review`).
    pub name: String,
    /// One line for the palette.
    pub description: String,
    /// The prompt template.
    pub template: String,
    /// Where it was found.
    pub scope: CommandScope,
    /// The file it came from.
    pub path: PathBuf,
}

/// The largest command file read, in bytes.
const MAX_FILE: u64 = 256 * 1024;

impl CustomCommand {
    /// The prompt for this command followed by `arguments`: `$ARGUMENTS`
    /// replaced, or the arguments appended on their own line when the
    /// template does not use them.
    pub fn expand(&self, arguments: &str) -> String {
        let arguments = arguments.trim();
        if self.template.contains("$ARGUMENTS") {
            self.template.replace("$ARGUMENTS", arguments)
        } else if arguments.is_empty() {
            self.template.clone()
        } else {
            format!("{}\n\n{arguments}", self.template.trim_end())
        }
    }
}

/// The prompt `text` stands for when it starts with one of `commands`
/// (`/review src/a.rs` → the template with its arguments); `None` when it
/// names none.
pub fn expand_in(commands: &[CustomCommand], text: &str) -> Option<String> {
    let text = text.trim_start();
    let word = text.split_whitespace().next()?;
    let custom = commands.iter().find(|c| c.name == word)?;
    Some(custom.expand(text[word.len()..].trim()))
}

/// Splits an optional `---` front matter block off `text`: (description,
/// body).
fn front_matter(text: &str) -> (Option<String>, &str) {
    let doc = crate::frontmatter::parse(text);
    (doc.text("description"), doc.body)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
}

/// The commands of an installed plugin's command folder `dir`, each named
/// `/PLUGIN:NAME` as Claude Code names them, with `${CLAUDE_PLUGIN_ROOT}`
/// in their text standing for the plugin's folder `root`.
pub fn load_plugin(dir: &Path, plugin: &str, root: &Path) -> Vec<CustomCommand> {
    let mut out = Vec::new();
    match dir.parent() {
        // A path to one command file (`"commands": ["./cmds/x.md"]`).
        Some(parent) if dir.is_file() => {
            load_dir(parent, CommandScope::Plugin, &mut out);
            out.retain(|c| c.path == dir);
        }
        _ => load_tree(dir, "", 0, &mut out),
    }
    for c in &mut out {
        c.name = format!("/{plugin}:{}", c.name.trim_start_matches('/'));
        c.template = plugin_root_in(&c.template, root);
    }
    out
}

/// The commands of a plugin's folder `dir` and of its subfolders, a
/// subfolder's named `SUB:NAME` (Claude Code's namespacing), three deep at
/// most; folders that are links are not followed.
fn load_tree(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<CustomCommand>) {
    let mut here = Vec::new();
    load_dir(dir, CommandScope::Plugin, &mut here);
    for mut c in here {
        c.name = format!("/{prefix}{}", c.name.trim_start_matches('/'));
        out.push(c);
    }
    if depth >= 3 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subs.sort();
    for sub in subs {
        if let Some(name) = sub
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| valid_name(n))
        {
            load_tree(&sub, &format!("{prefix}{name}:"), depth + 1, out);
        }
    }
}

/// `text` with Claude Code's `${CLAUDE_PLUGIN_ROOT}` replaced by `root`.
pub fn plugin_root_in(text: &str, root: &Path) -> String {
    text.replace("${CLAUDE_PLUGIN_ROOT}", &root.display().to_string())
}

/// `builtin` and `taken` names skipped from `extra`, which is added to
/// `all` (plugins' commands after the user's and the project's).
pub fn add_commands(all: &mut Vec<CustomCommand>, extra: Vec<CustomCommand>, builtin: &[&str]) {
    for c in extra {
        if builtin.contains(&c.name.as_str()) || all.iter().any(|o| o.name == c.name) {
            continue;
        }
        all.push(c);
    }
}

fn load_dir(dir: &Path, scope: CommandScope, out: &mut Vec<CustomCommand>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if !valid_name(name) {
            tracing::warn!(file = %path.display(), "custom command name must be letters, digits, `-`, `_` or `:`");
            continue;
        }
        // A command file is read like any of the project's: never through
        // a link that leads out of its directory.
        let text = match crate::frontmatter::read_within(&path, dir, MAX_FILE) {
            Ok(text) => text,
            Err(why) => {
                tracing::warn!(file = %path.display(), "custom command file skipped: {why}");
                continue;
            }
        };
        let (description, body) = front_matter(&text);
        let description = description.unwrap_or_else(|| {
            body.lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .chars()
                .take(80)
                .collect()
        });
        out.push(CustomCommand {
            name: format!("/{name}"),
            description,
            template: body.to_string(),
            scope,
            path,
        });
    }
}

/// The custom commands of `root` and of the user's `config_dir` (North's
/// config directory). In a trusted project a project command shadows a
/// user command of the same name; in an untrusted one the user's wins.
/// Names of North's own commands (`builtin`) are skipped, and so is a
/// project command directory reached through a link.
pub fn load(
    root: &Path,
    config_dir: Option<&Path>,
    builtin: &[&str],
    project_trusted: bool,
) -> Vec<CustomCommand> {
    let mut project = Vec::new();
    if north_tools::repo::linked_component(root, Path::new(".north/commands")).is_some() {
        tracing::warn!(
            "the project's .north/commands is reached through a link; its commands are skipped"
        );
    } else {
        load_dir(
            &root.join(".north/commands"),
            CommandScope::Project,
            &mut project,
        );
    }
    let mut user = Vec::new();
    if let Some(dir) = config_dir {
        load_dir(&dir.join("commands"), CommandScope::User, &mut user);
    }
    let ordered: Vec<CustomCommand> = if project_trusted {
        project.into_iter().chain(user).collect()
    } else {
        user.into_iter().chain(project).collect()
    };
    let mut all: Vec<CustomCommand> = Vec::new();
    add_commands(&mut all, ordered, builtin);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_take_arguments_and_front_matter_describes() {
        let dir = tempfile::tempdir().unwrap();
        let cmds = dir.path().join(".north/commands");
        std::fs::create_dir_all(&cmds).unwrap();
        std::fs::write(
            cmds.join("review.md"),
            "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs.\n",
        )
        .unwrap();
        std::fs::write(cmds.join("plain.md"), "# Explain the build\nExplain it.\n").unwrap();
        std::fs::write(cmds.join("help.md"), "shadowed by the builtin").unwrap();
        std::fs::write(cmds.join("bad name.md"), "skipped").unwrap();
        let user = dir.path().join("user");
        std::fs::create_dir_all(user.join("commands")).unwrap();
        std::fs::write(user.join("commands/review.md"), "the user's, shadowed").unwrap();
        std::fs::write(user.join("commands/mine.md"), "Mine: $ARGUMENTS").unwrap();
        let all = load(dir.path(), Some(&user), &["/help"], true);
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["/plain", "/review", "/mine"]);
        assert_eq!(all[1].description, "Review a file");
        assert_eq!(all[1].expand("src/lib.rs"), "Review src/lib.rs for bugs.\n");
        assert_eq!(all[0].description, "Explain the build");
        assert_eq!(
            all[0].expand("fast"),
            "# Explain the build\nExplain it.\n\nfast"
        );
        assert_eq!(all[2].scope, CommandScope::User);
        // An untrusted project's command never shadows the user's.
        let untrusted = load(dir.path(), Some(&user), &["/help"], false);
        let review = untrusted.iter().find(|c| c.name == "/review").unwrap();
        assert_eq!(review.scope, CommandScope::User);
    }

    #[test]
    fn a_command_that_links_out_of_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        let cmds = root.join(".north/commands");
        std::fs::create_dir_all(&cmds).unwrap();
        std::fs::write(dir.path().join("secret"), "SECRET").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), cmds.join("leak.md")).unwrap();
        assert!(load(&root, None, &[], true).is_empty());
    }

    #[test]
    fn a_plugins_commands_are_namespaced_by_plugin_and_subfolder() {
        let dir = tempfile::tempdir().unwrap();
        let cmds = dir.path().join("commands");
        std::fs::create_dir_all(cmds.join("frontend")).unwrap();
        std::fs::write(
            cmds.join("review.md"),
            "Review ${CLAUDE_PLUGIN_ROOT}/x $ARGUMENTS",
        )
        .unwrap();
        std::fs::write(cmds.join("frontend/component.md"), "Make a component").unwrap();
        std::os::unix::fs::symlink("/etc", cmds.join("linked")).unwrap();
        let all = load_plugin(&cmds, "kit", Path::new("/plugins/kit"));
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["/kit:review", "/kit:frontend:component"]);
        assert_eq!(all[0].template, "Review /plugins/kit/x $ARGUMENTS");
        let one = load_plugin(&cmds.join("review.md"), "kit", Path::new("/p"));
        assert_eq!(one.len(), 1);
    }
}
