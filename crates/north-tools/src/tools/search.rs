//! `search_text`: ripgrep's engine as a library over the gitignore-aware walk.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::repo;
use crate::sandbox::Sandbox;
use crate::tool::{Failure, Handler, ToolContext};

use super::nav::clamp_limit;

/// Longest preview (in characters) of a matching line.
const PREVIEW_CHARS: usize = 200;

/// Arguments of `search_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Text to find (a regex if `regex` is true). Case-sensitive.
    pub query: String,
    /// File or directory to search in; null searches the whole project.
    #[serde(default)]
    pub path: Option<String>,
    /// Treat `query` as a regex (default false: literal).
    #[serde(default)]
    pub regex: bool,
    /// Max matches (default 100).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// One match.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Hit {
    /// Path relative to the project root.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (in characters) where the match starts.
    pub column: u64,
    /// The line, shortened around the match when long.
    pub preview: String,
}

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The query is empty.
    #[error("query is empty")]
    EmptyQuery,
    /// The regex does not compile.
    #[error("invalid regex {query:?}: {message}")]
    BadRegex {
        /// The query.
        query: String,
        /// The compiler's message.
        message: String,
    },
    /// The path scope was refused.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// The context was cancelled.
    #[error("search cancelled")]
    Cancelled,
}

/// Runs a search; `Ok((hits, truncated))`, hits sorted by path, line and column.
/// When the limit is reached, the search stops early (which files' matches
/// fill it then depends on the walk's thread timing).
pub fn search(
    sandbox: &Sandbox,
    args: &SearchArgs,
    cancel: &CancellationToken,
) -> Result<(Vec<Hit>, bool), SearchError> {
    if args.query.is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    let limit = clamp_limit(args.limit, 100, 10_000);
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(!args.regex)
        .line_terminator(Some(b'\n'))
        .build(&args.query)
        .map_err(|e| SearchError::BadRegex {
            query: args.query.clone(),
            message: e.to_string(),
        })?;
    let scope = sandbox.resolve_existing(args.path.as_deref().unwrap_or("."))?;
    let root = sandbox.root();
    let count = AtomicUsize::new(0);
    let hits = Mutex::new(Vec::new());
    let searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .build();

    if scope.abs.is_file() {
        let mut local = Vec::new();
        let mut searcher = searcher;
        search_file(
            &mut searcher,
            &matcher,
            root,
            &scope.abs,
            &count,
            limit,
            &mut local,
        );
        if let Ok(mut all) = hits.lock() {
            all.extend(local);
        }
    } else {
        repo::walker(&scope.abs).build_parallel().run(|| {
            let mut searcher = searcher.clone();
            let matcher = &matcher;
            let count = &count;
            let hits = &hits;
            Box::new(move |entry| {
                if cancel.is_cancelled() || count.load(Ordering::Relaxed) >= limit {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let mut local = Vec::new();
                search_file(
                    &mut searcher,
                    matcher,
                    root,
                    entry.path(),
                    count,
                    limit,
                    &mut local,
                );
                if !local.is_empty()
                    && let Ok(mut all) = hits.lock()
                {
                    all.extend(local);
                }
                WalkState::Continue
            })
        });
    }
    if cancel.is_cancelled() {
        return Err(SearchError::Cancelled);
    }
    // A poisoned lock only means a walker thread panicked; keep what it found.
    let mut hits = hits.into_inner().unwrap_or_else(|e| e.into_inner());
    hits.sort();
    let truncated = count.load(Ordering::Relaxed) >= limit;
    hits.truncate(limit);
    Ok((hits, truncated))
}

fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    root: &Path,
    path: &Path,
    count: &AtomicUsize,
    limit: usize,
    out: &mut Vec<Hit>,
) {
    let rel = match path.strip_prefix(root) {
        Ok(r) => r.to_string_lossy().into_owned(),
        Err(_) => return,
    };
    let mut sink = Collect {
        matcher,
        rel: &rel,
        count,
        limit,
        out,
    };
    // Unreadable files are skipped, as ripgrep does.
    let _ = searcher.search_path(matcher, path, &mut sink);
}

struct Collect<'a> {
    matcher: &'a RegexMatcher,
    rel: &'a str,
    count: &'a AtomicUsize,
    limit: usize,
    out: &'a mut Vec<Hit>,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        mat: &SinkMatch<'_>,
    ) -> Result<bool, std::io::Error> {
        if self.count.fetch_add(1, Ordering::Relaxed) >= self.limit {
            return Ok(false);
        }
        let bytes = mat.bytes();
        let start = match self.matcher.find(bytes) {
            Ok(Some(m)) => m.start(),
            _ => 0,
        };
        let line = String::from_utf8_lossy(bytes);
        let line = line.trim_end_matches(['\n', '\r']);
        let prefix_chars = String::from_utf8_lossy(&bytes[..start]).chars().count();
        self.out.push(Hit {
            path: self.rel.to_owned(),
            line: mat.line_number().unwrap_or(0),
            column: prefix_chars as u64 + 1,
            preview: preview(line, prefix_chars),
        });
        Ok(true)
    }
}

/// The line, or a window of it that shows the match when the line is long.
fn preview(line: &str, match_char: usize) -> String {
    let total = line.chars().count();
    if total <= PREVIEW_CHARS {
        return line.to_owned();
    }
    let start = match_char
        .saturating_sub(PREVIEW_CHARS / 4)
        .min(total - PREVIEW_CHARS);
    let window: String = line.chars().skip(start).take(PREVIEW_CHARS).collect();
    let head = if start > 0 { "…" } else { "" };
    let tail = if start + PREVIEW_CHARS < total {
        "…"
    } else {
        ""
    };
    format!("{head}{window}{tail}")
}

/// `search_text`.
pub(crate) struct SearchText;

impl Handler for SearchText {
    type Args = SearchArgs;
    const NAME: &'static str = "search_text";
    const DESCRIPTION: &'static str = "Search file contents like ripgrep (gitignore-aware, skips binaries). Returns [{path, line, column, preview}].";

    fn run(&self, args: SearchArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let (hits, _truncated) = search(&ctx.sandbox()?, &args, &ctx.cancel)?;
        Ok(serde_json::to_value(hits)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_window_long_lines_around_the_match() {
        let line = format!("{}needle{}", "a".repeat(500), "b".repeat(500));
        let p = preview(&line, 500);
        assert!(p.contains("needle"));
        assert!(p.starts_with('…') && p.ends_with('…'));
        assert_eq!(preview("short", 0), "short");
    }
}
