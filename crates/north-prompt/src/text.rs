//! Template text: `textwrap.dedent` + strip, and `$name` / `${name}`
//! substitution with the semantics of Python's `string.Template.substitute`
//! (identifiers are ASCII `[_A-Za-z][_A-Za-z0-9]*`, `$$` is a literal `$`,
//! any other `$` is an invalid placeholder, a name without a value is an
//! error). The same scanner also runs in `const` context so the
//! `template!` macro can check placeholders while the program compiles.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// A template substitution failure, as Python's `Template.substitute` raises
/// them (`ValueError` for a bad `$`, `KeyError` for a missing name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `$` that is not `$$`, `$identifier` or `${identifier}`.
    #[error(
        "invalid placeholder at line {line}, column {column}: `$` must be followed by `$`, an identifier or `{{identifier}}`"
    )]
    InvalidPlaceholder {
        /// 1-based line of the `$`.
        line: usize,
        /// 1-based column (in characters) of the `$`.
        column: usize,
    },
    /// A placeholder whose name has no value.
    #[error("no value for placeholder `{name}`")]
    MissingKey {
        /// The placeholder's name.
        name: String,
    },
}

/// One piece of a scanned template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Literal(&'a str),
    Placeholder(&'a str),
    Invalid(usize),
}

const fn is_ident_start(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphabetic()
}

const fn is_ident_continue(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphanumeric()
}

/// Length of the identifier starting at `at`, 0 when there is none.
const fn ident_len(bytes: &[u8], at: usize) -> usize {
    if at >= bytes.len() || !is_ident_start(bytes[at]) {
        return 0;
    }
    let mut end = at + 1;
    while end < bytes.len() && is_ident_continue(bytes[end]) {
        end += 1;
    }
    end - at
}

/// What follows a `$` at `at`: (kind, name start, name length, bytes consumed).
/// kind: 0 escaped `$$`, 1 placeholder, 2 invalid.
const fn classify_dollar(bytes: &[u8], at: usize) -> (u8, usize, usize, usize) {
    let next = at + 1;
    if next < bytes.len() && bytes[next] == b'$' {
        return (0, 0, 0, 2);
    }
    let len = ident_len(bytes, next);
    if len > 0 {
        return (1, next, len, 1 + len);
    }
    if next < bytes.len() && bytes[next] == b'{' {
        let len = ident_len(bytes, next + 1);
        let close = next + 1 + len;
        if len > 0 && close < bytes.len() && bytes[close] == b'}' {
            return (1, next + 1, len, 3 + len);
        }
    }
    (2, 0, 0, 1)
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Scanner<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let bytes = self.text.as_bytes();
        if self.pos >= bytes.len() {
            return None;
        }
        if bytes[self.pos] != b'$' {
            let start = self.pos;
            let end = memchr_dollar(bytes, start).unwrap_or(bytes.len());
            self.pos = end;
            return self.text.get(start..end).map(Token::Literal);
        }
        let at = self.pos;
        let (kind, name_at, name_len, consumed) = classify_dollar(bytes, at);
        self.pos = at + consumed;
        match kind {
            0 => self.text.get(at..at + 1).map(Token::Literal),
            1 => self
                .text
                .get(name_at..name_at + name_len)
                .map(Token::Placeholder),
            _ => Some(Token::Invalid(at)),
        }
    }
}

fn memchr_dollar(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .iter()
        .position(|&b| b == b'$')
        .map(|i| i + from)
}

fn scan(text: &str) -> Scanner<'_> {
    Scanner { text, pos: 0 }
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

fn invalid_at(text: &str, at: usize) -> TemplateError {
    let (line, column) = line_column(text, at);
    TemplateError::InvalidPlaceholder { line, column }
}

/// A parsed template: literal text and placeholders, ready to substitute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedTemplate {
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Placeholder(String),
}

impl ParsedTemplate {
    /// Parses `text`, failing on the first invalid `$`.
    pub(crate) fn parse(text: &str) -> Result<Self, TemplateError> {
        let mut segments: Vec<Segment> = Vec::new();
        for token in scan(text) {
            match token {
                Token::Literal(lit) => match segments.last_mut() {
                    Some(Segment::Literal(prev)) => prev.push_str(lit),
                    _ => segments.push(Segment::Literal(lit.to_owned())),
                },
                Token::Placeholder(name) => segments.push(Segment::Placeholder(name.to_owned())),
                Token::Invalid(at) => return Err(invalid_at(text, at)),
            }
        }
        Ok(ParsedTemplate { segments })
    }

