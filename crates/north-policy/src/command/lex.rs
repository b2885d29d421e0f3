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
    let bytes = line.as_bytes();
    let mut segments: Vec<Segment> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut word: Option<Word> = None;
    let mut i = 0;
    let mut before: Option<Connector> = None;
    let mut end_segment =
        |words: &mut Vec<Word>, word: &mut Option<Word>, op: &str| -> Result<(), Refusal> {
            words.extend(word.take());
            if words.is_empty() {
                return Err(Refusal::EmptySegment(op.to_owned()));
            }
            segments.push((before.take(), std::mem::take(words)));
            before = Some(match op {
                "&&" => Connector::And,
                "||" => Connector::Or,
                "|" => Connector::Pipe,
                _ => Connector::Seq,
            });
            Ok(())
        };
    while i < bytes.len() {
        let c = bytes[i] as char;
        match c {
            ' ' => words.extend(word.take()),
            '\'' => {
                let close = line[i + 1..]
                    .find('\'')
                    .ok_or(Refusal::UnterminatedQuote("single"))?;
                let w = word.get_or_insert_with(Word::default);
                w.text.push_str(&line[i + 1..i + 1 + close]);
                w.quoted = true;
                i += close + 1;
            }
            '"' => {
                let close = line[i + 1..]
                    .find('"')
                    .ok_or(Refusal::UnterminatedQuote("double"))?;
                let inner = &line[i + 1..i + 1 + close];
                if let Some(pos) = inner.find(['$', '`', '\\', '!']) {
                    let found = &inner[pos..pos + 1];
                    return Err(syntax(
                        found,
                        i + 1 + pos,
                        "expansion or escape inside double quotes",
                    ));
                }
                let w = word.get_or_insert_with(Word::default);
                w.text.push_str(inner);
                w.quoted = true;
                i += close + 1;
            }
            ';' => end_segment(&mut words, &mut word, ";")?,
            '|' => match bytes.get(i + 1) {
                Some(b'|') => {
                    end_segment(&mut words, &mut word, "||")?;
                    i += 1;
                }
                Some(b'&') => return Err(syntax("|&", i, "pipe of stderr")),
                _ => end_segment(&mut words, &mut word, "|")?,
            },
            '&' => {
                if bytes.get(i + 1) == Some(&b'&') {
                    end_segment(&mut words, &mut word, "&&")?;
                    i += 1;
                } else {
                    return Err(syntax("&", i, "background job or fd redirection"));
                }
            }
            '<' | '>' => return Err(syntax(c.to_string(), i, "redirection")),
            '(' | ')' => {
                return Err(syntax(
                    c.to_string(),
                    i,
                    "subshell, grouping or process substitution",
                ));
            }
            '{' | '}' => return Err(syntax(c.to_string(), i, "brace expansion or group")),
            '$' => return Err(syntax("$", i, "parameter, command or arithmetic expansion")),
            '`' => return Err(syntax("`", i, "command substitution")),
            '\\' => return Err(syntax("\\", i, "escape")),
            '!' => return Err(syntax("!", i, "history expansion or negation")),
            '#' => return Err(syntax("#", i, "comment")),
            '^' => return Err(syntax("^", i, "history substitution")),
            '*' | '?' | '[' | ']' => {
                let w = word.get_or_insert_with(Word::default);
                w.text.push(c);
                w.glob = true;
            }
            '~' => {
                let w = word.get_or_insert_with(Word::default);
                w.text.push(c);
                w.tilde = true;
            }
            '=' => {
                let w = word.get_or_insert_with(Word::default);
                w.text.push(c);
                w.equals = true;
            }
            c if c.is_ascii_alphanumeric() || "-_./,:+%@".contains(c) => {
                word.get_or_insert_with(Word::default).text.push(c);
            }
            other => return Err(syntax(other.to_string(), i, "unsupported character")),
        }
        i += 1;
    }
    words.extend(word.take());
    if words.is_empty() {
        // A trailing connector (`ls ;`, `ls |`) leaves an empty last command.
        let trimmed = line.trim_end();
        let op = ["&&", "||", "|", ";"]
            .into_iter()
            .find(|op| trimmed.ends_with(op))
            .unwrap_or(";");
        return Err(Refusal::EmptySegment(op.to_owned()));
    }
    segments.push((before, words));
    Ok(segments)
}
