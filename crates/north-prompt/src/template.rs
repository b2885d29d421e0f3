//! `PromptTemplate`: the validated blueprint of a prompt — `(ns, key)`, an
//! ordered section tree, resources and the structured output declaration.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use serde::{Deserialize, Serialize};

use crate::error::PromptValidationError;
use crate::output::{Output, StructuredOutputConfig, declare};
use crate::path::{PromptOverrides, SectionPath};
use crate::resources::{ResourceRegistry, Rewiring};
use crate::section::SectionNode;
use crate::validate::{Validator, check_overrides, find_section, section_paths};

pub(crate) struct TemplateInner {
    pub(crate) descriptor: Arc<PromptDescriptor>,
    pub(crate) sections: Vec<SectionNode>,
    pub(crate) resources: ResourceRegistry,
    pub(crate) output: Option<StructuredOutputConfig>,
    /// Rough size of a render, to allocate the text once.
    pub(crate) size_hint: usize,
    /// Whether the template or any section declares resources: only then
    /// does a clone have instances of its own to make.
    pub(crate) has_resources: bool,
}

/// Identifies what was rendered: the prompt's `(ns, key)`, its name, and a
/// hash of the template's content for versioning.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PromptDescriptor {
    /// Namespace.
    pub ns: String,
    /// Key.
    pub key: String,
    /// Optional human name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Hex SHA-256 of the template's canonical structure (titles, keys,
    /// templates, tools, output schema, child order). It changes exactly
    /// when what the template can send changes.
    pub content_hash: String,
}

/// A validated prompt blueprint producing output `O`: `()` for none, a
/// struct for a JSON object, `Vec<T>` for an array of objects. Build one
/// with [`PromptTemplate::builder`].
///
/// A clone never shares resource state with the original: it gets its own
/// instances, wired into its own sections ([`PromptTemplate::clone_with`]
/// with an empty [`Rewiring`]). The rest of a template is immutable, so a
/// template that declares no resources anywhere is shared, and its clone
/// costs a reference count.
pub struct PromptTemplate<O = ()> {
    inner: Arc<TemplateInner>,
    _output: PhantomData<fn() -> O>,
}

impl<O> Clone for PromptTemplate<O> {
    fn clone(&self) -> Self {
        self.clone_with(&mut Rewiring::new())
    }
}

impl<O> fmt::Debug for PromptTemplate<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptTemplate")
            .field("descriptor", &self.inner.descriptor)
            .field("sections", &self.inner.sections)
            .field("resources", &self.inner.resources)
            .field("output", &self.inner.output)
            .finish()
    }
}

impl PromptTemplate<()> {
    /// Starts a template for prompt `(ns, key)` with no structured output;
    /// declare one with [`TemplateBuilder::output`].
    pub fn builder(ns: impl Into<String>, key: impl Into<String>) -> TemplateBuilder<()> {
        TemplateBuilder {
            ns: ns.into(),
            key: key.into(),
            name: None,
            sections: Vec::new(),
            resources: ResourceRegistry::new(),
            allow_extra_keys: false,
            _output: PhantomData,
        }
    }
}

impl<O> PromptTemplate<O> {
    pub(crate) fn inner(&self) -> &TemplateInner {
        &self.inner
    }

    /// Namespace.
    pub fn ns(&self) -> &str {
        &self.inner.descriptor.ns
    }

    /// Key.
    pub fn key(&self) -> &str {
        &self.inner.descriptor.key
    }

    /// Optional name.
    pub fn name(&self) -> Option<&str> {
        self.inner.descriptor.name.as_deref()
    }

    /// Root sections in order.
    pub fn sections(&self) -> &[SectionNode] {
        &self.inner.sections
    }

    /// Resources declared on the template itself.
    pub fn resources(&self) -> &ResourceRegistry {
        &self.inner.resources
    }

    /// The structured output declaration, if any.
    pub fn structured_output(&self) -> Option<&StructuredOutputConfig> {
        self.inner.output.as_ref()
    }

    /// `(ns, key, name)` and the content hash.
    pub fn descriptor(&self) -> &PromptDescriptor {
        &self.inner.descriptor
    }

