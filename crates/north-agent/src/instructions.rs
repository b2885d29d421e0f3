//! The instruction files the model is given, read as the assistants users
//! come from read them: `AGENTS.md`, Claude Code's `CLAUDE.md` and Gemini
//! CLI's `GEMINI.md`, the user's own in their home, `@path` imports, and a
//! subdirectory's files once the model works there.
//!
//! The order, general to specific (later files refine earlier ones):
//! 1. the user's: North's `$XDG_CONFIG_HOME/north/AGENTS.md`,
//!    `~/.codex/AGENTS.md`, `~/.claude/CLAUDE.md`, `~/.gemini/GEMINI.md`;
//! 2. the project root's: `AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`,
//!    `GEMINI.md`, `CLAUDE.local.md`;
//! 3. each file's `@path` imports right after it (at most five deep);
//! 4. a subdirectory's `AGENTS.md`, `CLAUDE.md` or `GEMINI.md`, with the
//!    result of the first tool call that touches a file under it.
//!
//! A project's files (and what they import) are read with the containment
//! the model's own reads have: a link or an import that leads out of the
//! project is refused, never followed. A file read twice (a `CLAUDE.md`
//! that is a link to `AGENTS.md`, or imports it) is given once. Each file is
//! capped, and so is the whole.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// Characters read of one file.
const FILE_MAX: usize = 100_000;
/// Characters given in all (the rest is cut, and said so).
pub(crate) const TOTAL_MAX: usize = 100_000;
/// How deep imports may nest.
const IMPORT_DEPTH: usize = 5;

/// The project root's instruction files, in the order they are given.
pub const PROJECT_FILES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "GEMINI.md",
    "CLAUDE.local.md",
];

/// A subdirectory's instruction files.
const NESTED_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/// Where an instruction file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user's own, in their home or config dir.
    User,
    /// The project's.
    Project,
}

/// One instruction file the model is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// How it is named to the user and the model: a project-relative path,
    /// or `~/…` for the user's.
    pub shown: String,
    /// Whose it is.
    pub origin: Origin,
    /// The file that imported it, when it was imported.
    pub imported_by: Option<String>,
    /// Its text (capped).
    pub text: String,
}

impl InstructionFile {
    /// One line for `/status` and the start header.
    pub fn describe(&self) -> String {
        match &self.imported_by {
            Some(by) => format!("{} (imported by {by})", self.shown),
            None => self.shown.clone(),
        }
    }
}

/// Where the user's files are.
#[derive(Debug, Clone, Default)]
pub struct UserDirs {
    /// The home directory.
    pub home: Option<PathBuf>,
    /// North's config dir (`$XDG_CONFIG_HOME/north`).
    pub north_config: Option<PathBuf>,
}

impl UserDirs {
    /// From this process's environment.
    pub fn from_env() -> UserDirs {
        UserDirs {
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute()),
            north_config: north_config::global_config_path()
                .and_then(|p| p.parent().map(Path::to_path_buf)),
        }
    }
}

/// Reads the instruction files for the project at `root`, in order.
pub fn load(root: &Path, user: &UserDirs) -> Vec<InstructionFile> {
    let mut reader = Reader::new(root);
    let mut user_files: Vec<(PathBuf, String)> = Vec::new();
    if let Some(dir) = &user.north_config {
        user_files.push((dir.join("AGENTS.md"), "north config: AGENTS.md".into()));
    }
    if let Some(home) = &user.home {
        for rel in [".codex/AGENTS.md", ".claude/CLAUDE.md", ".gemini/GEMINI.md"] {
            user_files.push((home.join(rel), format!("~/{rel}")));
        }
    }
    for (path, shown) in user_files {
        reader.user_file(&path, shown);
    }
    for rel in PROJECT_FILES {
        reader.project_file(rel, None, 0);
    }
    reader.files
}

