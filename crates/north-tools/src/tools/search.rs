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
use north_protocol::ToolKind;

use crate::describe;
use crate::tool::{Failure, Handler, ToolContext};

use super::nav::clamp_limit;

/// Longest preview (in characters) of a matching line.
const PREVIEW_CHARS: usize = 200;
/// Longest line the line-oriented searcher holds in memory; files with a
/// longer one are scanned in chunks instead.
const LINE_LIMIT: usize = 1 << 20;
/// Chunk size and overlap of the long-line scan (a match longer than the
/// overlap can be missed across a chunk boundary).
const CHUNK: usize = 1 << 20;
const OVERLAP: usize = 4096;

/// Arguments of `search_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Text to find (a regex if `regex` is true). Case-sensitive.
    pub query: String,
    /// File or directory to search (default: the whole project).
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
    /// The match's byte offset in the file, given for lines too long to
    /// read whole (`read_file` with `offset` reads around it); `column` is
    /// then in bytes.
    #[serde(rename = "byteOffset", skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<u64>,
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
    let wanted = clamp_limit(args.limit, 100, 10_000);
    // One match past the limit tells "more exist" from "exactly the limit".
    let limit = wanted + 1;
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
        .heap_limit(Some(LINE_LIMIT))
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
    let truncated = hits.len() > wanted;
    hits.truncate(wanted);
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
    let before = out.len();
    let mut sink = Collect {
        matcher,
        rel: &rel,
        count,
        limit,
        out,
    };
    // Unreadable files are skipped, as ripgrep does; a line over the
    // memory limit sends the file to the chunked scan.
    if let Err(e) = searcher.search_path(matcher, path, &mut sink)
        && e.to_string().contains("limit")
    {
        let found = out.len() - before;
        out.truncate(before);
        count.fetch_sub(found, Ordering::Relaxed);
        let _ = scan_long_lines(matcher, &rel, path, count, limit, out);
    }
}

/// Searches a file with a line too long to hold, in overlapping chunks:
/// memory stays at one chunk whatever the line length.
fn scan_long_lines(
    matcher: &RegexMatcher,
    rel: &str,
    path: &Path,
    count: &AtomicUsize,
    limit: usize,
    out: &mut Vec<Hit>,
) -> std::io::Result<()> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + OVERLAP);
    // Absolute offset of buf[0]; the line and the offset where it starts.
    let (mut base, mut line, mut line_start) = (0u64, 1u64, 0u64);
    let mut eof = false;
    while !eof {
        let old = buf.len();
        buf.resize(old + CHUNK, 0);
        let mut filled = old;
        while filled < buf.len() {
            match file.read(&mut buf[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(filled);
        // A match starting in the overlap is reported with the next chunk.
        let report_until = if eof {
            buf.len()
        } else {
            buf.len().saturating_sub(OVERLAP)
        };
        let mut at = 0;
        let mut counted = 0;
        let count_lines =
            |upto: usize, counted: &mut usize, line: &mut u64, line_start: &mut u64| {
                for (i, b) in buf[*counted..upto].iter().enumerate() {
                    if *b == b'\n' {
                        *line += 1;
                        *line_start = base + (*counted + i) as u64 + 1;
                    }
                }
                *counted = upto;
            };
        while at < report_until {
            let Ok(Some(m)) = matcher.find_at(&buf, at) else {
                break;
            };
            if m.start() >= report_until {
                break;
            }
            count_lines(m.start(), &mut counted, &mut line, &mut line_start);
            if count.fetch_add(1, Ordering::Relaxed) >= limit {
                return Ok(());
            }
            let offset = base + m.start() as u64;
            out.push(Hit {
                path: rel.to_owned(),
                line,
                column: offset - line_start + 1,
                preview: byte_window(&buf, m.start()),
                byte_offset: Some(offset),
            });
            at = m.end().max(m.start() + 1);
        }
        count_lines(report_until, &mut counted, &mut line, &mut line_start);
        buf.drain(..report_until);
        base += report_until as u64;
    }
    Ok(())
}

/// About [`PREVIEW_CHARS`] bytes of `buf` around byte `at`, within its line.
fn byte_window(buf: &[u8], at: usize) -> String {
    let lo = at.saturating_sub(PREVIEW_CHARS / 4);
    let hi = (at + PREVIEW_CHARS).min(buf.len());
    let from = buf[lo..at]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(lo, |i| lo + i + 1);
    let to = buf[at..hi]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(hi, |i| at + i);
    let text = String::from_utf8_lossy(&buf[from..to]);
    let text = text.trim_matches('\u{FFFD}').trim_end_matches('\r');
    let head = if from > 0 && buf[from - 1] != b'\n' {
        "…"
    } else {
        ""
    };
    let tail = if to < buf.len() && buf[to] != b'\n' {
        "…"
    } else {
        ""
    };
    format!("{head}{text}{tail}")
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
        let prefix_chars = String::from_utf8_lossy(&bytes[..start]).chars().count();
        // Only a window of a long line is decoded for the preview.
        let from = start.saturating_sub(PREVIEW_CHARS * 4);
        let to = (start + PREVIEW_CHARS * 8).min(bytes.len());
        let window = String::from_utf8_lossy(&bytes[from..to]);
        let window = window.trim_end_matches(['\n', '\r']);
        let match_char = String::from_utf8_lossy(&bytes[from..start]).chars().count();
        let mut shown = preview(window, match_char);
        if from > 0 && !shown.starts_with('…') {
            shown.insert(0, '…');
        }
        let cut_after = bytes[to..].iter().any(|b| *b != b'\n' && *b != b'\r');
        if cut_after && !shown.ends_with('…') {
            shown.push('…');
        }
        self.out.push(Hit {
            path: self.rel.to_owned(),
            line: mat.line_number().unwrap_or(0),
            column: prefix_chars as u64 + 1,
            preview: shown,
            byte_offset: None,
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
    const KIND: ToolKind = ToolKind::Search;
    fn intent(args: &Value) -> String {
        format!(
            "Searching: `{}` in `{}`",
            describe::short(describe::arg(args, "query").unwrap_or("?"), 60),
            describe::arg(args, "path").unwrap_or("./")
        )
    }

    fn run(&self, args: SearchArgs, ctx: &ToolContext) -> Result<Value, Failure> {
        let (hits, truncated) = search(&ctx.sandbox()?, &args, &ctx.cancel)?;
        if truncated {
            // Never silently short: the model learns there is more.
            let n = hits.len();
            return Ok(serde_json::json!({
                "matches": hits,
                "truncated": true,
                "note": format!("stopped at the limit of {n} matches; narrow the query or path, or raise limit (at most 10000)"),
            }));
        }
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
