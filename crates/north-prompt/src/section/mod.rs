//! Sections: the [`Section`] trait every section implements, the type-erased
//! [`SectionNode`] the template tree holds, and the [`RenderContext`] a
//! section renders with.

mod markdown;
mod workspace;

use std::any::{Any, TypeId};
use std::fmt;

use north_protocol::ToolSpec;
use north_protocol::json_kind;
use serde::Serialize;
use serde_json::{Map, Value};

pub use markdown::MarkdownSection;
pub use workspace::{Filesystem, HostFilesystem, WorkspaceSection};

use crate::error::PromptRenderError;
use crate::params::{Params, params_fields};
use crate::path::{SectionPath, SectionVisibility};
use crate::resources::{ResourceRegistry, Rewiring};
use crate::text::{ParsedTemplate, TemplateError, push_value, substitute_with};

/// One titled part of a prompt, rendered under a numbered heading.
///
/// Implement it for custom sections; [`MarkdownSection`] covers templated
/// text. Only [`Section::title`], [`Section::key`] and
/// [`Section::render_body`] are required. A clone shares nothing mutable
/// with the original: `Clone` must copy the resources the section holds,
/// and [`Section::clone_with`] wires them as a [`Rewiring`] says.
pub trait Section: Clone + Send + Sync + 'static {
    /// The params struct the section renders from.
    type Params: Params;

    /// Heading text (without numbering).
    fn title(&self) -> &str;

    /// Key, unique among siblings; matches `^[a-z0-9][a-z0-9._-]{0,63}$`.
    fn key(&self) -> &str;

    /// The section's body markdown, without heading. When
    /// `cx.override_template()` is set, the body should come from it.
    fn render_body(
        &self,
        params: &Self::Params,
        cx: &RenderContext<'_>,
    ) -> Result<String, PromptRenderError>;

    /// The summary shown when the section renders with
    /// [`SectionVisibility::Summary`]; `None` when it has none.
    fn render_summary(
        &self,
        params: &Self::Params,
        cx: &RenderContext<'_>,
    ) -> Result<Option<String>, PromptRenderError> {
        let _ = (params, cx);
        Ok(None)
    }

    /// Child sections, rendered after the body one level deeper.
    fn children(&self) -> &[SectionNode] {
        &[]
    }

    /// Tools the model may call while the section is enabled and shown.
    fn tools(&self) -> &[ToolSpec] {
        &[]
    }

    /// Whether the section (and its children) render for these params.
    fn is_enabled(&self, params: &Self::Params) -> bool {
        let _ = params;
        true
    }

    /// Params used when none of the type are bound.
    fn default_params(&self) -> Option<&Self::Params> {
        None
    }

    /// Whether body overrides may replace this section's template.
    fn accepts_overrides(&self) -> bool {
        true
    }

    /// Full or summary, for these params (a visibility override wins).
    fn visibility(&self, params: &Self::Params) -> SectionVisibility {
        let _ = params;
        SectionVisibility::Full
    }

    /// The visibility when it is fixed at construction (`None`: computed
    /// from params at render): lets a template refuse, when it is built, a
    /// section fixed to `SUMMARY` that has no summary.
    fn fixed_visibility(&self) -> Option<SectionVisibility> {
        None
    }

    /// Whether the section has summary text to show under `SUMMARY`.
    fn has_summary(&self) -> bool {
        false
    }

    /// Resources this section needs; children's are collected separately.
    fn resources(&self) -> ResourceRegistry {
        ResourceRegistry::new()
    }

    /// A copy for another prompt, with the resources it holds (and its
    /// children's) rewired through `rewiring`: the instances provided for
    /// their types, or copies shared the way the originals were (the spec's
    /// `section.clone(**kwargs)`).
    ///
    /// The default is `Clone::clone`, right for a section that holds no
    /// resources and no children. A section holding either overrides it —
    /// [`ResourceRegistry::clone_with`] and [`SectionNode::clone_with`] do
    /// the work — so that one instance shared across the original prompt
    /// stays one instance in the clone.
    fn clone_with(&self, rewiring: &mut Rewiring) -> Self {
        let _ = rewiring;
        self.clone()
    }

    /// Every placeholder the section's templates use, checked against the
    /// params' fields (and [`Section::provided_fields`]) when the template
    /// is built.
    fn placeholders(&self) -> Result<Vec<String>, TemplateError> {
        Ok(Vec::new())
    }

    /// Placeholder names the section fills itself, beyond its params.
    fn provided_fields(&self) -> Vec<String> {
        Vec::new()
    }

    /// The section's own content for the template's content hash (its
    /// templates); title, key, tools and children are hashed separately.
    fn fingerprint(&self) -> String {
        String::new()
    }
}

