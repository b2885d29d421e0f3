//! Read and navigate tools: `list_root`, `find_files`, `read_file`, `read_readme`.

use std::io::{BufRead, BufReader};
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::repo;
use crate::sandbox::Sandbox;
use crate::tool::{Failure, Handler, ToolContext};

/// Most entries a listing returns.
pub(crate) const MAX_LIST_ENTRIES: usize = 1000;
/// Most lines `read_file` returns in one call.
const MAX_READ_LINES: usize = 2000;
/// Most bytes `read_file` returns in one call.
const MAX_READ_BYTES: usize = 100_000;
/// How much of a README `read_readme` returns.
const README_BYTES: usize = 8_000;
const README_LINES: usize = 200;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct DirEntry {
    pub path: String,
    pub name: String,
    pub kind: &'static str,
    pub size: Option<u64>,
}

/// Lists `dir` (one level), honouring ignore files; symlinks are reported by
/// what they point to and omitted when that is outside the root.
pub(crate) fn list_dir(
    sandbox: &Sandbox,
    dir: &str,
    max: usize,
) -> Result<(Vec<DirEntry>, bool), Failure> {
    let resolved = sandbox.resolve_existing(dir)?;
    if !resolved.abs.is_dir() {
        return Err(Failure::new(format!("{} is not a directory", resolved.rel)));
    }
    let mut entries = Vec::new();
    for entry in repo::walker(&resolved.abs)
        .max_depth(Some(1))
        .build()
        .flatten()
    {
        if entry.depth() == 0 {
            continue;
        }
        let Some(rel) = sandbox.relative(entry.path()) else {
            continue;
        };
        let meta = if entry.path_is_symlink() {
            match sandbox.resolve_existing(&rel) {
                Ok(target) => std::fs::metadata(&target.abs).ok(),
                Err(_) => None,
            }
        } else {
            entry.metadata().ok()
        };
        let Some(meta) = meta else { continue };
        let (kind, size) = if meta.is_dir() {
            ("dir", None)
        } else {
            ("file", Some(meta.len()))
        };
        entries.push(DirEntry {
            name: entry.file_name().to_string_lossy().into_owned(),
            path: rel,
            kind,
            size,
        });
    }
    entries.sort_by(|a, b| (a.kind != "dir", &a.name).cmp(&(b.kind != "dir", &b.name)));
    let truncated = entries.len() > max;
    entries.truncate(max);
    Ok((entries, truncated))
}

/// `list_root`.
pub(crate) struct ListRoot;

impl Handler for ListRoot {
    type Args = NoArgs;
    const NAME: &'static str = "list_root";
    const DESCRIPTION: &'static str =
        "List the project root's entries (gitignore-aware) as [{path, type: file|dir}].";

    fn run(&self, _args: NoArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let (entries, _) = list_dir(&ctx.sandbox()?, ".", MAX_LIST_ENTRIES)?;
        Ok(Value::Array(
            entries
                .into_iter()
                .map(|e| json!({ "path": e.path, "type": e.kind }))
                .collect(),
        ))
    }
}

/// Arguments of `find_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindFilesArgs {
    /// Glob (`*.rs`, `src/**/mod.rs`; without `/` it matches file names) or plain text matched anywhere in the path.
    pub pattern: String,
    /// Max results (default 100).
    #[serde(default)]
    pub limit: Option<u64>,
}

enum PathMatch {
    Name(GlobMatcher),
    Path(GlobMatcher),
    Substring(String),
}

impl PathMatch {
    fn new(pattern: &str) -> Result<Self, Failure> {
        if pattern.is_empty() {
            return Err(Failure::new("pattern is empty"));
        }
        if !pattern.contains(['*', '?', '[', '{']) {
            return Ok(PathMatch::Substring(pattern.to_lowercase()));
        }
        let glob = GlobBuilder::new(pattern.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| Failure::new(format!("invalid glob {pattern:?}: {e}")))?
            .compile_matcher();
        Ok(if pattern.contains('/') {
            PathMatch::Path(glob)
        } else {
            PathMatch::Name(glob)
        })
    }

    fn matches(&self, rel: &str) -> bool {
        match self {
            PathMatch::Name(g) => g.is_match(rel.rsplit('/').next().unwrap_or(rel)),
            PathMatch::Path(g) => g.is_match(rel),
            PathMatch::Substring(s) => rel.to_lowercase().contains(s.as_str()),
        }
    }
}

/// `find_files`.
pub(crate) struct FindFiles;

impl Handler for FindFiles {
    type Args = FindFilesArgs;
    const NAME: &'static str = "find_files";
    const DESCRIPTION: &'static str =
        "Find files by glob or path substring (gitignore-aware). Returns sorted paths.";

    fn run(&self, args: FindFilesArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let sandbox = ctx.sandbox()?;
        let matcher = PathMatch::new(&args.pattern)?;
        let limit = clamp_limit(args.limit, 100, 1000);
        let mut found = Vec::new();
        for entry in repo::walker(sandbox.root()).build().flatten() {
            if ctx.cancel.is_cancelled() {
                return Err(Failure::new("cancelled"));
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if let Some(rel) = sandbox.relative(entry.path())
                && matcher.matches(&rel)
            {
                found.push(rel);
            }
        }
        found.sort();
        found.truncate(limit);
        Ok(json!(found))
    }
}

pub(crate) fn clamp_limit(limit: Option<u64>, default: usize, max: usize) -> usize {
    limit.map_or(default, |l| (l as usize).clamp(1, max))
}

/// A 1-based inclusive line range.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineRange {
    /// First line (1-based).
    pub start: u64,
    /// Last line, inclusive.
    pub end: u64,
}

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File path relative to the project root.
    pub path: String,
    /// Lines to read; null reads from the top.
    #[serde(default)]
    pub range: Option<LineRange>,
}