    /// Placeholder names in order of appearance (repeats included).
    pub(crate) fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Placeholder(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// Fills every placeholder through `fill`, which appends the value.
    pub(crate) fn render_with<E>(
        &self,
        out: &mut String,
        mut fill: impl FnMut(&str, &mut String) -> Result<(), E>,
    ) -> Result<(), E> {
        for segment in &self.segments {
            match segment {
                Segment::Literal(lit) => out.push_str(lit),
                Segment::Placeholder(name) => fill(name, out)?,
            }
        }
        Ok(())
    }
}

/// Substitutes `$name` / `${name}` in `template` with values from `values`,
/// left to right, exactly as Python's `Template.substitute` does: the first
/// problem met (a bad `$` or a missing name) is the error.
///
/// Strings are inserted as they are, numbers and booleans as JSON writes
/// them, arrays and objects as compact JSON. `null` counts as missing.
pub fn substitute(template: &str, values: &Map<String, Value>) -> Result<String, TemplateError> {
    substitute_with(
        template,
        |name, out| match values.get(name) {
            Some(value) if !value.is_null() => {
                push_value(out, value);
                Ok(())
            }
            _ => Err(TemplateError::MissingKey {
                name: name.to_owned(),
            }),
        },
        |err| err,
    )
}

/// Single left-to-right pass: `fill` appends a placeholder's value, `invalid`
/// turns a bad `$` into the caller's error type.
pub(crate) fn substitute_with<E>(
    template: &str,
    mut fill: impl FnMut(&str, &mut String) -> Result<(), E>,
    invalid: impl FnOnce(TemplateError) -> E,
) -> Result<String, E> {
    let mut out = String::with_capacity(template.len());
    for token in scan(template) {
        match token {
            Token::Literal(lit) => out.push_str(lit),
            Token::Placeholder(name) => fill(name, &mut out)?,
            Token::Invalid(at) => return Err(invalid(invalid_at(template, at))),
        }
    }
    Ok(out)
}

/// Appends a params value the way a placeholder shows it.
pub(crate) fn push_value(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Array(_) | Value::Object(_) => {
            let _ = write!(out, "{value}");
        }
    }
}

/// Python's `textwrap.dedent` followed by `str.strip`: removes the common
/// leading whitespace of all non-blank lines ([`north_text::dedent`]),
/// blanks whitespace-only lines, then trims both ends.
pub fn dedent(text: &str) -> String {
    north_text::dedent(text).trim().to_owned()
}

/// Compile-time placeholder check behind `template!`: panics (a compile
/// error in `const` context) when `template` has an invalid `$` or, if
/// `exhaustive`, names a placeholder missing from `fields`.
pub const fn check_placeholders(template: &str, fields: &[&str], exhaustive: bool) {
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let (kind, name_at, name_len, consumed) = classify_dollar(bytes, i);
        if kind == 2 {
            panic!(
                "invalid placeholder in template: `$` must be followed by `$`, an identifier or `{{identifier}}`"
            );
        }
        if kind == 1 && exhaustive && !contains_field(fields, bytes, name_at, name_len) {
            unknown_placeholder(bytes, name_at, name_len);
        }
        i += consumed;
    }
}

/// Panics with a message naming the placeholder (const panics take one
/// `&str` argument, so the message is assembled in a buffer).
const fn unknown_placeholder(bytes: &[u8], at: usize, len: usize) {
    const PREFIX: &[u8] = b"template placeholder `$";
    const SUFFIX: &[u8] = b"` names no field of the params type";
    let mut buf = [0u8; 160];
    let mut n = 0;
    let mut i = 0;
    while i < PREFIX.len() {
        buf[n] = PREFIX[i];
        n += 1;
        i += 1;
    }
    let mut j = 0;
    while j < len && j < 64 {
        buf[n] = bytes[at + j];
        n += 1;
        j += 1;
    }
    let mut k = 0;
    while k < SUFFIX.len() {
        buf[n] = SUFFIX[k];
        n += 1;
        k += 1;
    }
    let (message, _) = buf.split_at(n);
    match core::str::from_utf8(message) {
        Ok(message) => panic!("{}", message),
        Err(_) => panic!("template placeholder names no field of the params type"),
    }
}

