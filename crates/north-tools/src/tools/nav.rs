//! Read and navigate tools: `list_root`, `find_files`, `read_file`, `read_readme`.

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::repo;
use crate::sandbox::Sandbox;
use north_protocol::ToolKind;

use crate::describe;
use crate::tool::{Failure, Handler, ToolContext};

use super::read::read_from_offset;
pub(crate) use super::read::read_lines;

/// Most entries a listing returns.
pub(crate) const MAX_LIST_ENTRIES: usize = 1000;
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
    fn intent(args: &Value) -> String {
        let _ = args;
        "Listing the project root".into()
    }

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
    /// Glob (`*.rs`, `src/**/mod.rs`; without `/` it matches names) or text found anywhere in the path.
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
    const KIND: ToolKind = ToolKind::Search;
    fn intent(args: &Value) -> String {
        format!(
            "Finding files: `{}`",
            describe::arg(args, "pattern").unwrap_or("?")
        )
    }

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
    /// Lines to read (default: from the top).
    #[serde(default)]
    pub range: Option<LineRange>,
    /// Byte offset to start at instead of lines (a result's `nextOffset`).
    #[serde(default)]
    pub offset: Option<u64>,
}

/// `read_file`.
pub(crate) struct ReadFile;

impl Handler for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file (an image you then see; a PDF's text, range = pages), optionally lines start..=end (1-based). Long output is cut (truncated:true, with how to go on).";
    fn intent(args: &Value) -> String {
        describe::reading(args)
    }

    fn run(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let resolved = ctx.sandbox()?.resolve_readable(&args.path)?;
        if !resolved.abs.is_file() {
            return Err(Failure::new(format!("{} is not a file", resolved.rel)));
        }
        // A picture is read as a picture: the model sees it.
        if crate::media::image_media_type(&resolved.rel).is_some() {
            return read_image(&resolved.abs, &resolved.rel);
        }
        if crate::media::is_pdf_path(&resolved.rel) {
            return read_pdf(&resolved.abs, &resolved.rel, args.range);
        }
        if let Some(offset) = args.offset {
            if args.range.is_some() {
                return Err(Failure::new(
                    "give either range (lines) or offset (bytes), not both",
                ));
            }
            let out = read_from_offset(&resolved.abs, &resolved.rel, offset)?;
            return Ok(serde_json::to_value(out)?);
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

/// An image file as the agent sends it on: `image` holds the (possibly
/// scaled-down) picture, which follows the result as an image block.
fn read_image(abs: &std::path::Path, rel: &str) -> Result<Value, Failure> {
    let size = std::fs::metadata(abs).map(|m| m.len()).unwrap_or(0);
    if size > 50 * 1024 * 1024 {
        return Err(Failure::new(format!(
            "{rel} is an image of {size} bytes: over 50 MiB"
        )));
    }
    let bytes = std::fs::read(abs).map_err(|e| Failure::new(format!("cannot read {rel}: {e}")))?;
    let image =
        crate::media::prepare_image(&bytes).map_err(|e| Failure::new(format!("{rel}: {e}")))?;
    Ok(serde_json::json!({
        "path": rel,
        "width": image.width,
        "height": image.height,
        "downscaled": image.downscaled,
        "image": {"media_type": image.media_type, "data": image.data},
    }))
}

/// Characters of a PDF's text returned at once.
const PDF_CHARS: usize = 100_000;

/// A PDF's text, page by page (`range` picks pages), each page marked.
fn read_pdf(abs: &std::path::Path, rel: &str, range: Option<LineRange>) -> Result<Value, Failure> {
    let size = std::fs::metadata(abs).map(|m| m.len()).unwrap_or(0);
    if size > crate::media::MAX_PDF_BYTES as u64 {
        return Err(Failure::new(format!(
            "{rel} is a PDF of {size} bytes: over {} bytes",
            crate::media::MAX_PDF_BYTES
        )));
    }
    let bytes = std::fs::read(abs).map_err(|e| Failure::new(format!("cannot read {rel}: {e}")))?;
    let pdf = crate::media::prepare_pdf(&bytes).map_err(|e| Failure::new(format!("{rel}: {e}")))?;
    let total = pdf.pages.len();
    let (start, end) = match range {
        None => (1, total),
        Some(r) if r.start == 0 || r.end < r.start => {
            return Err(Failure::new("range is pages start..=end, 1-based"));
        }
        Some(r) => (r.start as usize, (r.end as usize).min(total)),
    };
    if start > total {
        return Err(Failure::new(format!("{rel} has {total} pages")));
    }
    let mut content = String::new();
    let mut last = start;
    for (i, page) in pdf.pages.iter().enumerate().take(end).skip(start - 1) {
        let block = format!("--- page {} ---\n{}\n", i + 1, page.trim());
        if content.len() + block.len() > PDF_CHARS && !content.is_empty() {
            break;
        }
        content.push_str(&block);
        last = i + 1;
    }
    let truncated = last < end;
    let mut out = serde_json::json!({
        "path": rel,
        "content": content,
        "startPage": start,
        "endPage": last,
        "totalPages": total,
    });
    if truncated {
        out["truncated"] = Value::Bool(true);
        out["note"] = Value::String(format!(
            "cut at {PDF_CHARS} characters: read pages {}..={end} next",
            last + 1
        ));
    }
    Ok(out)
}

/// `read_readme`.
pub(crate) struct ReadReadme;

impl Handler for ReadReadme {
    type Args = NoArgs;
    const NAME: &'static str = "read_readme";
    const DESCRIPTION: &'static str =
        "Return the root README's path and an excerpt: {path, content}.";
    fn intent(args: &Value) -> String {
        let _ = args;
        "Reading the README".into()
    }

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
