//! Completion popups over the composer: the command palette (`/` lists
//! commands — North's, the user's custom ones, MCP prompts — filtered as
//! you type, then their finite arguments: sessions for `/resume`, models
//! for `/model`) and the `@` file picker (fuzzy, from the project's
//! gitignore-aware file list the binary gives in
//! [`FileFinder`](crate::hooks::FileFinder)).
//! ↑/↓ choose, Tab completes, Enter completes and sends a command, Esc
//! closes.

use ratatui::text::{Line, Span};

use crate::app::App;
use crate::popup::{Popup, PopupKind, Suggestion};
use crate::style;

/// Rows of suggestions shown at once.
const SHOWN: usize = 8;

/// Commands that take a value from a finite list, and where it comes from.
const ARGUMENT_COMMANDS: &[&str] = &["/resume", "/model", "/theme"];

/// A command's name (its first word) out of a `COMMANDS` entry.
fn name_of(entry: &str) -> &str {
    entry.split_whitespace().next().unwrap_or(entry)
}

/// How `name` matches `query` (both with their slash): 0 prefix, 1 inside,
/// 2 in order; `None` when it does not.
fn rank(name: &str, query: &str) -> Option<u8> {
    if name.starts_with(query) {
        return Some(0);
    }
    let q = query.trim_start_matches('/');
    if name.contains(q) {
        return Some(1);
    }
    let mut chars = name.chars();
    q.chars().all(|c| chars.any(|n| n == c)).then_some(2)
}

impl App {
    /// Every command the palette offers: (name, arguments hint, about).
    fn palette_commands(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = crate::help::COMMANDS
            .iter()
            .map(|(c, about)| (c.to_string(), about.to_string()))
            .collect();
        for c in &self.info.commands {
            all.push((format!("{} [args]", c.name), c.description.clone()));
        }
        if let Some(view) = &self.info.mcp.0 {
            for server in view() {
                for (command, about) in server.prompts {
                    all.push((command, about));
                }
            }
        }
        all
    }

    fn command_suggestions(&self, text: &str) -> Vec<Suggestion> {
        let mut ranked: Vec<(u8, usize, Suggestion)> = self
            .palette_commands()
            .into_iter()
            .enumerate()
            .filter_map(|(i, (entry, about))| {
                let name = name_of(&entry).to_string();
                let r = rank(&name, text)?;
                let takes_args = entry.contains(' ');
                Some((
                    r,
                    i,
                    Suggestion {
                        label: entry,
                        about,
                        text: if takes_args { format!("{name} ") } else { name },
                    },
                ))
            })
            .collect();
        ranked.sort_by_key(|(r, i, _)| (*r, *i));
        ranked.into_iter().map(|(_, _, s)| s).collect()
    }

