//! The lexer: words, quotes and connectors, refusing everything else.

use super::{Connector, Refusal};

/// A word as written: its text after quote removal and how it was written.
#[derive(Debug, Default)]
pub(super) struct Word {
    pub(super) text: String,
    pub(super) quoted: bool,
    pub(super) glob: bool,
    pub(super) tilde: bool,
    pub(super) equals: bool,
}

fn syntax(found: impl Into<String>, at: usize, what: &'static str) -> Refusal {
    Refusal::Syntax {
        found: found.into(),
        at,
        what,
    }
}

/// One simple command's words and the connector joining it to the one before.
pub(super) type Segment = (Option<Connector>, Vec<Word>);

/// Lexes `line` into segments (simple commands) of words, each with the
/// connector that joins it to the one before.
pub(super) fn tokenize(line: &str) -> Result<Vec<Segment>, Refusal> {
    check_characters(line)?;
    let mut lexer = Lexer::default();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        match c {
            ' ' => lexer.words.extend(lexer.word.take()),
            '\'' | '"' => i = lexer.quoted(line, i)?,
            ';' => lexer.end_segment(";")?,
            '|' | '&' => i = lexer.connector(bytes, i)?,
            '*' | '?' | '[' | ']' => lexer.push(c).glob = true,
            '~' => lexer.push(c).tilde = true,
            '=' => lexer.push(c).equals = true,
            c if c.is_ascii_alphanumeric() || "-_./,:+%@".contains(c) => {
                lexer.push(c);
            }
            other => return Err(refused(other, i)),
        }
        i += 1;
    }
    lexer.finish(line)
}

/// Only printable ASCII is read, and a line must say something.
fn check_characters(line: &str) -> Result<(), Refusal> {
    for (at, c) in line.char_indices() {
        if !c.is_ascii() {
            return Err(Refusal::NonAscii { found: c, at });
        }
        if c.is_ascii_control() {
            return Err(Refusal::ControlChar { found: c, at });
        }
    }
    if line.trim().is_empty() {
        return Err(Refusal::Empty);
    }
    Ok(())
}

/// Why the character `c` at `at` ends the reading: shell syntax the policy
/// does not follow, named.
fn refused(c: char, at: usize) -> Refusal {
    let what = match c {
        '<' | '>' => "redirection",
        '(' | ')' => "subshell, grouping or process substitution",
        '{' | '}' => "brace expansion or group",
        '$' => "parameter, command or arithmetic expansion",
        '`' => "command substitution",
        '\\' => "escape",
        '!' => "history expansion or negation",
        '#' => "comment",
        '^' => "history substitution",
        _ => "unsupported character",
    };
    syntax(c.to_string(), at, what)
}

/// The lexer's state between characters.
#[derive(Default)]
struct Lexer {
    segments: Vec<Segment>,
    words: Vec<Word>,
    word: Option<Word>,
    before: Option<Connector>,
}

impl Lexer {
    /// Adds `c` to the word being read (starting one).
    fn push(&mut self, c: char) -> &mut Word {
        let w = self.word.get_or_insert_with(Word::default);
        w.text.push(c);
        w
    }

    /// Reads the quoted text starting at `i` (a `'` or `"`) into the word;
    /// returns the index of the closing quote. Double quotes hold no
    /// expansion or escape: they are refused, not followed.
    fn quoted(&mut self, line: &str, i: usize) -> Result<usize, Refusal> {
        let quote = line.as_bytes()[i] as char;
        let which = if quote == '\'' { "single" } else { "double" };
        let close = line[i + 1..]
            .find(quote)
            .ok_or(Refusal::UnterminatedQuote(which))?;
        let inner = &line[i + 1..i + 1 + close];
        if quote == '"'
            && let Some(pos) = inner.find(['$', '`', '\\', '!'])
        {
            return Err(syntax(
                &inner[pos..pos + 1],
                i + 1 + pos,
                "expansion or escape inside double quotes",
            ));
        }
        let w = self.word.get_or_insert_with(Word::default);
        w.text.push_str(inner);
        w.quoted = true;
        Ok(i + close + 1)
    }

    /// Reads `|`, `||` or `&&` at `i`; returns the index of its last byte.
    /// A lone `&` (a background job) and `|&` are refused.
    fn connector(&mut self, bytes: &[u8], i: usize) -> Result<usize, Refusal> {
        match (bytes[i], bytes.get(i + 1)) {
            (b'|', Some(b'|')) => self.end_segment("||").map(|()| i + 1),
            (b'|', Some(b'&')) => Err(syntax("|&", i, "pipe of stderr")),
            (b'|', _) => self.end_segment("|").map(|()| i),
            (_, Some(b'&')) => self.end_segment("&&").map(|()| i + 1),
            _ => Err(syntax("&", i, "background job or fd redirection")),
        }
    }

    /// Closes the simple command being read; `op` joins the next one.
    fn end_segment(&mut self, op: &str) -> Result<(), Refusal> {
        self.words.extend(self.word.take());
        if self.words.is_empty() {
            return Err(Refusal::EmptySegment(op.to_owned()));
        }
        self.segments
            .push((self.before.take(), std::mem::take(&mut self.words)));
        self.before = Some(match op {
            "&&" => Connector::And,
            "||" => Connector::Or,
            "|" => Connector::Pipe,
            _ => Connector::Seq,
        });
        Ok(())
    }

    fn finish(mut self, line: &str) -> Result<Vec<Segment>, Refusal> {
        self.words.extend(self.word.take());
        if self.words.is_empty() {
            // A trailing connector (`ls ;`, `ls |`) leaves an empty last command.
            let trimmed = line.trim_end();
            let op = ["&&", "||", "|", ";"]
                .into_iter()
                .find(|op| trimmed.ends_with(op))
                .unwrap_or(";");
            return Err(Refusal::EmptySegment(op.to_owned()));
        }
        self.segments.push((self.before, self.words));
        Ok(self.segments)
    }
}
