//! The start header: what a new user needs on the first screen — the
//! version, the provider and model, the project, whether its settings
//! apply, the mode and the keys to begin with. It is history like any
//! other item, so it scrolls away with the conversation.

use ratatui::text::{Line, Span};

use crate::app::App;
use crate::style;

impl App {
    /// Puts the start header at the top of the timeline.
    pub fn start_header(&mut self) {
        let info = &self.info;
        let mut title = String::from("North");
        if !info.version.is_empty() {
            title.push_str(&format!(" {}", info.version));
        }
        if !info.provider.is_empty() && info.provider != info.model {
            title.push_str(&format!(" · {}", info.provider));
        }
        if !info.model.is_empty() {
            title.push_str(&format!(" · {}", info.model));
        }
        let mut body = Vec::new();
        if !info.root.as_os_str().is_empty() {
            body.push(Line::from(vec![
                Span::styled("project  ", style::dim()),
                Span::raw(home_relative(&info.root)),
            ]));
        }
        if let Some(trust) = &info.trust {
            body.push(Line::from(vec![
                Span::styled("trust    ", style::dim()),
                Span::raw(trust.clone()),
            ]));
        }
        if !info.instructions.is_empty() {
            body.push(Line::from(vec![
                Span::styled("follows  ", style::dim()),
                Span::raw(info.instructions.join(", ")),
            ]));
        }
        body.push(Line::from(vec![
            Span::styled("mode     ", style::dim()),
            Span::raw(crate::plan::mode_label(info.mode).to_string()),
            Span::styled("  (shift+tab changes it)", style::dim()),
        ]));
        body.push(Line::from(Span::styled(
            "/help lists every key · !cmd runs a command yourself · @ attaches a file",
            style::dim(),
        )));
        self.notice(title, body);
    }
}

/// `path` with the home directory written `~`.
fn home_relative(path: &std::path::Path) -> String {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
        && let Ok(rest) = path.strip_prefix(&home)
    {
        if rest.as_os_str().is_empty() {
            return "~".into();
        }
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}
