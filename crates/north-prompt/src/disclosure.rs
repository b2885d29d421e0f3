//! Progressive disclosure: the `open_sections` and `read_section` tools a
//! rendered prompt injects when sections are summarized, the summarized
//! sections it records, and what a disclosure call can fail with. The
//! handlers, which read a rendered prompt, are in [`crate::reply`].
//!
//! `open_sections` never returns a result: it asks the caller to stop the
//! turn, apply the requested visibility overrides to the session's
//! [`crate::VisibilityOverrides`] and render again. `read_section` returns a
//! summarized section's full markdown and changes nothing.

use north_protocol::{ApprovalPolicy, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::strict_schema_for;
use crate::path::{SectionPath, VisibilityExpansionRequired};

/// Name of the tool that expands summarized sections.
pub const OPEN_SECTIONS_TOOL: &str = "open_sections";
/// Name of the tool that reads a summarized section without expanding it.
pub const READ_SECTION_TOOL: &str = "read_section";

/// Arguments of `open_sections`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenSectionsParams {
    /// Keys of the summarized sections to expand (dot notation for nested sections: `parent.child`).
    pub section_keys: Vec<String>,
    /// Why the full content is needed.
    pub reason: String,
}

/// Arguments of `read_section`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSectionParams {
    /// Key of the summarized section to read (dot notation for nested sections: `parent.child`).
    pub section_key: String,
}

/// The strict schema of a tool's arguments, without the root description
/// (the tool's own description says it; every request carries these bytes).
fn input_schema<T: JsonSchema>() -> Value {
    let mut schema = strict_schema_for::<T>();
    if let Some(map) = schema.as_object_mut() {
        map.remove("description");
    }
    schema
}

/// The `open_sections` tool as declared to models.
pub fn open_sections_tool() -> ToolSpec {
    ToolSpec {
        name: OPEN_SECTIONS_TOOL.to_owned(),
        description: "Expand summarized sections of these instructions: their full content and \
                      tools become available from the next turn on."
            .to_owned(),
        input_schema: input_schema::<OpenSectionsParams>(),
        approval: ApprovalPolicy::None,
    }
}

/// The `read_section` tool as declared to models.
pub fn read_section_tool() -> ToolSpec {
    ToolSpec {
        name: READ_SECTION_TOOL.to_owned(),
        description: "Read the full content of a summarized section of these instructions \
                      without expanding it."
            .to_owned(),
        input_schema: input_schema::<ReadSectionParams>(),
        approval: ApprovalPolicy::None,
    }
}

/// What a disclosure tool call produced other than a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisclosureError {
    /// `open_sections` succeeded: stop the turn, apply the overrides,
    /// render again.
    #[error(transparent)]
    ExpansionRequired(VisibilityExpansionRequired),
    /// The arguments do not fit the tool's schema.
    #[error("{tool}: invalid arguments: {message}")]
    InvalidArguments {
        /// The tool.
        tool: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The key names no summarized section.
    #[error("{tool}: `{key}` is not a summarized section (summarized: {})", .available.join(", "))]
    UnknownSection {
        /// The tool.
        tool: &'static str,
        /// The key given.
        key: String,
        /// The keys that would have worked.
        available: Vec<String>,
    },
}

impl DisclosureError {
    /// The tool result to send back to the model for a bad call; `None` for
    /// [`DisclosureError::ExpansionRequired`], which is not a tool result.
    pub fn to_tool_outcome(&self) -> Option<ToolOutcome> {
        match self {
            DisclosureError::ExpansionRequired(_) => None,
            other => Some(ToolOutcome::err(other.to_string())),
        }
    }
}

/// A section rendered as its summary, as the disclosure tools see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarizedSection {
    pub(crate) path: SectionPath,
    pub(crate) key: String,
    pub(crate) has_tools: bool,
    pub(crate) markdown: String,
}

impl SummarizedSection {
    /// Path of the section.
    pub fn path(&self) -> &SectionPath {
        &self.path
    }

    /// Its dot-notation key, as the model uses it.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether it (or an enabled descendant) declares tools; such sections
    /// point to `open_sections`, the others to `read_section`.
    pub fn has_tools(&self) -> bool {
        self.has_tools
    }

    /// The section's full markdown (heading included; children at their
    /// current visibility), as `read_section` returns it.
    pub fn markdown(&self) -> &str {
        &self.markdown
    }
}
