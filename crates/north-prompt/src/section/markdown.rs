//! `MarkdownSection`: dedented, stripped template text with `$name`
//! placeholders filled from the section's params.

use std::sync::Arc;

use north_protocol::ToolSpec;

use super::{RenderContext, Section, SectionNode};
use crate::error::PromptRenderError;
use crate::params::{NoParams, Params};
use crate::path::SectionVisibility;
use crate::resources::{ResourceRegistry, Rewiring};
use crate::text::{ParsedTemplate, TemplateError, dedent};

type Predicate<P> = Arc<dyn Fn(&P) -> bool + Send + Sync>;
type VisibilityFn<P> = Arc<dyn Fn(&P) -> SectionVisibility + Send + Sync>;

enum Visibility<P> {
    Fixed(SectionVisibility),
    Computed(VisibilityFn<P>),
}

impl<P> Clone for Visibility<P> {
    fn clone(&self) -> Self {
        match self {
            Visibility::Fixed(v) => Visibility::Fixed(*v),
            Visibility::Computed(f) => Visibility::Computed(f.clone()),
        }
    }
}

/// A template text plus its parse (kept so a syntax error surfaces when the
/// prompt template is built, with the section's path).
#[derive(Clone)]
struct Text {
    source: String,
    parsed: Result<ParsedTemplate, TemplateError>,
}

impl Text {
    fn new(raw: &str) -> Self {
        let source = dedent(raw);
        let parsed = ParsedTemplate::parse(&source);
        Text { source, parsed }
    }
}

/// The default section: a markdown template whose `$name` / `${name}`
/// placeholders name fields of `P` (`$$` is a literal `$`). The template is
/// dedented and stripped when the section is created.
///
/// ```
/// use north_prompt::{MarkdownSection, SectionVisibility};
/// # #[derive(serde::Serialize, schemars::JsonSchema, Default)]
/// # struct ToneParams { tone: String }
/// let tone = MarkdownSection::<ToneParams>::new("Tone", "tone", "Target tone: ${tone}")
///     .summary("Tone guidance available.")
///     .visibility(SectionVisibility::Summary);
/// assert_eq!(tone.template(), "Target tone: ${tone}");
/// ```
pub struct MarkdownSection<P: Params> {
    title: String,
    key: String,
    template: Text,
    summary: Option<Text>,
    children: Vec<SectionNode>,
    tools: Vec<ToolSpec>,
    enabled: Option<Predicate<P>>,
    default_params: Option<Arc<P>>,
    accepts_overrides: bool,
    visibility: Visibility<P>,
    resources: ResourceRegistry,
}

impl<P: Params> Clone for MarkdownSection<P> {
    /// A copy with its own resources (see [`Section::clone_with`]).
    fn clone(&self) -> Self {
        Section::clone_with(self, &mut Rewiring::new())
    }
}

impl<P: Params> std::fmt::Debug for MarkdownSection<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkdownSection")
            .field("title", &self.title)
            .field("key", &self.key)
            .field("params", &std::any::type_name::<P>())
            .field("template", &self.template.source)
            .field("children", &self.children)
            .finish_non_exhaustive()
    }
}

impl MarkdownSection<NoParams> {
    /// A section of fixed text that takes no params.
    pub fn plain(title: impl Into<String>, key: impl Into<String>, text: &str) -> Self {
        MarkdownSection::new(title, key, text)
    }
}

impl<P: Params> MarkdownSection<P> {
    /// A section titled `title` with key `key` rendering `template`.
    pub fn new(title: impl Into<String>, key: impl Into<String>, template: &str) -> Self {
        MarkdownSection {
            title: title.into(),
            key: key.into(),
            template: Text::new(template),
            summary: None,
            children: Vec::new(),
            tools: Vec::new(),
            enabled: None,
            default_params: None,
            accepts_overrides: true,
            visibility: Visibility::Fixed(SectionVisibility::Full),
            resources: ResourceRegistry::new(),
        }
    }

    /// Sets the summary template shown under `SUMMARY` visibility (it may
    /// use the same placeholders as the body).
    #[must_use]
    pub fn summary(mut self, summary: &str) -> Self {
        self.summary = Some(Text::new(summary));
        self
    }

    /// Fixes the section's visibility.
    #[must_use]
    pub fn visibility(mut self, visibility: SectionVisibility) -> Self {
        self.visibility = Visibility::Fixed(visibility);
        self
    }

    /// Computes the visibility from the params at render time.
    #[must_use]
    pub fn visibility_with(
        mut self,
        visibility: impl Fn(&P) -> SectionVisibility + Send + Sync + 'static,
    ) -> Self {
        self.visibility = Visibility::Computed(Arc::new(visibility));
        self
    }

    /// Renders the section (and its children) only when `enabled` holds.
    #[must_use]
    pub fn enabled(mut self, enabled: impl Fn(&P) -> bool + Send + Sync + 'static) -> Self {
        self.enabled = Some(Arc::new(enabled));
        self
    }