/// Where and how a section is being rendered.
pub struct RenderContext<'a> {
    pub(crate) path: &'a [&'a str],
    pub(crate) override_template: Option<&'a str>,
}

impl RenderContext<'_> {
    /// The section's path.
    pub fn path(&self) -> SectionPath {
        SectionPath::from_refs(self.path)
    }

    /// The body template an override supplies for this section, if any (only
    /// given to sections that accept overrides).
    pub fn override_template(&self) -> Option<&str> {
        self.override_template
    }

    /// Runs `Template.substitute` on `template` with the fields of `params`,
    /// mapping failures to [`PromptRenderError`] with this section's path.
    pub fn substitute<P: Serialize>(
        &self,
        template: &str,
        params: &P,
    ) -> Result<String, PromptRenderError> {
        let values = self.params_object(params)?;
        self.substitute_values(template, &values, &[])
    }

    /// A section-specific render failure at this section's path.
    pub fn error(&self, message: impl Into<String>) -> PromptRenderError {
        PromptRenderError::Section {
            path: self.path(),
            message: message.into(),
        }
    }

    pub(crate) fn params_object<P: Serialize>(
        &self,
        params: &P,
    ) -> Result<Map<String, Value>, PromptRenderError> {
        match serde_json::to_value(params) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(PromptRenderError::ParamsSerialization {
                path: self.path(),
                params_type: std::any::type_name::<P>(),
                message: format!("got {}", json_kind(&other)),
            }),
            Err(err) => Err(PromptRenderError::ParamsSerialization {
                path: self.path(),
                params_type: std::any::type_name::<P>(),
                message: err.to_string(),
            }),
        }
    }

    fn fill(
        &self,
        name: &str,
        values: &Map<String, Value>,
        extra: &[(&str, &str)],
        out: &mut String,
    ) -> Result<(), PromptRenderError> {
        if let Some((_, value)) = extra.iter().find(|(k, _)| *k == name) {
            out.push_str(value);
            return Ok(());
        }
        match values.get(name) {
            Some(Value::Null) => Err(PromptRenderError::MissingField {
                path: self.path(),
                field: name.to_owned(),
                params_type: "",
            }),
            Some(value) => {
                push_value(out, value);
                Ok(())
            }
            None => Err(PromptRenderError::Substitution {
                path: self.path(),
                error: TemplateError::MissingKey {
                    name: name.to_owned(),
                },
            }),
        }
    }

    pub(crate) fn substitute_values(
        &self,
        template: &str,
        values: &Map<String, Value>,
        extra: &[(&str, &str)],
    ) -> Result<String, PromptRenderError> {
        substitute_with(
            template,
            |name, out| self.fill(name, values, extra, out),
            |error| PromptRenderError::Substitution {
                path: self.path(),
                error,
            },
        )
    }

    pub(crate) fn render_parsed(
        &self,
        parsed: &ParsedTemplate,
        values: &Map<String, Value>,
        extra: &[(&str, &str)],
    ) -> Result<String, PromptRenderError> {
        let mut out = String::new();
        parsed.render_with(&mut out, |name, out| self.fill(name, values, extra, out))?;
        Ok(out)
    }
}

/// Params resolved for one section: borrowed from the bound store or a
/// default, or a fresh `Default` value.
pub(crate) enum ParamsRef<'a> {
    Borrowed(&'a dyn Any),
    Owned(Box<dyn Any + Send + Sync>),
}

