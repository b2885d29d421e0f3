//! The palette: every colour the UI uses, in one place, so the look stays
//! consistent and a terminal with few colours still reads well.

use ratatui::style::{Color, Modifier, Style};

/// The user's own messages.
pub fn user() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
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
    Style::new().fg(Color::Yellow)
}

/// Inline code and code blocks.
pub fn code() -> Style {
    Style::new().fg(Color::Magenta)
}

/// Headings.
pub fn heading() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
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
    Style::new().fg(Color::Cyan)
}

/// File headers in a diff.
pub fn file() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// The selected option of a prompt.
pub fn selected() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

/// The status line.
pub fn status() -> Style {
    Style::new().fg(Color::Gray)
}

/// Keys named in hints.
pub fn key() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}
