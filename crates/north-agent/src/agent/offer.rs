//! Which of North's tools a turn offers. A few help only in some
//! sessions — reading or stopping a background command, fetching a web
//! page — and cost bytes in every request; they are held back until the
//! session needs them. Four return what the project card in the system
//! prompt already shows (the root listing, hot files, languages, the
//! README's start) and are held back for good: they stay for `north tool`
//! and MCP clients, which have no card. The decision is taken at the start of a turn
//! only, so a turn's requests share one tool list (and its prompt cache).
//! A held-back tool is still run when the model calls it; a change is
//! recorded in the session's trace.

use std::collections::BTreeSet;

use north_protocol::{Capability, ContentBlock, Role, ServerTool, ToolSpec, TraceKind};
use serde_json::json;

use super::Agent;

/// Tools held back until a background command was started.
const BACKGROUND: &[&str] = &["shell_output", "shell_kill"];

/// Tools held back until the session reaches for the web.
const WEB: &[&str] = &["web_fetch"];

/// Tools whose answer the project card in the system prompt already holds.
const CARD: &[&str] = &["list_root", "hotfiles", "detect_languages", "read_readme"];

/// What this session has shown it needs (once true, true for the session).
#[derive(Debug, Default)]
pub(super) struct Offer {
    /// A background command was started.
    background: bool,
    /// The web was asked for: a network grant, a search configured, or
    /// an address in the user's words.
    web: bool,
    /// The tools held back this turn (`None`: before the first turn).
    held: Option<BTreeSet<&'static str>>,
}

impl Offer {
    /// Whether `name` is offered this turn.
    fn offers(&self, name: &str) -> bool {
        self.held.as_ref().is_none_or(|held| !held.contains(name))
    }
}

impl Agent {
    /// Decides, at the start of a turn (the user's `input`, when there is
    /// one), which tools this turn holds back.
    pub(super) fn offer_turn(&mut self, input: Option<&str>) {
        let background = self.offer.background || self.background_seen();
        let web = self.offer.web || input.is_some_and(names_a_web_address) || self.web_wanted();
        let mut held: BTreeSet<&'static str> = CARD.iter().copied().collect();
        if !background {
            held.extend(BACKGROUND.iter().copied());
        }
        if !web {
            held.extend(WEB.iter().copied());
        }
        // Recorded when this process first decides and whenever it
        // changes: what each turn's requests left out can be read back.
        if self.offer.held.as_ref() != Some(&held) {
            self.services
                .tracer
                .record(TraceKind::ToolsOffered, json!({"held": held}));
        }
        self.offer = Offer {
            background,
            web,
            held: Some(held),
        };
    }

    /// The specs of the registry's tools this turn offers.
    pub(super) fn offered_specs(&self) -> Vec<ToolSpec> {
        self.services
            .tools
            .specs()
            .into_iter()
            .filter(|s| self.offer.offers(&s.name))
            .collect()
    }

    /// Whether a background command was started in this session: one is
    /// listed by the shell, or the history holds a background start.
    fn background_seen(&self) -> bool {
        !self.services.ctx.shell.jobs().list().is_empty()
            || self.conv.messages.iter().any(|m| {
                m.content.iter().any(|b| {
                    matches!(b, ContentBlock::ToolCall(c)
                        if c.name == "shell_run" && c.arguments.get("background").and_then(serde_json::Value::as_bool) == Some(true))
                })
            })
    }

    /// Whether the session reaches for the web: a network grant, a web
    /// search it offers, or a web address in something the user wrote.
    fn web_wanted(&self) -> bool {
        let granted = self
            .conv
            .state
            .capabilities_granted
            .iter()
            .chain(&self.services.ctx.capabilities)
            .any(|c| matches!(c, Capability::Net | Capability::NetHost(_)));
        let searches = self.services.tools.get("web_search").is_some()
            || self.opts.server_tools.contains(&ServerTool::WebSearch);
        granted
            || searches
            || self.conv.messages.iter().any(|m| {
                m.role == Role::User
                    && m.content.iter().any(
                        |b| matches!(b, ContentBlock::Text { text } if names_a_web_address(text)),
                    )
            })
    }
}

/// Whether `text` holds a web address (`https://…`, `http://…`, `www.…`).
fn names_a_web_address(text: &str) -> bool {
    text.contains("https://") || text.contains("http://") || text.contains("www.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_found_in_the_users_words() {
        assert!(names_a_web_address("read https://docs.rs/serde please"));
        assert!(names_a_web_address("see www.example.org"));
        assert!(!names_a_web_address("fix the parser in src/http.rs"));
    }
}
