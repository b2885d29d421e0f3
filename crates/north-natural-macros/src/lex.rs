//! A small Rust lexer for `check_blocks!`. It exists because `syn` cannot
//! give line numbers for text parsed inside a proc macro (every span is the
//! call site there), and a report without `file:line` is not actionable. It
//! only needs to be right about what separates tokens — comments, string,
//! raw-string and char literals, lifetimes — and about doc comments and
//! string values; everything else is a punctuation character.

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier or keyword (raw identifiers without `r#`).
    Ident(String),
    /// One punctuation character (multi-character operators are split).
    Punct(char),
    /// `(`, `[` or `{`.
    Open(char),
    /// `)`, `]` or `}`.
    Close(char),
    /// A string literal, plain or raw, with its value (escapes resolved).
    Str(String),
    /// Any other literal: numbers, chars, byte and C strings.
    Lit,
    /// An outer doc comment (`///` or `/** */`) with the text its `doc`
    /// attribute would carry.
    Doc(String),
}

/// A token and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: u32,
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u32,
    out: Vec<Token>,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl Lexer {
    fn at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(k, c)| self.at(k) == Some(c))
    }

    fn push(&mut self, tok: Tok, line: u32) {
        self.out.push(Token { tok, line });
    }

    /// Advances one character, counting lines.
    fn bump(&mut self) -> Option<char> {
        let c = self.at(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn line_comment(&mut self) {
        let line = self.line;
        let doc = self.starts_with("///") && !self.starts_with("////");
        self.i += if doc { 3 } else { 2 };
        let mut text = String::new();
        while let Some(c) = self.at(0).filter(|c| *c != '\n') {
            text.push(c);
            self.i += 1;
        }
        if doc {
            let text = text.strip_suffix('\r').unwrap_or(&text).to_owned();
            self.push(Tok::Doc(text), line);
        }
    }

    fn block_comment(&mut self) -> Result<(), String> {
        let line = self.line;
        let doc = self.starts_with("/**") && !self.starts_with("/***") && !self.starts_with("/**/");
        self.i += 2;
        let start = self.i;
        let mut depth = 1;
        while depth > 0 {
            if self.starts_with("/*") {
                depth += 1;
                self.i += 2;
            } else if self.starts_with("*/") {
                depth -= 1;
                self.i += 2;
            } else if self.bump().is_none() {
                return Err(format!("unterminated block comment from line {line}"));
            }
        }
        if doc {
            let text: String = self.chars[start + 1..self.i - 2].iter().collect();
            self.push(Tok::Doc(text), line);
        }
        Ok(())
    }

    /// A `"..."` literal starting at the quote; returns its value.
    fn quoted(&mut self) -> Result<String, String> {
        let line = self.line;
        self.i += 1;
        let mut value = String::new();
        loop {
            match self.bump() {
                None => return Err(format!("unterminated string from line {line}")),
                Some('"') => return Ok(value),
                Some('\\') => self.escape(&mut value),
                Some(c) => value.push(c),
            }
        }
    }

    fn escape(&mut self, value: &mut String) {
        match self.bump() {
            Some('n') => value.push('\n'),
            Some('r') => value.push('\r'),
            Some('t') => value.push('\t'),
            Some('0') => value.push('\0'),
            Some('x') => {
                let hex: String = [self.bump(), self.bump()].into_iter().flatten().collect();
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    value.push(c);
                }
            }
            Some('u') => {
                let mut hex = String::new();
                while let Some(c) = self.bump() {
                    match c {
                        '{' => {}
                        '}' => break,
                        c => hex.push(c),
                    }
                }
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    value.push(c);
                }
            }
            // A line continuation drops the newline and the next line's indentation.
            Some('\n') | Some('\r') => {
                while self.at(0).is_some_and(char::is_whitespace) {
                    self.bump();
                }
            }
            Some(c) => value.push(c),
            None => {}
        }
    }

    /// A raw string starting at its `#`s or quote (after `r`, `br` or `cr`).
    fn raw(&mut self) -> Result<String, String> {
        let line = self.line;
        let mut hashes = 0;
        while self.at(0) == Some('#') {
            hashes += 1;
            self.i += 1;
        }
        if self.at(0) != Some('"') {
            return Err(format!("malformed raw string on line {line}"));
        }
        self.i += 1;
        let mut value = String::new();
        loop {
            match self.bump() {
                None => return Err(format!("unterminated raw string from line {line}")),
                Some('"') if (0..hashes).all(|k| self.at(k) == Some('#')) => {
                    self.i += hashes;
                    return Ok(value);
                }
                Some(c) => value.push(c),
            }
        }
    }

    /// A char literal, or a lifetime or label (`'a`: left as `'` then the
    /// identifier).
    fn quote(&mut self) -> Result<(), String> {
        let line = self.line;
        if self.at(1) == Some('\\') {
            self.i += 3;
            while self.at(0).is_some_and(|c| c != '\'') {
                self.bump();
            }
            if self.bump().is_none() {
                return Err(format!("unterminated char literal on line {line}"));
            }
            self.push(Tok::Lit, line);
        } else if self.at(2) == Some('\'') {
            self.i += 1;
            self.bump();
            self.i += 1;
            self.push(Tok::Lit, line);
        } else {
            self.i += 1;
            self.push(Tok::Punct('\''), line);
        }
        Ok(())
    }

    fn word(&mut self) -> Result<(), String> {
        let line = self.line;
        let start = self.i;
        while self.at(0).is_some_and(is_ident_char) {
            self.i += 1;
        }
        let word: String = self.chars[start..self.i].iter().collect();
        let next = self.at(0);
        let raw_next =
            next == Some('"') || (next == Some('#') && matches!(self.at(1), Some('#' | '"')));
        match word.as_str() {
            "r" if raw_next => {
                let value = self.raw()?;
                self.push(Tok::Str(value), line);
            }
            "br" | "cr" if raw_next => {
                self.raw()?;
                self.push(Tok::Lit, line);
            }
            "b" | "c" if next == Some('"') => {
                self.quoted()?;
                self.push(Tok::Lit, line);
            }
            "b" if next == Some('\'') => self.quote()?,
            "r" if next == Some('#') && self.at(1).is_some_and(is_ident_start) => {
                self.i += 1;
                let start = self.i;
                while self.at(0).is_some_and(is_ident_char) {
                    self.i += 1;
                }
                let ident = self.chars[start..self.i].iter().collect();
                self.push(Tok::Ident(ident), line);
            }
            _ => self.push(Tok::Ident(word), line),
        }
        Ok(())
    }

    fn number(&mut self) {
        let line = self.line;
        while let Some(c) = self.at(0) {
            let exponent_sign = matches!(c, '+' | '-')
                && matches!(self.chars.get(self.i.wrapping_sub(1)), Some('e' | 'E'));
            let fraction = c == '.' && self.at(1).is_some_and(|d| d.is_ascii_digit());
            if is_ident_char(c) || exponent_sign || fraction {
                self.i += 1;
            } else {
                break;
            }
        }
        self.push(Tok::Lit, line);
    }
}