    /// Paths of every section, depth-first (the targets overrides can name).
    pub fn section_paths(&self) -> Vec<SectionPath> {
        section_paths(&self.inner.sections)
    }

    /// The section at `path`, if any.
    pub fn section(&self, path: &SectionPath) -> Option<&SectionNode> {
        find_section(&self.inner.sections, path)
    }

    /// Checks the body overrides `overrides` holds for this prompt's
    /// `(ns, key)` (entries for other prompts are not looked at) with the
    /// rule section templates met when the template was built: each path
    /// names a section
    /// ([`UnknownOverridePath`](PromptValidationError::UnknownOverridePath)),
    /// the section accepts overrides
    /// ([`OverrideNotAccepted`](PromptValidationError::OverrideNotAccepted)),
    /// and the template parses and names only fields of the section's params
    /// type ([`InvalidTemplate`](PromptValidationError::InvalidTemplate),
    /// [`UnknownPlaceholder`](PromptValidationError::UnknownPlaceholder)).
    /// The first problem in path order is returned.
    pub fn check_overrides(
        &self,
        overrides: &PromptOverrides,
    ) -> Result<(), PromptValidationError> {
        match overrides.for_prompt(self.ns(), self.key()) {
            Some(mine) => check_overrides(&self.inner.sections, mine),
            None => Ok(()),
        }
    }

    /// A copy wired through `rewiring`: the template's resources and every
    /// section's are rewired (see [`Rewiring`]), depth-first in the order
    /// the prompt collects them. The structure, the descriptor and the
    /// content hash are the original's.
    pub fn clone_with(&self, rewiring: &mut Rewiring) -> Self {
        if !self.inner.has_resources && !rewiring.provides_any() {
            // Nothing mutable to separate: share the immutable blueprint.
            return PromptTemplate {
                inner: self.inner.clone(),
                _output: PhantomData,
            };
        }
        let inner = &self.inner;
        let resources = inner.resources.clone_with(rewiring);
        let sections = inner
            .sections
            .iter()
            .map(|section| section.clone_with(rewiring))
            .collect();
        PromptTemplate {
            inner: Arc::new(TemplateInner {
                descriptor: inner.descriptor.clone(),
                sections,
                resources,
                output: inner.output.clone(),
                size_hint: inner.size_hint,
                has_resources: inner.has_resources,
            }),
            _output: PhantomData,
        }
    }

    /// Resolves a dot-notation key (`parent.child`) to a section path;
    /// keys that themselves contain dots are matched against the tree.
    pub fn resolve_dotted(&self, dotted: &str) -> Option<SectionPath> {
        fn walk(nodes: &[SectionNode], rest: &str, acc: &mut Vec<String>) -> bool {
            for node in nodes {
                let key = node.key();
                if rest == key {
                    acc.push(key.to_owned());
                    return true;
                }
                if let Some(tail) = rest.strip_prefix(key).and_then(|t| t.strip_prefix('.')) {
                    acc.push(key.to_owned());
                    if walk(node.children(), tail, acc) {
                        return true;
                    }
                    acc.pop();
                }
            }
            false
        }
        let mut acc = Vec::new();
        walk(&self.inner.sections, dotted, &mut acc).then(|| SectionPath::new(acc))
    }
}

/// Builder of a [`PromptTemplate`]; [`TemplateBuilder::build`] validates.
pub struct TemplateBuilder<O> {
    ns: String,
    key: String,
    name: Option<String>,
    sections: Vec<SectionNode>,
    resources: ResourceRegistry,
    allow_extra_keys: bool,
    _output: PhantomData<fn() -> O>,
}

impl<O> fmt::Debug for TemplateBuilder<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TemplateBuilder")
            .field("ns", &self.ns)
            .field("key", &self.key)
            .field("sections", &self.sections)
            .finish_non_exhaustive()
    }
}

impl<O> TemplateBuilder<O> {
    /// Sets the human name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Appends a root section.
    #[must_use]
    pub fn section(mut self, section: impl Into<SectionNode>) -> Self {
        self.sections.push(section.into());
        self
    }

