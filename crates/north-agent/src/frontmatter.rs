//! The front matter of Markdown files users write for assistants (custom
//! commands, agents, `SKILL.md`): a `---` block of `key: value` lines at
//! the top. The YAML these files use in practice is read — plain, quoted
//! and folded scalars, `[a, b]` and `- item` lists — without a YAML engine.

use std::collections::BTreeMap;
use std::path::Path;

/// Why a user's Markdown file was skipped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SkipReason {
    /// It is a link that leads out of its directory.
    #[error("a link out of its directory; skipped")]
    LinkOut,
    /// It is not a regular file, or larger than the limit.
    #[error("not a file, or over {} KiB; skipped", .max / 1024)]
    NotAFileOrTooLarge {
        /// The limit in bytes.
        max: u64,
    },
    /// It could not be read.
    #[error("{0}")]
    Read(#[from] std::io::Error),
}

/// Reads a user's Markdown file `path` found in `dir`: never through a link
/// that leads out of `dir`, never a file over `max` bytes. The error says
/// why it was skipped.
pub(crate) fn read_within(path: &Path, dir: &Path, max: u64) -> Result<String, SkipReason> {
    let contained = std::fs::canonicalize(path)
        .ok()
        .zip(std::fs::canonicalize(dir).ok())
        .is_some_and(|(file, dir)| file.starts_with(dir));
    if !contained {
        return Err(SkipReason::LinkOut);
    }
    if std::fs::metadata(path).map_or(true, |m| !m.is_file() || m.len() > max) {
        return Err(SkipReason::NotAFileOrTooLarge { max });
    }
    Ok(std::fs::read_to_string(path)?)
}

/// One front matter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A scalar, unquoted.
    Text(String),
    /// A list (`[a, b]` or `- a` lines).
    List(Vec<String>),
}

impl Value {
    /// The value as one string (a list joined with `, `).
    pub fn text(&self) -> String {
        match self {
            Value::Text(t) => t.clone(),
            Value::List(items) => items.join(", "),
        }
    }

    /// The value as items: a list as it is, a scalar split at commas.
    pub fn items(&self) -> Vec<String> {
        match self {
            Value::List(items) => items.clone(),
            Value::Text(t) => t
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }
}

/// A file split into its front matter (keys lowercased) and its body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document<'a> {
    /// The fields.
    pub fields: BTreeMap<String, Value>,
    /// What follows the block (the whole text when there is none).
    pub body: &'a str,
}

impl Document<'_> {
    /// The scalar at `key` (a list joined), trimmed; `None` when absent or
    /// empty.
    pub fn text(&self, key: &str) -> Option<String> {
        self.fields
            .get(key)
            .map(Value::text)
            .filter(|t| !t.trim().is_empty())
    }
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return s[1..s.len() - 1].to_string();
        }
    }
    s.to_string()
}

/// `value` without a trailing `  # comment` (YAML's), unless quoted.
fn strip_comment(value: &str) -> &str {
    if value.starts_with(['"', '\'']) {
        return value;
    }
    match value.find(" #").or_else(|| value.find("\t#")) {
        Some(at) => value[..at].trim_end(),
        None => value,
    }
}

/// Splits `text` into front matter and body.
pub fn parse(text: &str) -> Document<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = match text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    {
        Some(rest) => rest,
        None => {
            return Document {
                fields: BTreeMap::new(),
                body: text,
            };
        }
    };
    let (block, body) = match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            // The closing line is `---` alone.
            let after = after.split_once('\n').map_or("", |(_, b)| b);
            (&rest[..end], after)
        }
        None if rest.starts_with("---") => ("", rest[3..].trim_start_matches(['\r', '\n'])),
        None => {
            return Document {
                fields: BTreeMap::new(),
                body: text,
            };
        }
    };
    let mut fields = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in block.lines() {
        let trimmed = line.trim_end();
        if trimmed.trim().is_empty() || trimmed.trim_start().starts_with('#') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if indented && let Some(key) = &current {
            let item = trimmed.trim();
            match (item.strip_prefix("- "), fields.get_mut(key)) {
                (Some(item), Some(Value::List(items))) => items.push(unquote(item)),
                (Some(item), Some(v @ Value::Text(_))) if v.text().is_empty() => {
                    *v = Value::List(vec![unquote(item)]);
                }
                // A folded scalar continues on the next lines.
                (None, Some(Value::Text(t))) => {
                    if !t.is_empty() {
                        t.push(' ');
                    }
                    t.push_str(item);
                }
                _ => {}
            }
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = strip_comment(value.trim());
        let value = if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Value::List(
                inner
                    .split(',')
                    .map(unquote)
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        } else if matches!(value, "|" | ">" | "|-" | ">-") {
            Value::Text(String::new())
        } else {
            Value::Text(unquote(value))
        };
        fields.insert(key.clone(), value);
        current = Some(key);
    }
    Document {
        fields,
        body: body.trim_start_matches(['\r', '\n']),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_agent_files_read_as_written() {
        let doc = parse(
            "---\nname: code-reviewer\ndescription: \"Reviews diffs: finds bugs\"\ntools: Read, Grep, Glob\nmodel: inherit\n---\nYou review code.\n",
        );
        assert_eq!(doc.text("name").as_deref(), Some("code-reviewer"));
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Reviews diffs: finds bugs")
        );
        assert_eq!(doc.fields["tools"].items(), ["Read", "Grep", "Glob"]);
        assert_eq!(doc.body, "You review code.\n");
    }

    #[test]
    fn lists_folded_text_and_no_front_matter() {
        let doc = parse(
            "---\ntools:\n  - read_file\n  - search_text\ndescription: >\n  Finds where\n  things are\nother: [a, 'b']\n---\nBody",
        );
        assert_eq!(doc.fields["tools"].items(), ["read_file", "search_text"]);
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Finds where things are")
        );
        assert_eq!(doc.fields["other"].items(), ["a", "b"]);
        assert_eq!(doc.body, "Body");
        let doc = parse("# Just text\n---\nmore");
        assert!(doc.fields.is_empty());
        assert_eq!(doc.body, "# Just text\n---\nmore");
    }
}