    /// Params used when none of type `P` are bound.
    #[must_use]
    pub fn default_params(mut self, params: P) -> Self {
        self.default_params = Some(Arc::new(params));
        self
    }

    /// Whether body overrides may replace the template (default true).
    #[must_use]
    pub fn accepts_overrides(mut self, accepts: bool) -> Self {
        self.accepts_overrides = accepts;
        self
    }

    /// Adds a tool exposed while the section is shown in full.
    #[must_use]
    pub fn tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolSpec>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Appends a child section.
    #[must_use]
    pub fn child(mut self, child: impl Into<SectionNode>) -> Self {
        self.children.push(child.into());
        self
    }

    /// Appends several child sections.
    #[must_use]
    pub fn children(mut self, children: impl IntoIterator<Item = SectionNode>) -> Self {
        self.children.extend(children);
        self
    }

    /// Resources this section contributes to the prompt.
    #[must_use]
    pub fn resources(mut self, resources: ResourceRegistry) -> Self {
        self.resources = resources;
        self
    }

    /// The dedented, stripped template.
    pub fn template(&self) -> &str {
        &self.template.source
    }

    /// The dedented, stripped summary template, if any.
    pub fn summary_template(&self) -> Option<&str> {
        self.summary.as_ref().map(|s| s.source.as_str())
    }

    fn render_text(
        &self,
        text: &Text,
        params: &P,
        cx: &RenderContext<'_>,
    ) -> Result<String, PromptRenderError> {
        let values = cx.params_object(params)?;
        match &text.parsed {
            Ok(parsed) => cx.render_parsed(parsed, &values, &[]),
            Err(error) => Err(PromptRenderError::Substitution {
                path: cx.path(),
                error: error.clone(),
            }),
        }
    }
}

impl<P: Params> Section for MarkdownSection<P> {
    type Params = P;

    fn title(&self) -> &str {
        &self.title
    }

    fn key(&self) -> &str {
        &self.key
    }

    fn render_body(&self, params: &P, cx: &RenderContext<'_>) -> Result<String, PromptRenderError> {
        match cx.override_template() {
            Some(template) => {
                let values = cx.params_object(params)?;
                cx.substitute_values(&dedent(template), &values, &[])
            }
            None => self.render_text(&self.template, params, cx),
        }
    }

    fn render_summary(
        &self,
        params: &P,
        cx: &RenderContext<'_>,
    ) -> Result<Option<String>, PromptRenderError> {
        self.summary
            .as_ref()
            .map(|summary| self.render_text(summary, params, cx))
            .transpose()
    }

    fn children(&self) -> &[SectionNode] {
        &self.children
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    fn is_enabled(&self, params: &P) -> bool {
        self.enabled.as_ref().is_none_or(|f| f(params))
    }

    fn default_params(&self) -> Option<&P> {
        self.default_params.as_deref()
    }

    fn accepts_overrides(&self) -> bool {
        self.accepts_overrides
    }

    fn visibility(&self, params: &P) -> SectionVisibility {
        match &self.visibility {
            Visibility::Fixed(v) => *v,
            Visibility::Computed(f) => f(params),
        }
    }

    fn fixed_visibility(&self) -> Option<SectionVisibility> {
        match &self.visibility {
            Visibility::Fixed(v) => Some(*v),
            Visibility::Computed(_) => None,
        }
    }

    fn has_summary(&self) -> bool {
        self.summary.is_some()
    }

    fn resources(&self) -> ResourceRegistry {
        self.resources.clone()
    }

    fn clone_with(&self, rewiring: &mut Rewiring) -> Self {
        MarkdownSection {
            title: self.title.clone(),
            key: self.key.clone(),
            template: self.template.clone(),
            summary: self.summary.clone(),
            // Params, predicates and texts are immutable: sharing them is safe.
            enabled: self.enabled.clone(),
            default_params: self.default_params.clone(),
            accepts_overrides: self.accepts_overrides,
            visibility: self.visibility.clone(),
            tools: self.tools.clone(),
            resources: self.resources.clone_with(rewiring),
            children: self
                .children
                .iter()
                .map(|child| child.clone_with(rewiring))
                .collect(),
        }
    }

    fn placeholders(&self) -> Result<Vec<String>, TemplateError> {
        let mut names = Vec::new();
        for text in std::iter::once(&self.template).chain(self.summary.as_ref()) {
            let parsed = text.parsed.as_ref().map_err(Clone::clone)?;
            names.extend(parsed.placeholders().map(str::to_owned));
        }
        Ok(names)
    }

    fn fingerprint(&self) -> String {
        match &self.summary {
            Some(summary) => format!("{}\u{0}{}", self.template.source, summary.source),
            None => self.template.source.clone(),
        }
    }
}
