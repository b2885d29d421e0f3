//! Progressive disclosure of North's own system prompt, with the prompt
//! system North ships: a section too long to show whole (a long
//! `AGENTS.md`) is rendered as a summary, the request offers the
//! disclosure tool the prompt system chose (`read_section`, or
//! `open_sections` for a section with tools), and calls are answered here
//! by `north_prompt::dispatch_disclosure_tool` against the prompt the model
//! saw. An opened section stays open for the rest of the session.

use north_prompt::{
    DisclosureError, RenderedPrompt, VisibilityOverrides, dispatch_disclosure_tool,
};
use north_protocol::{ToolCall, ToolOutcome, ToolSpec};
use serde_json::json;

use super::Agent;

/// What the session knows of its system prompt's disclosure.
#[derive(Debug, Default)]
pub(super) struct Disclosure {
    /// The system prompt of the latest step, as the model saw it.
    pub rendered: Option<RenderedPrompt>,
    /// Sections the model opened.
    pub opened: VisibilityOverrides,
}

impl Disclosure {
    /// The disclosure tools the latest system prompt offers (none when
    /// nothing is summarized).
    pub fn tools(&self) -> Vec<ToolSpec> {
        self.rendered
            .as_ref()
            .map(|r| r.tools().to_vec())
            .unwrap_or_default()
    }
}

impl Agent {
    /// Answers `call` when it is a disclosure tool of the latest system
    /// prompt; `None` for every other call.
    pub(super) fn disclosure_call(&mut self, call: &ToolCall) -> Option<ToolOutcome> {
        let rendered = self.disclosure.rendered.as_ref()?;
        // Only the tools this prompt offered: `open_sections` for summarized
        // sections that carry tools, `read_section` for the others.
        if !rendered.tools().iter().any(|t| t.name == call.name) {
            return None;
        }
        Some(
            match dispatch_disclosure_tool(rendered, &call.name, &call.arguments)? {
                Ok(markdown) => ToolOutcome::ok(json!(markdown)),
                Err(DisclosureError::ExpansionRequired(request)) => {
                    self.disclosure.opened.apply(&request);
                    ToolOutcome::ok(json!({
                        "opened": request.section_keys,
                        "note": "the full sections are in your instructions from your next step on",
                    }))
                }
                Err(e) => ToolOutcome::err(e.to_string()),
            },
        )
    }
}
