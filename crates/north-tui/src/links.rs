//! Web addresses and file names in text: where they are, so a long
//! address is never broken across rows with newlines, and each can be
//! written as an OSC 8 link a terminal opens.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// Whether `word` (a run without spaces) begins a web address, perhaps
/// after an opening bracket or quote.
pub(crate) fn starts_url(word: &str) -> bool {
    let word = word.trim_start_matches(['(', '[', '<', '"', '\'']);
    let lower = word.get(..8).unwrap_or(word).to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// The byte ranges of the web addresses in `text`: from `http://` or
/// `https://` to the next space or quote, less the punctuation that ends
/// a sentence and a closing bracket the address did not open.
pub(crate) fn url_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = find_scheme(&text[from..]) {
        let start = from + found;
        // An address glued to a word (`xhttps://`) is not one.
        let glued = text[..start]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let rest = &text[start..];
        let len = rest
            .find(|c: char| {
                c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '<' | '>' | '`')
            })
            .unwrap_or(rest.len());
        let end = start + trimmed_len(&rest[..len]);
        if !glued && end > start + rest[..len].find("//").map_or(0, |i| i + 2) {
            out.push(start..end);
        }
        from = start + len.max(1);
    }
    out
}

fn find_scheme(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    match (lower.find("https://"), lower.find("http://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The length of `url` without trailing sentence punctuation and closing
/// brackets it did not open (`(see https://x.y/a_(b))` keeps `(b)`).
fn trimmed_len(url: &str) -> usize {
    let mut end = url.len();
    while let Some(c) = url[..end].chars().next_back() {
        let cut = match c {
            '.' | ',' | ';' | ':' | '!' | '?' => true,
            ')' => url[..end].matches('(').count() < url[..end].matches(')').count(),
            ']' => url[..end].matches('[').count() < url[..end].matches(']').count(),
            _ => false,
        };
        if !cut {
            break;
        }
        end -= c.len_utf8();
    }
    end
}

/// The links in `text`, in order: each web address, and each word that
/// names a file `file` finds (a word with a `/` or a `.`, without the
/// brackets, quotes or backticks around it and a `:line:column` after it),
/// with where each leads.
pub(crate) fn links(
    text: &str,
    file: impl Fn(&Path) -> Option<PathBuf>,
) -> Vec<(Range<usize>, String)> {
    let mut out: Vec<(Range<usize>, String)> = url_ranges(text)
        .into_iter()
        .map(|r| (r.clone(), text[r].to_string()))
        .collect();
    for (start, word) in words(text) {
        if word.contains("://") {
            continue;
        }
        let lead = word.len()
            - word
                .trim_start_matches(['(', '[', '{', '<', '"', '\'', '`'])
                .len();
        // Closing brackets, quotes and sentence punctuation, then a
        // position, then what came before the position.
        const ENDS: [char; 13] = [
            ')', ']', '}', '>', '"', '\'', '`', ',', ';', '!', '?', '.', ':',
        ];
        let body = without_position(word[lead..].trim_end_matches(ENDS)).trim_end_matches(ENDS);
        if body.starts_with('-') || !(body.contains('/') || body.contains('.')) {
            continue;
        }
        if let Some(found) = file(Path::new(body)) {
            let range = start + lead..start + lead + body.len();
            out.push((range, file_url(&found)));
        }
    }
    out.sort_by_key(|(r, _)| r.start);
    out
}

/// The runs of `text` between whitespace, with where each starts.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

/// `path` without a `:line` or `:line:column` after it.
fn without_position(path: &str) -> &str {
    let mut rest = path;
    for _ in 0..2 {
        match rest.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => {
                rest = head;
            }
            _ => break,
        }
    }
    rest
}

/// A `file://` URL for an absolute path, naming this host (so a terminal
/// reached over ssh does not open a local file of the same name).
fn file_url(path: &Path) -> String {
    let mut url = format!("file://{}", host());
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(char::from(b));
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

fn host() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(text: &str) -> Vec<&str> {
        url_ranges(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn addresses_end_before_spaces_quotes_and_sentence_punctuation() {
        assert_eq!(
            urls("see https://example.com/a?b=1. Or (http://x.test/y), \"https://q.test/z\""),
            vec![
                "https://example.com/a?b=1",
                "http://x.test/y",
                "https://q.test/z"
            ]
        );
        assert_eq!(
            urls("docs (https://en.wikipedia.org/wiki/Rust_(language)) here"),
            vec!["https://en.wikipedia.org/wiki/Rust_(language)"]
        );
        assert!(urls("no address, nor xhttps://glued.test, nor https:// alone").is_empty());
        // A control character ends an address: it never reaches a link's target.
        assert_eq!(
            urls("https://a.test/x\x1b]52;c;eA==\x07"),
            vec!["https://a.test/x"]
        );
        assert!(starts_url("HTTPS://EXAMPLE.COM"));
        assert!(starts_url("(https://x.test/a"));
        assert!(!starts_url("htt"));
    }

    #[test]
    fn file_names_that_exist_are_links_with_their_position_left_out() {
        let file = |p: &Path| {
            ["src/main.rs", "README.md", "a b.txt"]
                .contains(&p.to_str().unwrap_or(""))
                .then(|| Path::new("/work/p").join(p))
        };
        let text = "Edited `src/main.rs:12:4.`,\u{a0}see README.md. Not src/gone.rs nor -v.x; https://x.test/src/main.rs";
        let found = links(text, file);
        let shown: Vec<(&str, &str)> = found
            .iter()
            .map(|(r, t)| (&text[r.clone()], t.as_str()))
            .collect();
        let host = host();
        assert_eq!(
            shown,
            vec![
                (
                    "src/main.rs",
                    format!("file://{host}/work/p/src/main.rs").as_str()
                ),
                (
                    "README.md",
                    format!("file://{host}/work/p/README.md").as_str()
                ),
                ("https://x.test/src/main.rs", "https://x.test/src/main.rs"),
            ]
        );
        assert!(file_url(Path::new("/a b/ü")).ends_with("/a%20b/%C3%BC"));
    }
}
