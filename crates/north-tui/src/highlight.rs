//! Syntax highlighting of fenced code, with syntect's bundled syntaxes and
//! themes (pure Rust: the fancy-regex engine, no C library). The syntax and
//! theme sets load once, on the first highlighted block.

use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The syntect theme code is drawn with under the UI's theme; none under
/// `ansi` (its RGB colours are what that theme leaves out).
fn theme() -> Option<&'static Theme> {
    static THEMES: OnceLock<ThemeSet> = OnceLock::new();
    let name = match crate::style::theme() {
        crate::style::Theme::Dark => "base16-ocean.dark",
        crate::style::Theme::Light => "InspiredGitHub",
        crate::style::Theme::Ansi => return None,
    };
    THEMES.get_or_init(ThemeSet::load_defaults).themes.get(name)
}

/// Highlights one code block line by line (syntect keeps state across
/// lines, e.g. inside a multi-line string).
pub(crate) struct Highlighter {
    lines: HighlightLines<'static>,
}

impl Highlighter {
    /// A highlighter for a fence's language tag (`rust`, `py`, `json`…);
    /// `None` when the language is unknown or empty.
    pub(crate) fn for_language(lang: &str) -> Option<Self> {
        let lang = lang.trim();
        if lang.is_empty() {
            return None;
        }
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_token(lang)
            .or_else(|| set.find_syntax_by_extension(lang))?;
        Some(Highlighter {
            lines: HighlightLines::new(syntax, theme()?),
        })
    }

    /// The spans of one line (without its newline).
    pub fn line(&mut self, text: &str) -> Vec<Span<'static>> {
        let with_newline = format!("{text}\n");
        match self.lines.highlight_line(&with_newline, syntaxes()) {
            Ok(parts) => parts
                .into_iter()
                .map(|(st, piece)| {
                    let fg = st.foreground;
                    Span::styled(
                        piece.trim_end_matches('\n').to_string(),
                        Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b)),
                    )
                })
                .filter(|s| !s.content.is_empty())
                .collect(),
            Err(_) => vec![Span::styled(text.to_string(), crate::style::code())],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_highlighted_by_theme_and_not_with_rgb_under_ansi() {
        use crate::style::{Theme, set_theme};
        set_theme(Theme::Light);
        assert!(Highlighter::for_language("rust").is_some());
        set_theme(Theme::Ansi);
        assert!(Highlighter::for_language("rust").is_none());
        set_theme(Theme::Dark);
        assert!(Highlighter::for_language("rust").is_some());
    }
}
