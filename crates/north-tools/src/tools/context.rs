//! Repo context helpers: `detect_languages` and `hotfiles`.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::repo;
use crate::sandbox::Sandbox;
use north_protocol::ToolKind;

use crate::tool::{Failure, Handler, ToolContext};

use super::nav::{NoArgs, clamp_limit};

/// How many recent commits `hotfiles` reads.
const HOTFILES_COMMITS: usize = 300;
/// Most languages reported.
const MAX_LANGUAGES: usize = 15;

/// Files `detect_languages` weighs, and `hotfiles` sizes when there is no
/// history: past this, the first ones walked stand for the tree (a big
/// repository's card costs no more than this; the card is computed again
/// after every commit).
const LANGUAGE_SAMPLE: usize = 5_000;

/// The language of a file extension (lowercase, without the dot).
pub fn language_of(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "rs" => "Rust",
        "py" | "pyi" => "Python",
        "js" | "mjs" | "cjs" | "jsx" => "JavaScript",
        "ts" | "tsx" | "mts" | "cts" => "TypeScript",
        "go" => "Go",
        "java" => "Java",
        "kt" | "kts" => "Kotlin",
        "swift" => "Swift",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "C++",
        "cs" => "C#",
        "rb" => "Ruby",
        "php" => "PHP",
        "scala" => "Scala",
        "hs" => "Haskell",
        "ex" | "exs" => "Elixir",
        "erl" => "Erlang",
        "clj" | "cljs" => "Clojure",
        "lua" => "Lua",
        "zig" => "Zig",
        "dart" => "Dart",
        "r" => "R",
        "jl" => "Julia",
        "ml" | "mli" => "OCaml",
        "sh" | "bash" | "zsh" => "Shell",
        "sql" => "SQL",
        "html" | "htm" => "HTML",
        "css" | "scss" | "sass" | "less" => "CSS",
        "vue" => "Vue",
        "svelte" => "Svelte",
        "md" | "markdown" => "Markdown",
        "json" => "JSON",
        "yaml" | "yml" => "YAML",
        "toml" => "TOML",
        "xml" => "XML",
        "proto" => "Protocol Buffers",
        "nix" => "Nix",
        _ => return None,
    })
}

fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    Some(ext.to_lowercase())
}

/// `detect_languages`.
pub(crate) struct DetectLanguages;

impl Handler for DetectLanguages {
    type Args = NoArgs;
    const NAME: &'static str = "detect_languages";
    const DESCRIPTION: &'static str = "Approximate language mix by file extension and size. Returns [{language, bytes, percent}].";
    const KIND: ToolKind = ToolKind::Search;
    fn intent(args: &Value) -> String {
        let _ = args;
        "Detecting languages".into()
    }

    fn run(&self, _args: NoArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let sandbox = ctx.sandbox()?;
        let mut bytes: HashMap<&'static str, u64> = HashMap::new();
        let files = repo::walker(sandbox.root())
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .take(LANGUAGE_SAMPLE);
        for entry in files {
            let name = entry.file_name().to_string_lossy();
            let Some(lang) = extension(&name).as_deref().and_then(language_of) else {
                continue;
            };
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            *bytes.entry(lang).or_default() += size;
        }
        let total: u64 = bytes.values().sum();
        let mut langs: Vec<(&str, u64)> = bytes.into_iter().collect();
        langs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        langs.truncate(MAX_LANGUAGES);
        Ok(Value::Array(
            langs
                .into_iter()
                .map(|(language, b)| {
                    let percent = if total == 0 {
                        0.0
                    } else {
                        (b as f64 * 1000.0 / total as f64).round() / 10.0
                    };
                    json!({ "language": language, "bytes": b, "percent": percent })
                })
                .collect(),
        ))
    }
}

/// Arguments of `hotfiles`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotfilesArgs {
    /// Max files (default 10).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `hotfiles`.
pub(crate) struct Hotfiles;

impl Handler for Hotfiles {
    type Args = HotfilesArgs;
    const NAME: &'static str = "hotfiles";
    const DESCRIPTION: &'static str = "Likely important files: most changed in recent git history, else the largest under src/. Returns [{path, score, reason}].";
    const KIND: ToolKind = ToolKind::Search;
    fn intent(args: &Value) -> String {
        let _ = args;
        "Finding the most important files".into()
    }

    fn run(&self, args: HotfilesArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let sandbox = ctx.sandbox()?;
        let limit = clamp_limit(args.limit, 10, 100);
        let mut hot = git_hotfiles(&sandbox, ctx.shell.spawner(), limit).unwrap_or_default();
        if hot.is_empty() {
            hot = largest_files(&sandbox, limit);
        }
        Ok(Value::Array(
            hot.into_iter()
                .map(|h| json!({ "path": h.path, "score": h.score, "reason": h.reason }))
                .collect(),
        ))
    }
}