/// The tokens of a Rust source file; `Err` when a comment or literal does
/// not end (the file would not compile either).
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, String> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        i: 0,
        line: 1,
        out: Vec::new(),
    };
    // A shebang line is not Rust (`#![...]` on line 1 is an attribute).
    let attribute = lx.chars.iter().skip(2).find(|c| !c.is_whitespace()) == Some(&'[');
    if lx.starts_with("#!") && !attribute {
        while lx.at(0).is_some_and(|c| c != '\n') {
            lx.i += 1;
        }
    }
    while let Some(c) = lx.at(0) {
        match c {
            c if c.is_whitespace() || c == '\u{feff}' => {
                lx.bump();
            }
            '/' if lx.at(1) == Some('/') => lx.line_comment(),
            '/' if lx.at(1) == Some('*') => lx.block_comment()?,
            '"' => {
                let line = lx.line;
                let value = lx.quoted()?;
                lx.push(Tok::Str(value), line);
            }
            '\'' => lx.quote()?,
            c if is_ident_start(c) => lx.word()?,
            c if c.is_ascii_digit() => lx.number(),
            '(' | '[' | '{' => {
                lx.push(Tok::Open(c), lx.line);
                lx.i += 1;
            }
            ')' | ']' | '}' => {
                lx.push(Tok::Close(c), lx.line);
                lx.i += 1;
            }
            c => {
                lx.push(Tok::Punct(c), lx.line);
                lx.i += 1;
            }
        }
    }
    Ok(lx.out)
}
