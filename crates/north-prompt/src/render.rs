//! Rendering: walk the section tree depth-first and build the markdown, the
//! tool list, and the disclosure records of summarized sections.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

use north_protocol::{ChatRequest, ToolSpec};
use serde_json::Value;

use crate::disclosure::{
    OPEN_SECTIONS_TOOL, READ_SECTION_TOOL, SummarizedSection, open_sections_tool, read_section_tool,
};
use crate::error::PromptRenderError;
use crate::output::{OutputContainer, StructuredOutputConfig};
use crate::params::ParamStore;
use crate::path::{PromptOverrides, SectionPath, SectionVisibility, VisibilityOverrides};
use crate::section::{RenderContext, SectionNode};
use crate::template::{PromptDescriptor, PromptTemplate};
use crate::validate::check_overrides;

/// Run-time inputs of one render beyond the bound params.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions<'a> {
    /// Visibility chosen by the session (wins over sections' own).
    pub visibility: Option<&'a VisibilityOverrides>,
    /// Body overrides (only those for this prompt's `(ns, key)` apply; they
    /// are checked before anything renders, like attached ones).
    pub overrides: Option<&'a PromptOverrides>,
    /// When the work this prompt starts must be done by; carried on the
    /// rendered prompt for whoever runs it.
    pub deadline: Option<Instant>,
}

impl<'a> RenderOptions<'a> {
    /// No visibility overrides, no body overrides.
    pub fn new() -> Self {
        RenderOptions::default()
    }

    /// Uses the session's visibility overrides.
    #[must_use]
    pub fn visibility(mut self, visibility: &'a VisibilityOverrides) -> Self {
        self.visibility = Some(visibility);
        self
    }

    /// Uses body overrides.
    #[must_use]
    pub fn overrides(mut self, overrides: &'a PromptOverrides) -> Self {
        self.overrides = Some(overrides);
        self
    }

    /// Sets the deadline the rendered prompt carries.
    #[must_use]
    pub fn deadline(mut self, at: Instant) -> Self {
        self.deadline = Some(at);
        self
    }
}

/// The result of rendering: the markdown text, the tools of the sections
/// shown (plus the disclosure tools when sections are summarized), the
/// structured output declaration and the descriptor.
pub struct RenderedPrompt<O = ()> {
    text: String,
    tools: Vec<ToolSpec>,
    structured_output: Option<StructuredOutputConfig>,
    descriptor: Arc<PromptDescriptor>,
    summarized: Vec<SummarizedSection>,
    deadline: Option<Instant>,
    _output: PhantomData<fn() -> O>,
}

impl<O> Clone for RenderedPrompt<O> {
    fn clone(&self) -> Self {
        RenderedPrompt {
            text: self.text.clone(),
            tools: self.tools.clone(),
            structured_output: self.structured_output.clone(),
            descriptor: self.descriptor.clone(),
            summarized: self.summarized.clone(),
            deadline: self.deadline,
            _output: PhantomData,
        }
    }
}

impl<O> fmt::Debug for RenderedPrompt<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RenderedPrompt")
            .field("descriptor", &self.descriptor)
            .field("text", &self.text)
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .field("structured_output", &self.structured_output)
            .finish_non_exhaustive()
    }
}

impl<O> fmt::Display for RenderedPrompt<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<O> RenderedPrompt<O> {
    /// The markdown.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// When the work this prompt starts must be done by, if anyone said.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// This prompt with a deadline.
    #[must_use]
    pub fn with_deadline(mut self, at: Instant) -> Self {
        self.deadline = Some(at);
        self
    }