const fn contains_field(fields: &[&str], bytes: &[u8], at: usize, len: usize) -> bool {
    let mut f = 0;
    while f < fields.len() {
        let field = fields[f].as_bytes();
        if field.len() == len {
            let mut j = 0;
            while j < len && field[j] == bytes[at + j] {
                j += 1;
            }
            if j == len {
                return true;
            }
        }
        f += 1;
    }
    false
}

/// Compile-time check behind `markdown_section!`: panics when `key` does
/// not match `^[a-z0-9][a-z0-9._-]{0,63}$`.
pub const fn check_section_key(key: &str) {
    if !is_valid_section_key(key) {
        panic!("section key must match ^[a-z0-9][a-z0-9._-]{{0,63}}$");
    }
}

/// Whether `key` matches `^[a-z0-9][a-z0-9._-]{0,63}$`.
pub const fn is_valid_section_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 64 {
        return false;
    }
    let first = bytes[0];
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return false;
    }
    let mut i = 1;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'_' || b == b'-') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn substitute_matches_python_template() {
        let values = map(json!({"who": "tim", "what": "kung pao", "n": 3, "ok": true}));
        assert_eq!(
            substitute("$who likes ${what}; $$5 x$n $ok.", &values).unwrap(),
            "tim likes kung pao; $5 x3 true."
        );
        // The longest identifier is taken, then literal text follows.
        assert_eq!(substitute("${who}s", &values).unwrap(), "tims");
        assert_eq!(
            substitute("$whos", &values),
            Err(TemplateError::MissingKey {
                name: "whos".into()
            })
        );
    }

    #[test]
    fn invalid_placeholders_report_line_and_column() {
        let values = map(json!({"a": 1}));
        for (text, line, column) in [
            ("cost: $5", 1, 7),
            ("a\nb $", 2, 3),
            ("${ a }", 1, 1),
            ("${a", 1, 1),
            ("${}", 1, 1),
            ("é $-", 1, 3),
        ] {
            assert_eq!(
                substitute(text, &values),
                Err(TemplateError::InvalidPlaceholder { line, column }),
                "{text:?}"
            );
            assert!(ParsedTemplate::parse(text).is_err());
        }
    }

    #[test]
    fn first_error_wins_left_to_right() {
        let values = map(json!({}));
        assert!(matches!(
            substitute("$missing then $", &values),
            Err(TemplateError::MissingKey { .. })
        ));
        assert!(matches!(
            substitute("$ then $missing", &values),
            Err(TemplateError::InvalidPlaceholder { .. })
        ));
    }

    #[test]
    fn null_is_missing() {
        let values = map(json!({"a": null}));
        assert!(matches!(
            substitute("$a", &values),
            Err(TemplateError::MissingKey { .. })
        ));
    }

    #[test]
    fn parsed_template_lists_placeholders() {
        let t = ParsedTemplate::parse("$a ${b} $$c $a").unwrap();
        assert_eq!(t.placeholders().collect::<Vec<_>>(), ["a", "b", "a"]);
        let mut out = String::new();
        t.render_with(&mut out, |name, out| {
            out.push_str(&name.to_uppercase());
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(out, "A B $c A");
    }

    #[test]
    fn dedent_follows_textwrap() {
        assert_eq!(dedent("\n    a\n      b\n\n    c\n  "), "a\n  b\n\nc");
        assert_eq!(dedent("\ta\n\t\tb"), "a\n\tb");
        assert_eq!(dedent("  a\n \tb"), "a\n\tb");
        assert_eq!(dedent("no indent\n  more"), "no indent\n  more");
        assert_eq!(dedent("   \n\n  x  \n  "), "x");
    }

    #[test]
    fn section_keys() {
        for ok in ["a", "0", "a.b-c_d", &"a".repeat(64)] {
            assert!(is_valid_section_key(ok), "{ok}");
        }
        for bad in ["", "A", "-a", ".a", "a b", "a/b", &"a".repeat(65), "é"] {
            assert!(!is_valid_section_key(bad), "{bad}");
        }
    }

    #[test]
    fn const_check_accepts_known_fields() {
        check_placeholders("$a ${b} $$", &["a", "b"], true);
        check_placeholders("$unknown", &["a"], false);
    }
}
