//! Progressive disclosure: the `open_sections` and `read_section` tools a
//! rendered prompt injects when sections are summarized, and their pure
//! handlers.
//!
//! `open_sections` never returns a result: it asks the caller to stop the
//! turn, apply the requested visibility overrides to the session's
//! [`crate::VisibilityOverrides`] and render again. `read_section` returns a
//! summarized section's full markdown and changes nothing.

use std::collections::BTreeMap;
use std::convert::Infallible;

use north_protocol::{ApprovalPolicy, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::strict_schema_for;
use crate::path::{SectionPath, SectionVisibility};
use crate::render::RenderedPrompt;

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

/// The request `open_sections` raises: the visibility overrides to apply
/// before rendering again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sections {} must be expanded before continuing: {reason}", .section_keys.join(", "))]
pub struct VisibilityExpansionRequired {
    /// Path → visibility to set (the requested sections and any summarized
    /// ancestors, all `FULL`).
    pub requested_overrides: BTreeMap<SectionPath, SectionVisibility>,
    /// The model's reason.
    pub reason: String,
    /// The keys as the model gave them.
    pub section_keys: Vec<String>,
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

fn parse_args<T: for<'de> Deserialize<'de>>(
    tool: &'static str,
    args: &Value,
) -> Result<T, DisclosureError> {
    serde_json::from_value(args.clone()).map_err(|err| DisclosureError::InvalidArguments {
        tool,
        message: err.to_string(),
    })
}

fn find<'a, O>(
    rendered: &'a RenderedPrompt<O>,
    tool: &'static str,
    key: &str,
) -> Result<&'a SummarizedSection, DisclosureError> {
    let key = key.trim();
    rendered
        .summarized_sections()
        .iter()
        .find(|s| s.key == key)
        .ok_or_else(|| DisclosureError::UnknownSection {
            tool,
            key: key.to_owned(),
            available: rendered
                .summarized_sections()
                .iter()
                .map(|s| s.key.clone())
                .collect(),
        })
}

/// Handles an `open_sections` call: on valid arguments it always "fails"
/// with [`DisclosureError::ExpansionRequired`] carrying the overrides.
pub fn handle_open_sections<O>(
    rendered: &RenderedPrompt<O>,
    args: &Value,
) -> Result<Infallible, DisclosureError> {
    let params: OpenSectionsParams = parse_args(OPEN_SECTIONS_TOOL, args)?;
    if params.section_keys.is_empty() {
        return Err(DisclosureError::InvalidArguments {
            tool: OPEN_SECTIONS_TOOL,
            message: "section_keys is empty; name at least one section".to_owned(),
        });
    }
    if params.reason.trim().is_empty() {
        return Err(DisclosureError::InvalidArguments {
            tool: OPEN_SECTIONS_TOOL,
            message: "reason is empty; say why the full content is needed".to_owned(),
        });
    }
    let mut requested_overrides = BTreeMap::new();
    let mut section_keys: Vec<String> = Vec::new();
    for key in &params.section_keys {
        let section = find(rendered, OPEN_SECTIONS_TOOL, key)?;
        // A section inside a summarized parent only shows once the parent
        // is open too.
        for summarized in rendered.summarized_sections() {
            if section.path.keys().starts_with(summarized.path.keys()) {
                requested_overrides.insert(summarized.path.clone(), SectionVisibility::Full);
            }
        }
        if !section_keys.contains(&section.key) {
            section_keys.push(section.key.clone());
        }
    }
    Err(DisclosureError::ExpansionRequired(
        VisibilityExpansionRequired {
            requested_overrides,
            reason: params.reason,
            section_keys,
        },
    ))
}

/// Handles a `read_section` call: the section's full markdown.
pub fn handle_read_section<O>(
    rendered: &RenderedPrompt<O>,
    args: &Value,
) -> Result<String, DisclosureError> {
    let params: ReadSectionParams = parse_args(READ_SECTION_TOOL, args)?;
    Ok(find(rendered, READ_SECTION_TOOL, &params.section_key)?
        .markdown
        .clone())
}

/// Routes a tool call to the matching disclosure handler; `None` when
/// `tool` is not a disclosure tool.
pub fn dispatch_disclosure_tool<O>(
    rendered: &RenderedPrompt<O>,
    tool: &str,
    args: &Value,
) -> Option<Result<String, DisclosureError>> {
    match tool {
        OPEN_SECTIONS_TOOL => {
            Some(handle_open_sections(rendered, args).map(|never| match never {}))
        }
        READ_SECTION_TOOL => Some(handle_read_section(rendered, args)),
        _ => None,
    }
}