    /// Time left before the deadline (zero once it passed; `None` without
    /// one).
    pub fn remaining(&self) -> Option<std::time::Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// The markdown, by value.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Tools of the enabled, fully shown sections in depth-first order, then
    /// `open_sections` / `read_section` when summarized sections need them.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Param descriptions of each tool (tool name → param → description),
    /// read from the tools' input schemas.
    pub fn tool_param_descriptions(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        self.tools
            .iter()
            .map(|tool| {
                let params = tool
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|props| {
                        props
                            .iter()
                            .filter_map(|(name, schema)| {
                                let description = schema.get("description")?.as_str()?;
                                Some((name.clone(), description.to_owned()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (tool.name.clone(), params)
            })
            .collect()
    }

    /// The structured output declaration, if any.
    pub fn structured_output(&self) -> Option<&StructuredOutputConfig> {
        self.structured_output.as_ref()
    }

    /// JSON schema of the output type, if declared.
    pub fn output_schema(&self) -> Option<&Value> {
        self.structured_output.as_ref().map(|c| c.schema())
    }

    /// Strict JSON schema of the output (OpenAI / Anthropic), if declared.
    pub fn strict_output_schema(&self) -> Option<&Value> {
        self.structured_output.as_ref().map(|c| c.strict_schema())
    }

    /// The output type's name, if declared.
    pub fn output_type(&self) -> Option<&'static str> {
        self.structured_output.as_ref().map(|c| c.type_name())
    }

    /// Object or array, if declared.
    pub fn container(&self) -> Option<OutputContainer> {
        self.structured_output.as_ref().map(|c| c.container())
    }

    /// Whether unknown output keys are tolerated, if an output is declared.
    pub fn allow_extra_keys(&self) -> Option<bool> {
        self.structured_output
            .as_ref()
            .map(|c| c.allow_extra_keys())
    }

    /// What was rendered.
    pub fn descriptor(&self) -> &PromptDescriptor {
        &self.descriptor
    }

    /// Puts this prompt into a provider-neutral request: the text as the
    /// system instructions, the tools appended, and the strict output
    /// schema (the form providers accept) when an output is declared.
    pub fn apply_to(&self, request: &mut ChatRequest) {
        request.system = Some(self.text.clone());
        request.tools.extend(self.tools.iter().cloned());
        if let Some(schema) = self.strict_output_schema() {
            request.output_schema = Some(schema.clone());
        }
    }

    /// Sections shown as summaries (nested ones included), parents first.
    pub fn summarized_sections(&self) -> &[SummarizedSection] {
        &self.summarized
    }
}

/// The body overrides of one render: the attached ones with the render's
/// own over them, borrowed when only one side has any.
fn merged_overrides<'a>(
    attached: Option<&'a BTreeMap<SectionPath, String>>,
    given: Option<&'a BTreeMap<SectionPath, String>>,
) -> Option<Cow<'a, BTreeMap<SectionPath, String>>> {
    match (attached, given) {
        (None, None) => None,
        (Some(one), None) | (None, Some(one)) => Some(Cow::Borrowed(one)),
        (Some(attached), Some(given)) => {
            let mut merged = attached.clone();
            merged.extend(given.iter().map(|(p, t)| (p.clone(), t.clone())));
            Some(Cow::Owned(merged))
        }
    }
}

pub(crate) fn render_template<O>(
    template: &PromptTemplate<O>,
    params: &ParamStore,
    attached: &PromptOverrides,
    options: &RenderOptions<'_>,
) -> Result<RenderedPrompt<O>, PromptRenderError> {
    params.check()?;
    let inner = template.inner();
    let (ns, key) = (&inner.descriptor.ns, &inner.descriptor.key);
    let overrides = merged_overrides(
        attached.for_prompt(ns, key),
        options.overrides.and_then(|o| o.for_prompt(ns, key)),
    );
    if let Some(overrides) = &overrides {
        // Overrides given to this render were never checked; attached ones
        // were, and are checked again so no path into a render skips the rule.
        check_overrides(&inner.sections, overrides).map_err(PromptRenderError::Override)?;
    }
    let mut defaults = Vec::new();
    collect_defaults(&inner.sections, &mut defaults);
    let mut walker = Walker {
        params,
        defaults,
        visibility: options.visibility.filter(|v| !v.is_empty()),
        overrides: overrides.as_deref(),
        path: Vec::with_capacity(8),
        numbers: Vec::with_capacity(8),
        tools: Vec::new(),
        summarized: Vec::new(),
    };
    let mut text = String::with_capacity(inner.size_hint);
    walker.level(&inner.sections, &mut text, true)?;
    let Walker {
        mut tools,
        summarized,
        ..
    } = walker;
    if summarized.iter().any(|s| s.has_tools) {
        tools.push(open_sections_tool());
    }
    if summarized.iter().any(|s| !s.has_tools) {
        tools.push(read_section_tool());
    }
    Ok(RenderedPrompt {
        text,
        tools,
        structured_output: inner.output.clone(),
        descriptor: inner.descriptor.clone(),
        summarized,
        deadline: options.deadline,
        _output: PhantomData,
    })
}

/// The first `default_params` of each type, depth-first.
fn collect_defaults<'t>(nodes: &'t [SectionNode], out: &mut Vec<(TypeId, &'t dyn Any)>) {
    for node in nodes {
        let section = node.erased();
        if let Some(defaults) = section.default_params_any() {
            let type_id = section.params_type_id();
            if !out.iter().any(|(t, _)| *t == type_id) {
                out.push((type_id, defaults));
            }
        }
        collect_defaults(section.children(), out);
    }
}

struct Walker<'t> {
    params: &'t ParamStore,
    defaults: Vec<(TypeId, &'t dyn Any)>,
    visibility: Option<&'t VisibilityOverrides>,
    overrides: Option<&'t BTreeMap<SectionPath, String>>,
    path: Vec<&'t str>,
    numbers: Vec<usize>,
    tools: Vec<ToolSpec>,
    summarized: Vec<SummarizedSection>,
}

impl<'t> Walker<'t> {
    /// Renders the enabled sections of one level; returns whether any of
    /// them (or their descendants) declares tools. `shown` is false inside
    /// the full text of a summarized section, whose tools stay hidden.
    fn level(
        &mut self,
        nodes: &'t [SectionNode],
        out: &mut String,
        shown: bool,
    ) -> Result<bool, PromptRenderError> {
        let mut number = 0;
        let mut has_tools = false;
        for node in nodes {
            let section = node.erased();
            let type_id = section.params_type_id();
            let bound = self.params.get(type_id).map(|p| p as &dyn Any);
            let first_default = self
                .defaults
                .iter()
                .find(|(t, _)| *t == type_id)
                .map(|(_, p)| *p);
            let params = section.resolve(bound, first_default);
            if !section.is_enabled(params.get()) {
                continue;
            }
            number += 1;
            self.numbers.push(number);
            self.path.push(section.key());
            let result = self.section(node, params.get(), out, shown, false);
            self.numbers.pop();
            self.path.pop();
            has_tools |= result?;
        }
        Ok(has_tools)
    }

    fn section(
        &mut self,
        node: &'t SectionNode,
        params: &dyn Any,
        out: &mut String,
        shown: bool,
        force_full: bool,
    ) -> Result<bool, PromptRenderError> {
        let section = node.erased();
        let visibility = if force_full {
            SectionVisibility::Full
        } else {
            self.visibility
                .and_then(|v| v.get_refs(&self.path))
                .unwrap_or_else(|| section.visibility(params))
        };
        let override_template = match self.overrides {
            Some(overrides) if section.accepts_overrides() => overrides
                .iter()
                .find(|(p, _)| p.matches_refs(&self.path))
                .map(|(_, t)| t.as_str()),
            _ => None,
        };
        let cx = RenderContext {
            path: &self.path,
            override_template,
        };
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        self.heading(out, section.title());
        match visibility {
            SectionVisibility::Full => {
                let body = section.render_body(params, &cx)?;
                if !body.is_empty() {
                    out.push_str("\n\n");
                    out.push_str(&body);
                }
                if shown {
                    self.tools.extend(section.tools().iter().cloned());
                }
                let own_tools = !section.tools().is_empty();
                let child_tools = self.level(section.children(), out, shown)?;
                Ok(own_tools || child_tools)
            }
            SectionVisibility::Summary => {
                let summary = section
                    .render_summary(params, &cx)?
                    .ok_or_else(|| PromptRenderError::MissingSummary { path: cx.path() })?;
                let slot = self.summarized.len();
                let mut full = String::new();
                let has_tools = self.section(node, params, &mut full, false, true)?;
                let key = self.path.join(".");
                if !summary.is_empty() {
                    out.push_str("\n\n");
                    out.push_str(&summary);
                }
                let tool = if has_tools {
                    OPEN_SECTIONS_TOOL
                } else {
                    READ_SECTION_TOOL
                };
                // A section with subsections names them: the reference's
                // hint, so the model knows what opening it brings.
                let kids: Vec<&str> = section.children().iter().map(SectionNode::key).collect();
                if kids.is_empty() {
                    out.push_str(&format!(
                        "\n\n---\n[This section is summarized. To view full content, call `{tool}` with key \"{key}\".]"
                    ));
                } else {
                    out.push_str(&format!(
                        "\n\n---\n[This section is summarized. Call `{tool}` with key \"{key}\" to view full content including subsections: {}.]",
                        kids.join(", ")
                    ));
                }
                self.summarized.insert(
                    slot,
                    SummarizedSection {
                        path: SectionPath::from_refs(&self.path),
                        key,
                        has_tools,
                        markdown: full,
                    },
                );
                Ok(has_tools)
            }
        }
    }

    fn heading(&self, out: &mut String, title: &str) {
        for _ in 0..=self.numbers.len() {
            out.push('#');
        }
        out.push(' ');
        for n in &self.numbers {
            push_number(out, *n);
            out.push('.');
        }
        out.push(' ');
        out.push_str(title);
    }
}

fn push_number(out: &mut String, n: usize) {
    use std::fmt::Write as _;
    let _ = write!(out, "{n}");
}
