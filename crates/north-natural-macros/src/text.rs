//! Block text at expansion time: sentinel detection, bindings and
//! `{ident}` interpolation.

use north_text::dedent;

/// The sentinel line that makes a string a natural block.
const SENTINEL: &str = "natural";

/// After skipping blank lines, the first line must be exactly `natural`;
/// returns the program after it, dedented, without surrounding blank lines.
fn after_sentinel(text: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    if lines.next()? != SENTINEL {
        return None;
    }
    let rest: Vec<&str> = lines.collect();
    let program = dedent(&rest.join("\n"));
    let program: Vec<&str> = program
        .lines()
        .skip_while(|l| l.is_empty())
        .map(str::trim_end)
        .collect();
    Some(program.join("\n").trim_end().to_owned())
}

/// The program of a doc comment (its lines joined), when it is a block.
pub(crate) fn docstring_program(doc: &str) -> Option<String> {
    after_sentinel(&dedent(doc))
}

/// The program of a string literal statement, when it is a block.
pub(crate) fn inline_program(literal: &str) -> Option<String> {
    after_sentinel(literal)
}

/// A `<name>` or `<:name>` binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub name: String,
    pub writable: bool,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The bindings of a program in order of first appearance; a name bound
/// both ways is writable.
pub(crate) fn bindings(program: &str) -> Vec<Binding> {
    let mut out: Vec<Binding> = Vec::new();
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '<' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let writable = chars.get(j) == Some(&':');
        if writable {
            j += 1;
        }
        let start = j;
        if chars.get(j).is_some_and(|c| is_ident_start(*c)) {
            while chars.get(j).is_some_and(|c| is_ident_char(*c)) {
                j += 1;
            }
            if chars.get(j) == Some(&'>') {
                let name: String = chars[start..j].iter().collect();
                match out.iter_mut().find(|b| b.name == name) {
                    Some(b) => b.writable |= writable,
                    None => out.push(Binding { name, writable }),
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Bindings written with a path (`<user.name>`, `<:cfg.level>`): a binding
/// names a whole variable, so these would be silently plain text. Memory
/// fields (`<memory.notes>`) are the model's business and are left alone.
pub(crate) fn dotted_bindings(program: &str) -> Vec<String> {
    let chars: Vec<char> = program.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '<' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if chars.get(j) == Some(&':') {
            j += 1;
        }
        let mut parts = 0;
        loop {
            if !chars.get(j).is_some_and(|c| is_ident_start(*c)) {
                break;
            }
            while chars.get(j).is_some_and(|c| is_ident_char(*c)) {
                j += 1;
            }
            parts += 1;
            if chars.get(j) == Some(&'.') {
                j += 1;
            } else {
                break;
            }
        }
        if parts > 1 && chars.get(j) == Some(&'>') {
            let shown: String = chars[i..=j].iter().collect();
            if !shown.trim_start_matches(['<', ':']).starts_with("memory.") {
                out.push(shown);
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// A piece of an interpolated program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Var(String),
}

/// Splits a program into text and `{ident}` pieces; `{{` and `}}` are
/// literal braces.
pub(crate) fn interpolation(program: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = program.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut name = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '}' {
                        closed = true;
                        break;
                    }
                    name.push(c);
                }
                let valid = name.chars().next().is_some_and(is_ident_start)
                    && name.chars().all(is_ident_char);
                if !closed || !valid {
                    return Err(format!(
                        "invalid interpolation `{{{name}{}` in natural block: write `{{name}}` to insert a variable, or `{{{{` and `}}}}` for literal braces",
                        if closed { "}" } else { "" }
                    ));
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Var(name));
            }
            '}' => {
                return Err(
                    "unmatched `}` in natural block: write `}}` for a literal brace".to_owned(),
                );
            }
            other => text.push(other),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_rules() {
        assert_eq!(inline_program("natural\nDo <x>.").unwrap(), "Do <x>.");
        assert_eq!(
            inline_program("\n\nnatural\n    Line one\n      indented\n").unwrap(),
            "Line one\n  indented"
        );
        assert_eq!(inline_program("natural").unwrap(), "");
        assert!(inline_program("Natural\nx").is_none());
        assert!(inline_program(" natural\nx").is_none());
        assert!(inline_program("natural \nx").is_none());
        assert!(inline_program("naturally\nx").is_none());
        assert!(inline_program("hello natural").is_none());
        assert_eq!(docstring_program(" natural\n Do it.").unwrap(), "Do it.");
        assert!(docstring_program(" Adds numbers.\n natural").is_none());
    }

    #[test]
    fn dotted_bindings_are_found() {
        assert_eq!(
            dotted_bindings("Use <user.name> and <:cfg.level.max>, not <memory.notes> or a < b.c"),
            vec!["<user.name>".to_string(), "<:cfg.level.max>".to_string()]
        );
        assert!(dotted_bindings("<plain> and <:out>").is_empty());
    }

    #[test]
    fn bindings_are_extracted() {
        let b = bindings(
            "Read <text>, set <:label>; then <label> again and <:n1>. a < b, <a.b>, <1x>, <:>",
        );
        assert_eq!(
            b,
            vec![
                Binding {
                    name: "text".into(),
                    writable: false
                },
                Binding {
                    name: "label".into(),
                    writable: true
                },
                Binding {
                    name: "n1".into(),
                    writable: true
                },
            ]
        );
    }

    #[test]
    fn interpolation_pieces() {
        assert_eq!(
            interpolation("Hi {name}, {{literal}} {x1}").unwrap(),
            vec![
                Piece::Text("Hi ".into()),
                Piece::Var("name".into()),
                Piece::Text(", {literal} ".into()),
                Piece::Var("x1".into()),
            ]
        );
        assert!(interpolation("{a.b}").is_err());
        assert!(interpolation("{}").is_err());
        assert!(interpolation("{open").is_err());
        assert!(interpolation("close}").is_err());
        assert!(interpolation("{\"json\": 1}").is_err());
    }
}
