//! Read-side profiles over the same implementations: the runtime-contracts
//! `fs.read_text` and `fs.list_dir`, and the mesh `read`.

use std::io::Read;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::describe;
use crate::repo;
use crate::tool::{Failure, Handler, ToolContext};

use super::context::language_of;
use super::nav::{MAX_LIST_ENTRIES, list_dir};

/// Largest `max_bytes` `fs.read_text` honours.
const READ_TEXT_CAP: u64 = 1_000_000;
/// The mesh's output truncation (characters).
pub const MESH_MAX_OUTPUT: usize = 4000;

fn default_max_bytes() -> u64 {
    20_000
}

fn default_dir() -> String {
    ".".to_owned()
}

fn default_max_entries() -> u64 {
    200
}

/// Arguments of `fs.read_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadTextArgs {
    /// File path relative to the sandbox root.
    pub path: String,
    /// Max bytes returned.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
}

/// Arguments of `fs.list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory relative to the sandbox root.
    #[serde(default = "default_dir")]
    pub path: String,
    /// Max entries returned.
    #[serde(default = "default_max_entries")]
    pub max_entries: u64,
}

/// Arguments of the mesh `read` tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeshReadArgs {
    /// File path relative to the working directory.
    pub path: String,
}

/// Reads at most `max` bytes of a text file: `(text, size, truncated)`.
fn read_prefix(
    ctx: &ToolContext,
    path: &str,
    max: u64,
) -> Result<(String, String, u64, bool), Failure> {
    let resolved = ctx.sandbox()?.resolve_readable(path)?;
    let meta = std::fs::metadata(&resolved.abs)
        .map_err(|e| Failure::new(format!("cannot read {path}: {e}")))?;
    if !meta.is_file() {
        return Err(Failure::new(format!("{} is not a file", resolved.rel)));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&resolved.abs)
        .and_then(|f| f.take(max).read_to_end(&mut bytes))
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", resolved.rel)))?;
    if repo::is_binary(&bytes) {
        return Err(Failure::new(format!("{} is a binary file", resolved.rel)));
    }
    let truncated = meta.len() > bytes.len() as u64;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        // A cut in the middle of a character, or a non-UTF-8 file.
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Ok((resolved.rel, text, meta.len(), truncated))
}

/// `fs.read_text`.
pub(crate) struct FsReadText;

impl Handler for FsReadText {
    type Args = ReadTextArgs;
    const NAME: &'static str = "fs.read_text";
    const DESCRIPTION: &'static str =
        "Read a text file under the sandbox root. Returns {path, text, size, truncated}.";
    fn intent(args: &Value) -> String {
        describe::reading(args)
    }

    fn run(&self, args: ReadTextArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let max = args.max_bytes.clamp(1, READ_TEXT_CAP);
        let (path, text, size, truncated) = read_prefix(ctx, &args.path, max)?;
        Ok(json!({ "path": path, "text": text, "size": size, "truncated": truncated }))
    }
}

/// `fs.list_dir`.
pub(crate) struct FsListDir;

impl Handler for FsListDir {
    type Args = ListDirArgs;
    const NAME: &'static str = "fs.list_dir";
    const DESCRIPTION: &'static str = "List a directory under the sandbox root (gitignore-aware). Returns {path, entries:[{name, type, size}], truncated}.";
    fn intent(args: &Value) -> String {
        format!("Listing `{}`", describe::arg(args, "path").unwrap_or("."))
    }

    fn run(&self, args: ListDirArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let sandbox = ctx.sandbox()?;
        let max = (args.max_entries as usize).clamp(1, MAX_LIST_ENTRIES);
        let (entries, truncated) = list_dir(&sandbox, &args.path, max)?;
        let path = sandbox.resolve_existing(&args.path)?.rel;
        let entries: Vec<Value> = entries
            .into_iter()
            .map(|e| match e.size {
                Some(size) => json!({ "name": e.name, "type": e.kind, "size": size }),
                None => json!({ "name": e.name, "type": e.kind }),
            })
            .collect();
        Ok(json!({ "path": path, "entries": entries, "truncated": truncated }))
    }
}

/// The role of a file in a project, for the mesh `read` metadata:
/// `test`, `docs`, `config`, `source` or `other`.
pub fn file_role(path: &str) -> &'static str {
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let in_dir = |d: &str| lower.starts_with(&format!("{d}/")) || lower.contains(&format!("/{d}/"));
    if in_dir("tests")
        || in_dir("test")
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
    {
        "test"
    } else if matches!(ext, "md" | "markdown" | "rst" | "txt" | "adoc")
        || in_dir("docs")
        || name.starts_with("readme")
    {
        "docs"
    } else if matches!(
        ext,
        "toml" | "yaml" | "yml" | "json" | "ini" | "cfg" | "lock" | "env" | "conf"
    ) || matches!(
        name,
        "makefile" | "dockerfile" | ".gitignore" | ".editorconfig"
    ) {
        "config"
    } else if language_of(ext).is_some() {
        "source"
    } else {
        "other"
    }
}

/// The mesh `read` tool, with the policy's file size limit.
pub(crate) struct MeshRead {
    pub max_file_size: u64,
}

impl Handler for MeshRead {
    type Args = MeshReadArgs;
    const NAME: &'static str = "read";
    const DESCRIPTION: &'static str =
        "Read a file. Returns {meta:{path, ext, size, role}, content} (content cut at 4000 chars).";
    fn intent(args: &Value) -> String {
        describe::reading(args)
    }

    fn run(&self, args: MeshReadArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let resolved = ctx.sandbox()?.resolve_readable(&args.path)?;
        let size = std::fs::metadata(&resolved.abs)
            .map(|m| m.len())
            .unwrap_or(0);
        if size > self.max_file_size {
            return Err(Failure::new(format!(
                "{} is {size} bytes, over the policy's max_file_size of {}",
                resolved.rel, self.max_file_size
            )));
        }
        let (path, text, size, _) = read_prefix(ctx, &args.path, self.max_file_size)?;
        let content: String = text.chars().take(MESH_MAX_OUTPUT).collect();
        let name = path.rsplit('/').next().unwrap_or(&path);
        let ext = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => format!(".{ext}"),
            _ => String::new(),
        };
        Ok(json!({
            "meta": { "path": path, "ext": ext, "size": size, "role": file_role(&path) },
            "content": content,
        }))
    }
}
