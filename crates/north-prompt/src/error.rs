//! The errors of template construction and rendering.

use crate::path::SectionPath;
use crate::text::TemplateError;

/// A template, a bind or a body override that cannot be valid, found before
/// anything renders: when the template is built, when overrides are
/// attached, and again (wrapped in [`PromptRenderError::Override`]) when a
/// render is given overrides nobody checked.
///
/// Every variant names where the problem is: the section path in dot
/// notation and, for placeholders, the placeholder and the params type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptValidationError {
    /// `ns` was empty.
    #[error("prompt namespace `ns` is empty; every prompt needs a namespace")]
    EmptyNamespace,
    /// `key` was empty.
    #[error("prompt key is empty in namespace `{ns}`; every prompt needs a key")]
    EmptyKey {
        /// The prompt's namespace.
        ns: String,
    },
    /// A section key does not match `^[a-z0-9][a-z0-9._-]{0,63}$`.
    #[error("section `{path}`: key `{key}` must match ^[a-z0-9][a-z0-9._-]{{0,63}}$")]
    InvalidSectionKey {
        /// Path of the section (its parent's path plus the bad key).
        path: SectionPath,
        /// The offending key.
        key: String,
    },
    /// Two siblings share a key, so paths would be ambiguous.
    #[error("section `{path}`: a sibling section already uses this key")]
    DuplicateSectionKey {
        /// Path of the second section with the key.
        path: SectionPath,
    },
    /// A section's params type is not a struct with named fields (the
    /// analogue of an unspecialized or non-dataclass section).
    #[error("section `{path}`: params type `{params_type}` is not a struct with named fields")]
    ParamsNotStruct {
        /// Path of the section.
        path: SectionPath,
        /// The params type's name.
        params_type: &'static str,
    },
    /// A placeholder names no field of the section's params type.
    #[error(
        "section `{path}`: placeholder `{placeholder}` names no field of `{params_type}` (fields: {})",
        if .available.is_empty() { "none".to_owned() } else { .available.join(", ") }
    )]
    UnknownPlaceholder {
        /// Path of the section.
        path: SectionPath,
        /// The placeholder's name.
        placeholder: String,
        /// The params type's name.
        params_type: &'static str,
        /// The names a placeholder may use.
        available: Vec<String>,
    },
    /// A section template has a `$` that is not a valid placeholder.
    #[error("section `{path}`: {error}")]
    InvalidTemplate {
        /// Path of the section.
        path: SectionPath,
        /// What is wrong and where in the template.
        error: TemplateError,
    },
    /// Two enabled-or-not sections declare tools with the same name.
    #[error("section `{path}`: tool `{tool}` is already declared by another section")]
    DuplicateToolName {
        /// Path of the second section declaring the tool.
        path: SectionPath,
        /// The tool name.
        tool: String,
    },
    /// A section declares a tool whose name the framework injects.
    #[error("section `{path}`: tool name `{tool}` is reserved for progressive disclosure")]
    ReservedToolName {
        /// Path of the section.
        path: SectionPath,
        /// The tool name.
        tool: String,
    },
    /// The declared output type is not a struct or an array of structs.
    #[error("output type `{output_type}` is not a struct or a Vec of structs: {reason}")]
    OutputNotStruct {
        /// The output type's name.
        output_type: &'static str,
        /// Why its schema was refused.
        reason: String,
    },
    /// A body override names a section path the template does not have.
    #[error(
        "override for section `{path}`: the prompt has no section at this path (sections: {})",
        if .available.is_empty() { "none".to_owned() } else {
            .available.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        }
    )]
    UnknownOverridePath {
        /// The path the override names.
        path: SectionPath,
        /// Every section path of the prompt, depth-first.
        available: Vec<SectionPath>,
    },
    /// A body override targets a section built with
    /// `accepts_overrides == false`.
    #[error("override for section `{path}`: the section does not accept overrides")]
    OverrideNotAccepted {
        /// Path of the section.
        path: SectionPath,
    },
    /// One `bind_all` call supplied the same params type twice.
    #[error("params type `{params_type}` was supplied more than once in one bind call")]
    DuplicateParams {
        /// The params type's name.
        params_type: &'static str,
    },
    /// A section fixed to `SUMMARY` visibility declares no summary text.
    #[error(
        "section `{path}` is always summarized but declares no summary text; add `.summary(...)`"
    )]
    MissingSummary {
        /// Path of the section.
        path: SectionPath,
    },
}

/// A failure while rendering a prompt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptRenderError {
    /// The bound params are not valid (for example a duplicate type).
    #[error(transparent)]
    Invalid(#[from] PromptValidationError),
    /// A body override given to this render was refused, by the same check
    /// [`crate::PromptTemplate::check_overrides`] makes; nothing rendered.
    #[error("body override refused: {0}")]
    Override(PromptValidationError),
    /// A placeholder's field has no value: it serialized to `null` or was
    /// skipped (the analogue of a missing required dataclass field).
    #[error(
        "section `{path}`: field `{field}` of `{params_type}` has no value (it is null or skipped)"
    )]
    MissingField {
        /// Path of the section.
        path: SectionPath,
        /// The field the placeholder names.
        field: String,
        /// The params type's name.
        params_type: &'static str,
    },
    /// `Template.substitute` failed (for example a field serde skipped, or
    /// a custom section's own template).
    #[error("section `{path}`: template substitution failed: {error}")]
    Substitution {
        /// Path of the section.
        path: SectionPath,
        /// The substitution error.
        error: TemplateError,
    },
    /// The params did not serialize to a JSON object.
    #[error(
        "section `{path}`: params of type `{params_type}` did not serialize to a JSON object: {message}"
    )]
    ParamsSerialization {
        /// Path of the section.
        path: SectionPath,
        /// The params type's name.
        params_type: &'static str,
        /// serde's message.
        message: String,
    },
    /// A section resolved to `SUMMARY` visibility but has no summary.
    #[error("section `{path}` is summarized but declares no summary text")]
    MissingSummary {
        /// Path of the section.
        path: SectionPath,
    },
    /// A custom section failed for its own reason.
    #[error("section `{path}`: {message}")]
    Section {
        /// Path of the section.
        path: SectionPath,
        /// What failed.
        message: String,
    },
}