impl ParamsRef<'_> {
    pub(crate) fn get(&self) -> &dyn Any {
        match self {
            ParamsRef::Borrowed(p) => *p,
            ParamsRef::Owned(p) => p.as_ref(),
        }
    }
}

/// Object-safe view of a [`Section`], with params passed as `Any`.
pub(crate) trait ErasedSection: Send + Sync + 'static {
    fn title(&self) -> &str;
    fn key(&self) -> &str;
    fn children(&self) -> &[SectionNode];
    fn tools(&self) -> &[ToolSpec];
    fn accepts_overrides(&self) -> bool;
    fn resources(&self) -> ResourceRegistry;
    fn params_type_id(&self) -> TypeId;
    fn params_type_name(&self) -> &'static str;
    fn params_fields(&self) -> Result<Vec<String>, String>;
    fn placeholders(&self) -> Result<Vec<String>, TemplateError>;
    fn provided_fields(&self) -> Vec<String>;
    fn fingerprint(&self) -> String;
    fn default_params_any(&self) -> Option<&dyn Any>;
    fn resolve<'a>(
        &'a self,
        bound: Option<&'a dyn Any>,
        first_default: Option<&'a dyn Any>,
    ) -> ParamsRef<'a>;
    fn is_enabled(&self, params: &dyn Any) -> bool;
    fn visibility(&self, params: &dyn Any) -> SectionVisibility;
    fn fixed_visibility(&self) -> Option<SectionVisibility>;
    fn has_summary(&self) -> bool;
    fn render_body(
        &self,
        params: &dyn Any,
        cx: &RenderContext<'_>,
    ) -> Result<String, PromptRenderError>;
    fn render_summary(
        &self,
        params: &dyn Any,
        cx: &RenderContext<'_>,
    ) -> Result<Option<String>, PromptRenderError>;
    fn clone_box(&self) -> Box<dyn ErasedSection>;
    fn clone_with_box(&self, rewiring: &mut Rewiring) -> Box<dyn ErasedSection>;
    fn as_any(&self) -> &dyn Any;
}

fn mismatch<S: Section>(cx: &RenderContext<'_>) -> PromptRenderError {
    cx.error(format!(
        "internal: params are not of type `{}`",
        std::any::type_name::<S::Params>()
    ))
}