/// The instruction files of the directories between `root` and `touched`
/// (a file or directory the model worked on) not given before (`seen`
/// remembers the directories looked at).
pub fn nested(root: &Path, touched: &Path, seen: &mut HashSet<PathBuf>) -> Vec<InstructionFile> {
    let Ok(rel) = touched
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .or_else(|_| {
            if touched.is_relative() {
                Ok(touched.to_path_buf())
            } else {
                Err(())
            }
        })
    else {
        return Vec::new();
    };
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Vec::new();
    }
    // The directory itself when it is one, else the file's; up to (not
    // including) the root, which `load` read.
    let mut dirs = Vec::new();
    let mut dir = if root.join(&rel).is_dir() {
        Some(rel.as_path())
    } else {
        rel.parent()
    };
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        dirs.push(d.to_path_buf());
        dir = d.parent();
    }
    let mut reader = Reader::new(root);
    for d in dirs.into_iter().rev() {
        if !seen.insert(d.clone()) {
            continue;
        }
        for name in NESTED_FILES {
            let rel = d.join(name);
            if let Some(rel) = rel.to_str() {
                reader.project_file(rel, None, 0);
            }
        }
    }
    reader.files
}

/// The files as one section's text: a single file as it is, several each
/// under its name; cut at [`TOTAL_MAX`] characters.
pub fn render(files: &[InstructionFile]) -> String {
    let text = match files {
        [] => String::new(),
        [only] if only.origin == Origin::Project && only.imported_by.is_none() => only.text.clone(),
        many => many
            .iter()
            .map(|f| format!("From {}:\n{}", f.describe(), f.text.trim_end()))
            .collect::<Vec<_>>()
            .join("\n\n"),
    };
    if text.chars().count() <= TOTAL_MAX {
        return text;
    }
    let mut cut: String = text.chars().take(TOTAL_MAX).collect();
    cut.push_str("\n\n[Instructions cut here: they are longer than North gives the model.]");
    cut
}

/// A subdirectory's files, each under its name.
pub fn render_nested(files: &[InstructionFile]) -> String {
    files
        .iter()
        .map(|f| format!("From {}:\n{}", f.describe(), f.text.trim_end()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Reads files in order, each once, with their imports after them.
struct Reader<'a> {
    root: &'a Path,
    sandbox: Option<north_tools::Sandbox>,
    /// Canonical paths already given.
    read: HashSet<PathBuf>,
    files: Vec<InstructionFile>,
}

impl<'a> Reader<'a> {
    fn new(root: &'a Path) -> Reader<'a> {
        Reader {
            root,
            sandbox: north_tools::Sandbox::new(root).ok(),
            read: HashSet::new(),
            files: Vec::new(),
        }
    }

    /// The user's file at `path` (a regular file, or a link to one), with
    /// its imports from beside it.
    fn user_file(&mut self, path: &Path, shown: String) {
        let Ok(canonical) = std::fs::canonicalize(path) else {
            return;
        };
        if !canonical.is_file() || !self.read.insert(canonical.clone()) {
            return;
        }
        let Some(text) = read_capped(&canonical) else {
            return;
        };
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.push(InstructionFile {
            shown: shown.clone(),
            origin: Origin::User,
            imported_by: None,
            text: text.clone(),
        });
        self.user_imports(&text, &base, &shown, 1);
    }

    /// A user file's imports: inside the directory it is in.
    fn user_imports(&mut self, text: &str, base: &Path, by: &str, depth: usize) {
        if depth > IMPORT_DEPTH {
            return;
        }
        for target in imports(text) {
            let Some(rel) = contained(&target) else {
                continue;
            };
            let path = base.join(&rel);
            let Ok(canonical) = std::fs::canonicalize(&path) else {
                continue;
            };
            let Ok(base_canonical) = std::fs::canonicalize(base) else {
                continue;
            };
            if !canonical.starts_with(&base_canonical)
                || !canonical.is_file()
                || !self.read.insert(canonical.clone())
            {
                continue;
            }
            let Some(imported) = read_capped(&canonical) else {
                continue;
            };
            let shown = format!("{by} → {}", rel.display());
            self.push(InstructionFile {
                shown: shown.clone(),
                origin: Origin::User,
                imported_by: Some(by.to_string()),
                text: imported.clone(),
            });
            let next = path.parent().map(Path::to_path_buf).unwrap_or_default();
            self.user_imports(&imported, &next, &shown, depth + 1);
        }
    }

    /// The project's file at `rel` (contained like the model's reads),
    /// then what it imports.
    fn project_file(&mut self, rel: &str, imported_by: Option<&str>, depth: usize) {
        if depth > IMPORT_DEPTH {
            return;
        }
        let Some(sandbox) = &self.sandbox else {
            return;
        };
        let text = match sandbox.read_own(rel, (FILE_MAX * 4) as u64) {
            Ok(Some(t)) => t,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(file = rel, error = %e, "an instruction file was not read: it leads out of the project");
                return;
            }
        };
        let Ok(canonical) = std::fs::canonicalize(self.root.join(rel)) else {
            return;
        };
        if !self.read.insert(canonical) {
            return;
        }
        let text: String = text.chars().take(FILE_MAX).collect();
        self.push(InstructionFile {
            shown: rel.to_string(),
            origin: Origin::Project,
            imported_by: imported_by.map(str::to_string),
            text: text.clone(),
        });
        let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
        for target in imports(&text) {
            let Some(target) = contained(&target) else {
                tracing::warn!(file = rel, import = %target, "an import out of the project was refused");
                continue;
            };
            let Some(joined) = normalize(&dir.join(target)) else {
                tracing::warn!(file = rel, "an import out of the project was refused");
                continue;
            };
            if let Some(joined) = joined.to_str() {
                self.project_file(joined, Some(rel), depth + 1);
            }
        }
    }

    fn push(&mut self, file: InstructionFile) {
        if !file.text.trim().is_empty() {
            self.files.push(file);
        }
    }
}

/// A user file's text, capped (None: unreadable).
fn read_capped(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take((FILE_MAX * 4) as u64).read_to_end(&mut bytes))
        .ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .chars()
            .take(FILE_MAX)
            .collect(),
    )
}