struct Hot {
    path: String,
    score: f64,
    reason: String,
}

/// Files by recent commit frequency and changed lines, if this is a git
/// repo. git runs through the context's spawner (the OS sandbox when the
/// shell is confined), never with the repository's own config.
fn git_hotfiles(sandbox: &Sandbox, spawner: &crate::Spawner, limit: usize) -> Option<Vec<Hot>> {
    let repo = crate::git::NeutralRepo::open(sandbox.root())
        .map_err(|e| tracing::debug!(error = %e, "hotfiles: no git history"))
        .ok()?;
    let mut args = vec![
        // The first commit is an import, not a change: without this git
        // diffs its whole tree against nothing (`log.showRoot` defaults
        // on), which in a big young repository is most of the cost.
        "-c".to_owned(),
        "log.showRoot=false".to_owned(),
        "log".to_owned(),
        "--no-merges".to_owned(),
        "--no-renames".to_owned(),
        "--no-ext-diff".to_owned(),
        "--no-textconv".to_owned(),
        "--numstat".to_owned(),
        // Files changed, not added: a commit that adds a tree (an import,
        // a first commit of 200,000 files) says nothing of what is hot, and
        // counting its lines would read every blob it adds.
        "--diff-filter=M".to_owned(),
        "--format=%x00".to_owned(),
        format!("-n{HOTFILES_COMMITS}"),
    ];
    let prefix = repo.prefix().to_owned();
    if !prefix.is_empty() {
        args.extend(["--".to_owned(), prefix.clone()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = repo
        .run(spawner, sandbox.root(), &args)
        .map_err(|e| {
            // A new repository has no history yet: nothing went wrong.
            if e.to_string().contains("does not have any commits") {
                tracing::debug!(error = %e, "hotfiles: no commits yet");
            } else {
                tracing::warn!(error = %e, "hotfiles: git log failed");
            }
        })
        .ok()?;
    let strip = |path: &str| -> String {
        if prefix.is_empty() {
            path.to_owned()
        } else {
            path.strip_prefix(&format!("{prefix}/"))
                .unwrap_or(path)
                .to_owned()
        }
    };
    let mut stats: HashMap<String, (u64, u64)> = HashMap::new();
    let mut commits = 0;
    for line in text.lines() {
        if line.starts_with('\0') {
            commits += 1;
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let lines = added.parse::<u64>().unwrap_or(0) + removed.parse::<u64>().unwrap_or(0);
        let entry = stats.entry(strip(path)).or_default();
        entry.0 += 1;
        entry.1 += lines;
    }
    let mut hot: Vec<Hot> = stats
        .into_iter()
        .map(|(path, (n, lines))| Hot {
            path,
            score: ((n as f64 + (1.0 + lines as f64).ln()) * 100.0).round() / 100.0,
            reason: format!("{n} commits, {lines} lines changed in the last {commits} commits"),
        })
        .collect();
    hot.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    // Only the best are looked for on disk (gone or moved since: skipped).
    Some(
        hot.into_iter()
            .filter(|h| {
                sandbox
                    .resolve_existing(h.path.as_str())
                    .is_ok_and(|r| r.abs.is_file())
            })
            .take(limit)
            .collect(),
    )
}

/// The largest text files under `src/` (or the root when there is none).
fn largest_files(sandbox: &Sandbox, limit: usize) -> Vec<Hot> {
    let base = sandbox
        .resolve_existing("src")
        .ok()
        .filter(|r| r.abs.is_dir())
        .map(|r| r.abs)
        .unwrap_or_else(|| sandbox.root().to_path_buf());
    let mut files: Vec<(std::path::PathBuf, u64)> = repo::walker(&base)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .take(LANGUAGE_SAMPLE)
        .filter_map(|e| Some((e.path().to_path_buf(), e.metadata().ok()?.len())))
        .collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    // Binary files are skipped by reading them: only the largest are read.
    files
        .into_iter()
        .filter(|(abs, _)| !repo::file_is_binary(abs).unwrap_or(true))
        .filter_map(|(abs, size)| Some((sandbox.relative(&abs)?, size)))
        .take(limit)
        .map(|(path, size)| Hot {
            path,
            score: ((size as f64 / 1024.0) * 100.0).round() / 100.0,
            reason: format!("large file ({size} bytes); no git history"),
        })
        .collect()
}
