//! The palette: every colour the UI uses, in one place, so the look stays
//! consistent and a terminal with few colours still reads well.
//!
//! Three themes: `dark` (the default), `light` (blues and darker greys for a
//! light background, code highlighted with a light theme) and `ansi` (the
//! terminal's own 16 colours only: code is not highlighted with RGB
//! colours). The theme is per UI thread, so it is set where the UI runs.

use std::cell::Cell;

use ratatui::style::{Color, Modifier, Style};

/// A palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    /// For a dark background.
    Dark,
    /// For a light background.
    Light,
    /// The terminal's 16 colours only.
    Ansi,
}

impl Theme {
    /// The theme named `name` (`dark`, `light`, `ansi`).
    pub fn named(name: &str) -> Option<Theme> {
        match name.trim() {
            "dark" => Some(Theme::Dark),
            "light" => Some(Theme::Light),
            "ansi" | "16" => Some(Theme::Ansi),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Theme::Dark => "dark",
            Theme::Light => "light",
            Theme::Ansi => "ansi",
        }
    }

    /// The theme for the user's `setting`: theirs, or for `auto` the one
    /// the terminal's background asks for (`light_background` when the
    /// terminal answered the question, else `COLORFGBG` from `env`), else
    /// dark.
    pub fn chosen(
        setting: north_config::ThemeSetting,
        light_background: Option<bool>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Theme {
        use north_config::ThemeSetting;
        match setting {
            ThemeSetting::Dark => Theme::Dark,
            ThemeSetting::Light => Theme::Light,
            ThemeSetting::Ansi => Theme::Ansi,
            ThemeSetting::Auto => match light_background {
                Some(true) => Theme::Light,
                Some(false) => Theme::Dark,
                None => env("COLORFGBG")
                    .and_then(|v| Theme::from_colorfgbg(&v))
                    .unwrap_or(Theme::Dark),
            },
        }
    }

    /// The theme a terminal's `COLORFGBG` (`fg;bg`, set by rxvt, Konsole and
    /// others) asks for: light when its background is colour 7 or 15.
    pub fn from_colorfgbg(value: &str) -> Option<Theme> {
        let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
        Some(if matches!(bg, 7 | 15) {
            Theme::Light
        } else {
            Theme::Dark
        })
    }
}

thread_local! {
    static THEME: Cell<Theme> = const { Cell::new(Theme::Dark) };
}

/// Draws with `theme` from now on (on this thread).
pub fn set_theme(theme: Theme) {
    THEME.with(|t| t.set(theme));
}

/// The theme drawn with.
pub fn theme() -> Theme {
    THEME.with(Cell::get)
}

/// `dark` on a dark background, `light` on a light one.
fn pick(dark: Color, light: Color) -> Color {
    match theme() {
        Theme::Light => light,
        Theme::Dark | Theme::Ansi => dark,
    }
}

/// The user's own messages.
pub fn user() -> Style {
    Style::new()
        .fg(pick(Color::Cyan, Color::Blue))
        .add_modifier(Modifier::BOLD)
}

/// Secondary text: hints, intent bullets, borders.
pub(crate) fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Tool intent lines.
pub fn intent() -> Style {
    Style::new().fg(Color::Blue)
}

/// Success marks.
pub fn ok() -> Style {
    Style::new().fg(Color::Green)
}

/// Failure marks and errors.
pub fn error() -> Style {
    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
}

/// Warnings and notices.
pub fn notice() -> Style {
    match theme() {
        // Yellow on white is hard to read.
        Theme::Light => Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
        Theme::Dark | Theme::Ansi => Style::new().fg(Color::Yellow),
    }
}

/// Inline code and code blocks.
pub fn code() -> Style {
    Style::new().fg(Color::Magenta)
}

/// Headings.
pub fn heading() -> Style {
    Style::new()
        .fg(pick(Color::Cyan, Color::Blue))
        .add_modifier(Modifier::BOLD)
}

/// Added diff lines.
pub fn added() -> Style {
    Style::new().fg(Color::Green)
}

/// Removed diff lines.
pub fn removed() -> Style {
    Style::new().fg(Color::Red)
}

/// Diff hunk headers.
pub(crate) fn hunk() -> Style {
    Style::new().fg(pick(Color::Cyan, Color::Blue))
}

/// File headers in a diff.
pub fn file() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// The selected option of a prompt.
pub fn selected() -> Style {
    Style::new()
        .fg(pick(Color::Black, Color::White))
        .bg(pick(Color::Cyan, Color::Blue))
        .add_modifier(Modifier::BOLD)
}

/// The status line.
pub fn status() -> Style {
    Style::new().fg(pick(Color::Gray, Color::DarkGray))
}

/// Keys named in hints.
pub fn key() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_theme_follows_the_setting_then_the_terminals_background() {
        use north_config::ThemeSetting;
        let env = |bg: &'static str| move |k: &str| (k == "COLORFGBG").then(|| bg.to_string());
        assert_eq!(
            Theme::chosen(ThemeSetting::Auto, None, env("0;15")),
            Theme::Light
        );
        assert_eq!(
            Theme::chosen(ThemeSetting::Auto, None, env("15;default;0")),
            Theme::Dark
        );
        assert_eq!(
            Theme::chosen(ThemeSetting::Auto, None, |_| None),
            Theme::Dark
        );
        assert_eq!(
            Theme::chosen(ThemeSetting::Ansi, Some(true), env("0;15")),
            Theme::Ansi
        );
        // The terminal's own answer wins over the variable.
        assert_eq!(
            Theme::chosen(ThemeSetting::Auto, Some(true), env("15;0")),
            Theme::Light
        );
        assert_eq!(
            Theme::chosen(ThemeSetting::Auto, Some(false), env("0;15")),
            Theme::Dark
        );
        assert_eq!(Theme::from_colorfgbg("nonsense"), None);
    }

    #[test]
    fn a_light_theme_trades_cyan_and_yellow_for_readable_colours() {
        set_theme(Theme::Light);
        assert_eq!(user().fg, Some(Color::Blue));
        assert_ne!(notice().fg, Some(Color::Yellow));
        set_theme(Theme::Ansi);
        assert_eq!(user().fg, Some(Color::Cyan));
        set_theme(Theme::Dark);
    }
}