/// What `read_file` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadOutput {
    pub path: String,
    pub content: String,
    pub start_line: usize,
    pub end_line: usize,
    pub total_lines: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Reads lines `start..=end` of a text file, streaming so huge files are fine.
pub(crate) fn read_lines(
    abs: &Path,
    rel: &str,
    start: usize,
    end: usize,
) -> Result<ReadOutput, Failure> {
    if repo::file_is_binary(abs).map_err(|e| Failure::new(format!("cannot read {rel}: {e}")))? {
        let size = std::fs::metadata(abs).map(|m| m.len()).unwrap_or(0);
        return Err(Failure::new(format!(
            "{rel} is a binary file ({size} bytes); only text can be read"
        )));
    }
    let file =
        std::fs::File::open(abs).map_err(|e| Failure::new(format!("cannot read {rel}: {e}")))?;
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut content = Vec::new();
    let (mut total, mut last, mut truncated) = (0usize, 0usize, false);
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Failure::new(format!("cannot read {rel}: {e}")))?;
        if n == 0 {
            break;
        }
        total += 1;
        if total < start || total > end || truncated {
            continue;
        }
        if total - start >= MAX_READ_LINES || content.len() + buf.len() > MAX_READ_BYTES {
            truncated = true;
            continue;
        }
        content.extend_from_slice(&buf);
        last = total;
    }
    if total > 0 && start > total {
        return Err(Failure::new(format!(
            "range.start {start} is past the end of {rel}, which has {total} lines"
        )));
    }
    let (content, note) = match String::from_utf8(content) {
        Ok(s) => (s, None),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some("not valid UTF-8; invalid bytes are shown as U+FFFD".to_owned()),
        ),
    };
    let note = match (truncated, note) {
        (true, None) => Some(format!(
            "output cut at line {last}; read more with range {{start: {}, end: ...}}",
            last + 1
        )),
        (_, note) => note,
    };
    Ok(ReadOutput {
        path: rel.to_owned(),
        content,
        start_line: if total == 0 { 0 } else { start },
        end_line: last,
        total_lines: total,
        truncated,
        note,
    })
}

/// `read_file`.
pub(crate) struct ReadFile;

impl Handler for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file, optionally lines start..=end (1-based). Returns {path, content, startLine, endLine, totalLines}; long output is cut (truncated:true).";

    fn run(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let resolved = ctx.sandbox()?.resolve_existing(&args.path)?;
        if !resolved.abs.is_file() {
            return Err(Failure::new(format!("{} is not a file", resolved.rel)));
        }
        let (start, end) = match args.range {
            None => (1, usize::MAX),
            Some(r) if r.start == 0 => {
                return Err(Failure::new(
                    "range.start must be at least 1 (lines are 1-based)",
                ));
            }
            Some(r) if r.end < r.start => {
                return Err(Failure::new(format!(
                    "range.end {} is before range.start {}",
                    r.end, r.start
                )));
            }
            Some(r) => (
                r.start as usize,
                usize::try_from(r.end).unwrap_or(usize::MAX),
            ),
        };
        let out = read_lines(&resolved.abs, &resolved.rel, start, end)?;
        Ok(serde_json::to_value(out)?)
    }
}

/// `read_readme`.
pub(crate) struct ReadReadme;

impl Handler for ReadReadme {
    type Args = NoArgs;
    const NAME: &'static str = "read_readme";
    const DESCRIPTION: &'static str =
        "Return the root README's path and an excerpt: {path, content}.";

    fn run(&self, _args: NoArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let sandbox = ctx.sandbox()?;
        let read = std::fs::read_dir(sandbox.root())
            .map_err(|e| Failure::new(format!("cannot list the root: {e}")))?;
        let mut names: Vec<String> = read
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                let lower = n.to_lowercase();
                lower == "readme" || lower.starts_with("readme.")
            })
            .collect();
        // README.md first, then a bare README, then the rest by name.
        names.sort_by_key(|n| {
            let lower = n.to_lowercase();
            (lower != "readme.md", lower != "readme", lower)
        });
        for name in names {
            let Ok(resolved) = sandbox.resolve_existing(&name) else {
                continue;
            };
            if !resolved.abs.is_file() {
                continue;
            }
            let Ok(out) = read_lines(&resolved.abs, &resolved.rel, 1, README_LINES) else {
                continue;
            };
            let mut content = out.content;
            let mut truncated = out.total_lines > README_LINES;
            if content.len() > README_BYTES {
                let mut end = README_BYTES;
                while !content.is_char_boundary(end) {
                    end -= 1;
                }
                content.truncate(end);
                truncated = true;
            }
            let mut value = json!({ "path": resolved.rel, "content": content });
            if truncated {
                value["truncated"] = json!(true);
            }
            return Ok(value);
        }
        Err(Failure::new("no README found at the project root"))
    }
}