/// `target` as a relative path that stays where it is joined (None: an
/// absolute path, a home path, or one that climbs out).
fn contained(target: &str) -> Option<PathBuf> {
    let path = Path::new(target);
    if target.starts_with('~') || path.is_absolute() {
        return None;
    }
    normalize(path)
}

/// `path` with `.` and `..` folded (None: it climbs above its start).
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The `@path` imports of a file's text, as Claude Code reads them: an `@`
/// at the start of a word followed by a path, outside code spans and code
/// blocks (an address like `me@example.com` is not one).
pub fn imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        let mut prev = ' ';
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '`' {
                in_code = !in_code;
            } else if c == '@' && !in_code && prev.is_whitespace() {
                let word: String = chars[i + 1..]
                    .iter()
                    .take_while(|c| !c.is_whitespace() && **c != '`')
                    .collect();
                let word = word.trim_end_matches(['.', ',', ';', ':', ')', ']', '!', '?']);
                if !word.is_empty() && (word.contains('/') || word.contains('.')) {
                    out.push(word.to_string());
                }
                i += word.chars().count();
            }
            prev = c;
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_words_starting_with_at_outside_code() {
        let text = "See @docs/style.md and @AGENTS.md.\nMail me@example.com, not `@code/span.md`.\n```\n@in/block.md\n```\n(@paren.md)";
        assert_eq!(imports(text), vec!["docs/style.md", "AGENTS.md"]);
    }

    #[test]
    fn paths_that_climb_out_or_start_elsewhere_are_not_contained() {
        assert_eq!(contained("a/../b.md"), Some(PathBuf::from("b.md")));
        assert_eq!(contained("../x.md"), None);
        assert_eq!(contained("/etc/passwd"), None);
        assert_eq!(contained("~/.ssh/id_rsa"), None);
        assert_eq!(normalize(Path::new("a/b/../../..")), None);
    }
}
