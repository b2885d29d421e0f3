//! The checks a template's texts pass before anything renders: section
//! templates and summaries when the [`crate::PromptTemplate`] is built, body
//! overrides when they are attached (and again when a render applies them).
//! Both go through [`check_placeholder_names`], so a placeholder is judged
//! by one rule wherever its text comes from.

use std::any::TypeId;
use std::collections::BTreeMap;

use crate::disclosure::{OPEN_SECTIONS_TOOL, READ_SECTION_TOOL};
use crate::error::PromptValidationError;
use crate::path::{SectionPath, SectionVisibility};
use crate::section::{ErasedSection, SectionNode};
use crate::text::{ParsedTemplate, dedent, is_valid_section_key};

/// The one placeholder rule: every name must be a field of the section's
/// params type or a name the section fills itself.
pub(crate) fn check_placeholder_names(
    path: &SectionPath,
    section: &dyn ErasedSection,
    fields: &[String],
    placeholders: impl IntoIterator<Item = String>,
) -> Result<(), PromptValidationError> {
    let provided = section.provided_fields();
    for placeholder in placeholders {
        if !fields.contains(&placeholder) && !provided.contains(&placeholder) {
            let mut available = fields.to_vec();
            available.extend(provided);
            return Err(PromptValidationError::UnknownPlaceholder {
                path: path.clone(),
                placeholder,
                params_type: section.params_type_name(),
                available,
            });
        }
    }
    Ok(())
}

/// The params fields of `section`, or the error saying its params type is
/// not a struct.
fn params_fields(
    path: &SectionPath,
    section: &dyn ErasedSection,
) -> Result<Vec<String>, PromptValidationError> {
    section
        .params_fields()
        .map_err(|_| PromptValidationError::ParamsNotStruct {
            path: path.clone(),
            params_type: section.params_type_name(),
        })
}

/// The section at `path` in `nodes`, if any.
pub(crate) fn find_section<'t>(
    nodes: &'t [SectionNode],
    path: &SectionPath,
) -> Option<&'t SectionNode> {
    let mut nodes = nodes;
    let mut found = None;
    for key in path.keys() {
        let node = nodes.iter().find(|n| n.key() == key)?;
        nodes = node.children();
        found = Some(node);
    }
    found
}

/// Paths of every section under `nodes`, depth-first.
pub(crate) fn section_paths(nodes: &[SectionNode]) -> Vec<SectionPath> {
    fn walk(nodes: &[SectionNode], parent: &SectionPath, out: &mut Vec<SectionPath>) {
        for node in nodes {
            let path = parent.child(node.key());
            out.push(path.clone());
            walk(node.children(), &path, out);
        }
    }
    let mut out = Vec::new();
    walk(nodes, &SectionPath::default(), &mut out);
    out
}

/// Checks the body overrides of one prompt (path → template) against its
/// section tree: the path must name a section, the section must accept
/// overrides, and the template (dedented, as sections render it) must parse
/// and name only fields its params type has. Paths are checked in order;
/// the first problem is the error.
pub(crate) fn check_overrides(
    sections: &[SectionNode],
    overrides: &BTreeMap<SectionPath, String>,
) -> Result<(), PromptValidationError> {
    for (path, template) in overrides {
        let Some(node) = find_section(sections, path) else {
            return Err(PromptValidationError::UnknownOverridePath {
                path: path.clone(),
                available: section_paths(sections),
            });
        };
        let section = node.erased();
        if !section.accepts_overrides() {
            return Err(PromptValidationError::OverrideNotAccepted { path: path.clone() });
        }
        let parsed = ParsedTemplate::parse(&dedent(template)).map_err(|error| {
            PromptValidationError::InvalidTemplate {
                path: path.clone(),
                error,
            }
        })?;
        let fields = params_fields(path, section)?;
        check_placeholder_names(
            path,
            section,
            &fields,
            parsed.placeholders().map(str::to_owned),
        )?;
    }
    Ok(())
}

/// Walks a section tree when a template is built: keys, params types,
/// placeholders and tool names.
#[derive(Default)]
pub(crate) struct Validator {
    /// Fields per params type, so each type's schema is generated once.
    fields: Vec<(TypeId, Vec<String>)>,
    tools: Vec<String>,
    /// Rough size of a render, to allocate the text once.
    pub(crate) size_hint: usize,
    /// Whether any section declares resources (a clone must then copy them).
    pub(crate) has_resources: bool,
}

impl Validator {
    pub(crate) fn level(
        &mut self,
        nodes: &[SectionNode],
        parent: &SectionPath,
    ) -> Result<(), PromptValidationError> {
        let mut keys: Vec<&str> = Vec::new();
        for node in nodes {
            let section = node.erased();
            let key = section.key();
            let path = parent.child(key);
            if !is_valid_section_key(key) {
                return Err(PromptValidationError::InvalidSectionKey {
                    path,
                    key: key.to_owned(),
                });
            }
            if keys.contains(&key) {
                return Err(PromptValidationError::DuplicateSectionKey { path });
            }
            keys.push(key);

            let type_id = section.params_type_id();
            let index = match self.fields.iter().position(|(t, _)| *t == type_id) {
                Some(index) => index,
                None => {
                    let fields = params_fields(&path, section)?;
                    self.fields.push((type_id, fields));
                    self.fields.len() - 1
                }
            };
            let placeholders =
                section
                    .placeholders()
                    .map_err(|error| PromptValidationError::InvalidTemplate {
                        path: path.clone(),
                        error,
                    })?;
            let fields = self
                .fields
                .get(index)
                .map(|(_, f)| f.as_slice())
                .unwrap_or(&[]);
            check_placeholder_names(&path, section, fields, placeholders)?;
            for tool in section.tools() {
                if tool.name == OPEN_SECTIONS_TOOL || tool.name == READ_SECTION_TOOL {
                    return Err(PromptValidationError::ReservedToolName {
                        path,
                        tool: tool.name.clone(),
                    });
                }
                if self.tools.contains(&tool.name) {
                    return Err(PromptValidationError::DuplicateToolName {
                        path,
                        tool: tool.name.clone(),
                    });
                }
                self.tools.push(tool.name.clone());
            }
            // Known now, so refused now: a section that is always
            // summarized must have a summary to show.
            if section.fixed_visibility() == Some(SectionVisibility::Summary)
                && !section.has_summary()
            {
                return Err(PromptValidationError::MissingSummary { path });
            }
            self.has_resources |= !section.resources().is_empty();
            self.size_hint += section.title().len() + section.fingerprint().len() + 16;
            self.level(section.children(), &path)?;
        }
        Ok(())
    }
}
