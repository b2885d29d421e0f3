//! Reading a model's reply against the prompt it answered: parsing its
//! structured output, and handling the progressive-disclosure tool calls
//! (`open_sections`, `read_section`). Everything here takes a
//! [`RenderedPrompt`]; the modules it builds on never do.

use std::collections::BTreeMap;
use std::convert::Infallible;

use serde::Deserialize;
use serde_json::Value;

use crate::disclosure::{
    DisclosureError, OPEN_SECTIONS_TOOL, OpenSectionsParams, READ_SECTION_TOOL, ReadSectionParams,
    SummarizedSection,
};
use crate::output::{
    Output, OutputParseError, OutputParseErrorKind, parse_output_value, type_mismatch,
};
use crate::path::{SectionVisibility, VisibilityExpansionRequired};
use crate::render::RenderedPrompt;

/// Parses a model's answer as the output `rendered` declares.
///
/// 1. Extracts JSON: a fenced ` ```json ` block if there is one (it must be
///    valid), else the whole message, else the first balanced `{..}` or
///    `[..]` that parses (the declared container's bracket is looked for
///    first).
/// 2. Checks the container: object vs. array, as declared (an array may also
///    come wrapped as `{"items": [..]}`, the strict schema's form).
/// 3. Checks every object against the output type: required fields present,
///    no unknown keys unless `allow_extra_keys`, with conservative
///    coercions only — a numeric string to a number, `"true"`/`"false"` to
///    a boolean, an integral float to an integer.
/// 4. Deserializes into `O`.
pub fn parse_structured_output<O: Output>(
    text: &str,
    rendered: &RenderedPrompt<O>,
) -> Result<O, OutputParseError> {
    let Some(config) = rendered.structured_output() else {
        return Err(OutputParseError::new(
            OutputParseErrorKind::NotDeclared,
            text,
        ));
    };
    let value = parse_output_value(text, config)?;
    let root = if value.is_array() { "items" } else { "" };
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let path = match (root, path.as_str()) {
            (_, ".") => root.to_string(),
            ("items", p) => format!("items{p}"),
            (_, p) => p.to_string(),
        };
        let inner = type_mismatch(&err.inner().to_string());
        let message = if path.is_empty() {
            inner
        } else {
            format!("{path}: {inner}")
        };
        OutputParseError::new(OutputParseErrorKind::InvalidValue { message }, text)
    })
}

/// serde's `invalid type: string "x", expected u32` in the words a model
/// and a user read: `expected integer, found string "x"`. Other messages
/// pass through.
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