    /// Appends root sections.
    #[must_use]
    pub fn sections(mut self, sections: impl IntoIterator<Item = SectionNode>) -> Self {
        self.sections.extend(sections);
        self
    }

    /// Sets the template's own resources.
    #[must_use]
    pub fn resources(mut self, resources: ResourceRegistry) -> Self {
        self.resources = resources;
        self
    }

    /// Tolerates unknown keys in structured output (default false).
    #[must_use]
    pub fn allow_extra_keys(mut self, allow: bool) -> Self {
        self.allow_extra_keys = allow;
        self
    }

    /// Declares the structured output: a struct `T` for a JSON object,
    /// `Vec<T>` for an array of objects.
    pub fn output<T: Output>(self) -> TemplateBuilder<T> {
        TemplateBuilder {
            ns: self.ns,
            key: self.key,
            name: self.name,
            sections: self.sections,
            resources: self.resources,
            allow_extra_keys: self.allow_extra_keys,
            _output: PhantomData,
        }
    }

    /// Validates and builds the template: non-empty `ns` and `key`, section
    /// keys matching `^[a-z0-9][a-z0-9._-]{0,63}$` and unique among
    /// siblings, params types that are structs, every placeholder naming a
    /// field, unique tool names, and an output type that is a struct or a
    /// `Vec` of structs. The first problem found (depth-first) is returned.
    pub fn build(self) -> Result<PromptTemplate<O>, PromptValidationError>
    where
        O: Output,
    {
        if self.ns.trim().is_empty() {
            return Err(PromptValidationError::EmptyNamespace);
        }
        if self.key.trim().is_empty() {
            return Err(PromptValidationError::EmptyKey { ns: self.ns });
        }
        let mut validator = Validator::default();
        validator.level(&self.sections, &SectionPath::default())?;
        let output = declare::<O>(self.allow_extra_keys)?;
        let content_hash = content_hash(
            &self.ns,
            &self.key,
            self.name.as_deref(),
            &self.sections,
            output.as_ref(),
        );
        Ok(PromptTemplate {
            inner: Arc::new(TemplateInner {
                descriptor: Arc::new(PromptDescriptor {
                    ns: self.ns,
                    key: self.key,
                    name: self.name,
                    content_hash,
                }),
                size_hint: validator.size_hint,
                has_resources: validator.has_resources || !self.resources.is_empty(),
                sections: self.sections,
                resources: self.resources,
                output,
            }),
            _output: PhantomData,
        })
    }
}

/// Hex SHA-256 over a canonical JSON form of the template: keys sorted,
/// no whitespace, so the hash does not depend on map ordering features.
fn content_hash(
    ns: &str,
    key: &str,
    name: Option<&str>,
    sections: &[SectionNode],
    output: Option<&StructuredOutputConfig>,
) -> String {
    fn section_value(node: &SectionNode) -> Value {
        let section = node.erased();
        json!({
            "title": section.title(),
            "key": section.key(),
            "content": section.fingerprint(),
            "accepts_overrides": section.accepts_overrides(),
            "tools": section.tools().iter().map(|t| json!({
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema,
            })).collect::<Vec<_>>(),
            "children": section.children().iter().map(section_value).collect::<Vec<_>>(),
        })
    }
    let structure = json!({
        "ns": ns,
        "key": key,
        "name": name,
        "sections": sections.iter().map(section_value).collect::<Vec<_>>(),
        "output": output.map(|o| json!({
            "container": o.container(),
            "allow_extra_keys": o.allow_extra_keys(),
            "schema": o.schema(),
        })),
    });
    let mut canonical = String::new();
    write_canonical(&structure, &mut canonical);
    let digest = Sha256::digest(canonical.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        use std::fmt::Write as _;
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::Map;

    #[test]
    fn canonical_json_sorts_keys() {
        let mut a = Map::new();
        a.insert("b".into(), json!(1));
        a.insert("a".into(), json!({"z": [1, {"y": 2, "x": 3}]}));
        let mut out = String::new();
        write_canonical(&Value::Object(a), &mut out);
        assert_eq!(out, r#"{"a":{"z":[1,{"x":3,"y":2}]},"b":1}"#);
    }
}