impl<S: Section> ErasedSection for S {
    fn title(&self) -> &str {
        Section::title(self)
    }
    fn key(&self) -> &str {
        Section::key(self)
    }
    fn children(&self) -> &[SectionNode] {
        Section::children(self)
    }
    fn tools(&self) -> &[ToolSpec] {
        Section::tools(self)
    }
    fn accepts_overrides(&self) -> bool {
        Section::accepts_overrides(self)
    }
    fn resources(&self) -> ResourceRegistry {
        Section::resources(self)
    }
    fn params_type_id(&self) -> TypeId {
        TypeId::of::<S::Params>()
    }
    fn params_type_name(&self) -> &'static str {
        std::any::type_name::<S::Params>()
    }
    fn params_fields(&self) -> Result<Vec<String>, String> {
        params_fields::<S::Params>()
    }
    fn placeholders(&self) -> Result<Vec<String>, TemplateError> {
        Section::placeholders(self)
    }
    fn provided_fields(&self) -> Vec<String> {
        Section::provided_fields(self)
    }
    fn fingerprint(&self) -> String {
        Section::fingerprint(self)
    }
    fn default_params_any(&self) -> Option<&dyn Any> {
        Section::default_params(self).map(|p| p as &dyn Any)
    }
    fn resolve<'a>(
        &'a self,
        bound: Option<&'a dyn Any>,
        first_default: Option<&'a dyn Any>,
    ) -> ParamsRef<'a> {
        match bound
            .or_else(|| self.default_params_any())
            .or(first_default)
        {
            Some(p) => ParamsRef::Borrowed(p),
            None => ParamsRef::Owned(Box::new(S::Params::default())),
        }
    }
    fn is_enabled(&self, params: &dyn Any) -> bool {
        params
            .downcast_ref::<S::Params>()
            .is_none_or(|p| Section::is_enabled(self, p))
    }
    fn visibility(&self, params: &dyn Any) -> SectionVisibility {
        params
            .downcast_ref::<S::Params>()
            .map_or(SectionVisibility::Full, |p| Section::visibility(self, p))
    }
    fn fixed_visibility(&self) -> Option<SectionVisibility> {
        Section::fixed_visibility(self)
    }
    fn has_summary(&self) -> bool {
        Section::has_summary(self)
    }
    fn render_body(
        &self,
        params: &dyn Any,
        cx: &RenderContext<'_>,
    ) -> Result<String, PromptRenderError> {
        let p = params
            .downcast_ref::<S::Params>()
            .ok_or_else(|| mismatch::<S>(cx))?;
        Section::render_body(self, p, cx).map_err(|e| with_params_type::<S>(e))
    }
    fn render_summary(
        &self,
        params: &dyn Any,
        cx: &RenderContext<'_>,
    ) -> Result<Option<String>, PromptRenderError> {
        let p = params
            .downcast_ref::<S::Params>()
            .ok_or_else(|| mismatch::<S>(cx))?;
        Section::render_summary(self, p, cx).map_err(|e| with_params_type::<S>(e))
    }
    fn clone_box(&self) -> Box<dyn ErasedSection> {
        Box::new(self.clone())
    }
    fn clone_with_box(&self, rewiring: &mut Rewiring) -> Box<dyn ErasedSection> {
        Box::new(Section::clone_with(self, rewiring))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Fills in the params type of a missing-field error raised without it.
fn with_params_type<S: Section>(err: PromptRenderError) -> PromptRenderError {
    match err {
        PromptRenderError::MissingField {
            path,
            field,
            params_type: "",
        } => PromptRenderError::MissingField {
            path,
            field,
            params_type: std::any::type_name::<S::Params>(),
        },
        other => other,
    }
}

/// A section of any type, as the template tree holds it. Build one from any
/// [`Section`] with `.into()`; cloning it clones the section and its
/// children deeply, resources included.
pub struct SectionNode {
    inner: Box<dyn ErasedSection>,
}

impl SectionNode {
    /// Wraps a section.
    pub fn new<S: Section>(section: S) -> Self {
        SectionNode {
            inner: Box::new(section),
        }
    }

    /// Heading text.
    pub fn title(&self) -> &str {
        self.inner.title()
    }

    /// Key.
    pub fn key(&self) -> &str {
        self.inner.key()
    }

    /// Child sections.
    pub fn children(&self) -> &[SectionNode] {
        self.inner.children()
    }

    /// Declared tools.
    pub fn tools(&self) -> &[ToolSpec] {
        self.inner.tools()
    }

    /// Whether body overrides apply to it.
    pub fn accepts_overrides(&self) -> bool {
        self.inner.accepts_overrides()
    }

    /// Its params type's name.
    pub fn params_type_name(&self) -> &'static str {
        self.inner.params_type_name()
    }

    /// A deep copy whose resources are rewired through `rewiring` (see
    /// [`Section::clone_with`]).
    pub fn clone_with(&self, rewiring: &mut Rewiring) -> SectionNode {
        SectionNode {
            inner: self.inner.clone_with_box(rewiring),
        }
    }

    /// The resources the section itself declares (not its children's).
    pub fn resources(&self) -> ResourceRegistry {
        self.inner.resources()
    }

    /// The concrete section, if it has type `S`.
    pub fn downcast_ref<S: Section>(&self) -> Option<&S> {
        self.inner.as_any().downcast_ref::<S>()
    }

    pub(crate) fn erased(&self) -> &dyn ErasedSection {
        self.inner.as_ref()
    }
}

impl Clone for SectionNode {
    fn clone(&self) -> Self {
        SectionNode {
            inner: self.inner.clone_box(),
        }
    }
}

impl fmt::Debug for SectionNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SectionNode")
            .field("key", &self.key())
            .field("title", &self.title())
            .field("params", &self.params_type_name())
            .field("children", &self.children())
            .finish()
    }
}

impl<S: Section> From<S> for SectionNode {
    fn from(section: S) -> Self {
        SectionNode::new(section)
    }
}