    fn argument_suggestions(&mut self, command: &str, arg: &str) -> Vec<Suggestion> {
        let values: Vec<(String, String)> = match command {
            "/resume" => {
                if self.session_cache.is_none() {
                    let current = self.info.session_id.clone();
                    self.session_cache = Some(
                        crate::slash::list(self)
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|(id, _)| *id != current)
                            .collect(),
                    );
                }
                self.session_cache.clone().unwrap_or_default()
            }
            "/theme" => theme_choices(),
            "/model" => self.model_choices(),
            _ => Vec::new(),
        };
        values
            .into_iter()
            .filter(|(v, about)| v.contains(arg) || about.contains(arg))
            .map(|(v, about)| Suggestion {
                text: format!("{command} {v}"),
                label: v,
                about,
            })
            .collect()
    }

    /// `/model` choices: the server's own models first (the user's
    /// config), then the catalogue's, each once; the current one marked.
    fn model_choices(&self) -> Vec<(String, String)> {
        // The provider's own first (the user's config), then the
        // catalogue's, each once.
        let served = match &self.info.provider_models.0 {
            Some(list) => list(),
            None => Vec::new(),
        };
        let mut models: Vec<(String, String)> = served
            .into_iter()
            .map(|m| {
                let about = match north_llm::catalog::lookup(&m) {
                    Some(info) => format!(
                        "{} · {}k context",
                        self.info.provider,
                        info.context_window / 1000
                    ),
                    None => format!("{} · served", self.info.provider),
                };
                (m, about)
            })
            .collect();
        for m in north_llm::catalog::MODELS {
            if models.iter().any(|(id, _)| id == m.id) {
                continue;
            }
            models.push((
                m.id.to_string(),
                format!(
                    "{} · {}k context",
                    m.family.provider(),
                    m.context_window / 1000
                ),
            ));
        }
        // The model this session is on, marked (and listed first
        // when neither the server nor the catalogue names it).
        let current = &self.info.model;
        match models.iter_mut().find(|(id, _)| id == current) {
            Some((_, about)) => about.push_str(" · current"),
            None if !current.is_empty() => {
                models.insert(
                    0,
                    (current.clone(), format!("{} · current", self.info.provider)),
                );
            }
            None => {}
        }
        models
    }

    /// The `@` token being typed at the end of the composer, if any.
    fn mention_query(text: &str) -> Option<(&str, &str)> {
        let start = text.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let token = &text[start..];
        let query = token.strip_prefix('@')?;
        // A line range is being typed, or an MCP resource (`@server:uri`).
        if query.contains(':') {
            return None;
        }
        Some((&text[..start], query))
    }

    /// Recomputes the popup for the composer's text (after every edit).
    pub(crate) fn refresh_popup(&mut self) {
        let text = self.composer.text();
        if self.popup.as_ref().is_some_and(|p| p.for_text == text)
            || self.popup_dismissed.as_deref() == Some(text.as_str())
        {
            if self.popup_dismissed.as_deref() == Some(text.as_str()) {
                self.popup = None;
            }
            return;
        }
        self.popup_dismissed = None;
        let popup = if text.contains('\n') {
            None
        } else if text.starts_with('/') && !text.contains(' ') {
            Some((PopupKind::Command, self.command_suggestions(&text)))
        } else if let Some((command, arg)) = text.split_once(' ')
            && ARGUMENT_COMMANDS.contains(&command)
            && !arg.contains(' ')
        {
            Some((PopupKind::Argument, self.argument_suggestions(command, arg)))
        } else if let Some((before, query)) = Self::mention_query(&text)
            && let Some(find) = &self.info.files.0
        {
            let items = find(query, 50)
                .into_iter()
                .map(|path| Suggestion {
                    text: format!("{before}@{path} "),
                    label: path,
                    about: String::new(),
                })
                .collect();
            Some((PopupKind::File, items))
        } else {
            None
        };
        if !text.starts_with("/resume") {
            self.session_cache = None;
        }
        self.popup = popup
            .filter(|(_, items): &(PopupKind, Vec<Suggestion>)| !items.is_empty())
            .map(|(kind, items)| Popup {
                kind,
                items,
                selected: 0,
                for_text: text,
            });
    }

    /// Puts the chosen suggestion in the composer.
    fn complete(&mut self) -> Option<PopupKind> {
        let popup = self.popup.take()?;
        let chosen = popup.items.get(popup.selected)?;
        self.composer.set_text(&chosen.text);
        self.refresh_popup();
        Some(popup.kind)
    }

    /// Keys while a popup is shown; `None` when the key is not the popup's.
    pub(crate) fn popup_key(
        &mut self,
        key: &crossterm::event::KeyEvent,
    ) -> Option<Vec<crate::app::Action>> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let popup = self.popup.as_mut()?;
        let n = popup.items.len().max(1);
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT | KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up => popup.selected = (popup.selected + n - 1) % n,
            KeyCode::Down => popup.selected = (popup.selected + 1) % n,
            KeyCode::Tab => {
                self.complete();
            }
            KeyCode::Esc => {
                self.popup_dismissed = Some(popup.for_text.clone());
                self.popup = None;
            }
            KeyCode::Enter if plain => {
                let text = self.composer.text();
                let exact = popup.kind != PopupKind::File
                    && popup.items.iter().any(|s| s.text.trim_end() == text);
                if !exact {
                    match self.complete() {
                        // A file is put in the message, which is not sent yet.
                        Some(PopupKind::File) | None => return Some(Vec::new()),
                        // A command that wants arguments waits for them.
                        Some(PopupKind::Command) if self.composer.text().ends_with(' ') => {
                            return Some(Vec::new());
                        }
                        Some(_) => {}
                    }
                }
                self.popup = None;
                return Some(self.submit());
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// The popup's rows for the live area.
    pub(crate) fn popup_lines(&self) -> Vec<Line<'static>> {
        let Some(popup) = &self.popup else {
            return Vec::new();
        };
        let first = popup.selected.saturating_sub(SHOWN - 1);
        let width = popup
            .items
            .iter()
            .skip(first)
            .take(SHOWN)
            .map(|s| s.label.chars().count())
            .max()
            .unwrap_or(0)
            .min(48);
        let mut out: Vec<Line<'static>> = popup
            .items
            .iter()
            .enumerate()
            .skip(first)
            .take(SHOWN)
            .map(|(i, s)| {
                let (mark, st) = if i == popup.selected {
                    ("▶ ", style::selected())
                } else {
                    ("  ", ratatui::style::Style::new())
                };
                let label = crate::wrap::truncate(&s.label, 48);
                Line::from(vec![
                    Span::styled(mark, style::ok()),
                    Span::styled(format!("{label:<width$}  "), st),
                    Span::styled(crate::wrap::truncate(&s.about, 70), style::dim()),
                ])
            })
            .collect();
        let what = match popup.kind {
            PopupKind::Command => "tab complete · enter run",
            PopupKind::Argument => "tab complete · enter run",
            PopupKind::File => "tab/enter attach",
        };
        out.push(Line::from(Span::styled(
            format!(
                "  {} of {} · ↑/↓ choose · {what} · esc close",
                popup.selected + 1,
                popup.items.len()
            ),
            style::dim(),
        )));
        out
    }
}

/// `/theme` choices, the current one marked.
fn theme_choices() -> Vec<(String, String)> {
    [
        ("dark", "for a dark background"),
        ("light", "for a light background"),
        ("ansi", "the terminal's 16 colours only"),
    ]
    .iter()
    .map(|(name, about)| {
        let current = crate::style::theme().name() == *name;
        let about = if current {
            format!("{about} · current")
        } else {
            (*about).to_string()
        };
        ((*name).to_string(), about)
    })
    .collect()
}
