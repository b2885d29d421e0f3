//! Text helpers shared by North's runtime crates and its procedural-macro
//! crates, which can depend on nothing heavier.
//!
//! Main item: [`dedent`], the one implementation of removing block text's
//! common indentation (prompt templates at run time, natural blocks at
//! compile time).
//!
//! This crate must stay dependency-free and do no I/O.

/// Python's `textwrap.dedent`: removes the longest leading whitespace
/// (spaces and tabs, compared character by character) common to every
/// non-blank line, and empties whitespace-only lines. A trailing `\r` is
/// dropped from every line. Nothing else changes: the first line keeps any
/// indentation beyond the margin, and leading or trailing blank lines stay.
pub fn dedent(text: &str) -> String {
    let mut margin: Option<&str> = None;
    for line in text.lines() {
        let content = line.trim_start_matches([' ', '\t']);
        if content.is_empty() {
            continue;
        }
        let indent = &line[..line.len() - content.len()];
        margin = Some(match margin {
            None => indent,
            Some(m) if indent.starts_with(m) => m,
            Some(m) if m.starts_with(indent) => indent,
            Some(m) => {
                let common = m
                    .bytes()
                    .zip(indent.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &m[..common]
            }
        });
    }
    let margin = margin.unwrap_or("");
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').map_or(line, |l| l);
        if line.trim_start_matches([' ', '\t']).is_empty() {
            continue;
        }
        out.push_str(line.strip_prefix(margin).unwrap_or(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::dedent;

    #[test]
    fn the_common_margin_goes_and_deeper_indentation_stays() {
        assert_eq!(dedent("    a\n      b\n    c"), "a\n  b\nc");
        assert_eq!(dedent("      first\n    second"), "  first\nsecond");
    }

    #[test]
    fn blank_lines_are_emptied_and_do_not_count() {
        assert_eq!(dedent("\n    a\n  \n    b\n"), "\na\n\nb\n");
    }

    #[test]
    fn tabs_and_spaces_only_share_an_identical_prefix() {
        assert_eq!(dedent("\t a\n\t b"), "a\nb");
        assert_eq!(dedent("\ta\n    b"), "\ta\n    b");
    }

    #[test]
    fn crlf_lines_lose_their_carriage_return() {
        assert_eq!(dedent("  a\r\n  b\r\n"), "a\nb\n");
    }
}
