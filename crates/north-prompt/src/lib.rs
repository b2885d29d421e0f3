//! Typed prompt templates: the single, inspectable source of every string
//! North sends to a model (`spec/prompt-system.md`).
//!
//! A [`PromptTemplate`] is a validated tree of [`Section`]s under a
//! namespace and key, with the [`ResourceRegistry`] it needs and an optional
//! structured output type. A [`Prompt`] binds params (plain structs:
//! `Serialize + JsonSchema + Default`) and renders deterministic markdown
//! (`## 1. Title`, `### 1.1. Subtitle`) into a [`RenderedPrompt`] that also
//! carries the enabled sections' tools, the output schemas (plain and
//! strict) and a [`PromptDescriptor`] with a content hash. Sections can be
//! summarized (progressive disclosure: `open_sections` / `read_section`),
//! overridden per `(ns, key, path)`, and can contribute resources whose
//! lifecycle a scope guard manages. [`parse_structured_output`] turns a
//! model's answer into the output type.
//!
//! This crate is a light library: it never calls a model, runs a tool or
//! touches the network; tools are [`ToolSpec`](north_protocol::ToolSpec)
//! declarations, and the disclosure tools come with pure handlers the agent
//! dispatches.
//!
//! # Example
//!
//! Following the spec's usage example:
//!
//! ```
//! use north_prompt::{
//!     Binding, MarkdownSection, Prompt, PromptParams, PromptTemplate, ResourceRegistry,
//!     parse_structured_output, template,
//! };
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, JsonSchema, Default, PromptParams)]
//! struct TaskParams {
//!     objective: String,
//! }
//!
//! #[derive(Debug, Deserialize, JsonSchema)]
//! struct TaskResult {
//!     summary: String,
//!     steps: Vec<String>,
//! }
//!
//! struct HttpClient {
//!     timeout_secs: u64,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let template = PromptTemplate::builder("agents/assistant", "task-planner")
//!     .output::<TaskResult>()
//!     .section(MarkdownSection::<TaskParams>::new(
//!         "Task",
//!         "task",
//!         // Checked at compile time: a typo in `objective` does not build.
//!         template!(TaskParams, "Plan the following: ${objective}"),
//!     ))
//!     .resources(ResourceRegistry::of([Binding::new(|_| {
//!         Ok(HttpClient { timeout_secs: 30 })
//!     })]))
//!     .build()?;
//!
//! let prompt = Prompt::new(template).bind(TaskParams {
//!     objective: "Refactor auth module".into(),
//! });
//!
//! {
//!     // Resources start here and close when `scope` drops.
//!     let scope = prompt.resources().enter()?;
//!     let http = scope.get::<HttpClient>()?;
//!     assert_eq!(http.timeout_secs, 30);
//!
//!     let rendered = prompt.render()?;
//!     assert_eq!(rendered.text(), "## 1. Task\n\nPlan the following: Refactor auth module");
//!     assert!(rendered.strict_output_schema().is_some());
//!
//!     // What a backend would return for `rendered`:
//!     let response = "Here is the plan:\n```json\n\
//!         {\"summary\": \"Split the module\", \"steps\": [\"extract\", \"test\"]}\n```";
//!     let result: TaskResult = parse_structured_output(response, &rendered)?;
//!     assert_eq!(result.steps, ["extract", "test"]);
//! }
//!
//! // Outside the scope, resources are an error, not a panic.
//! assert!(prompt.resources().get::<HttpClient>().is_err());
//! # Ok(())
//! # }
//! ```
//!
//! # Checked before anything renders
//!
//! Every template text is checked against its params type before anything
//! renders: sections at build, overrides when attached. One rule applies to
//! both — each placeholder names a field of the section's params (or a name
//! the section fills itself, like a workspace's `${root}`) — and a failure
//! is a [`PromptValidationError`] naming the section path, the placeholder
//! and the fields available. Overrides must also name an existing section
//! that accepts overrides. Overrides handed straight to a render
//! ([`RenderOptions::overrides`]) are checked the same way and refused with
//! [`PromptRenderError::Override`], which wraps the same error.
//!
//! ```
//! use north_prompt::{
//!     MarkdownSection, Prompt, PromptOverrides, PromptTemplate, PromptValidationError,
//! };
//! # #[derive(serde::Serialize, schemars::JsonSchema, Default)]
//! # struct TaskParams { objective: String }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let template = PromptTemplate::builder("demo", "task")
//!     .section(MarkdownSection::<TaskParams>::new("Task", "task", "Do ${objective}"))
//!     .build()?;
//! let mut overrides = PromptOverrides::new();
//! overrides.set("demo", "task", ["task"], "Do ${objectve} now");
//! let err = Prompt::new(template).with_overrides(&overrides).unwrap_err();
//! assert!(matches!(err, PromptValidationError::UnknownPlaceholder { .. }));
//! # Ok(())
//! # }
//! ```
//!
//! With `#[derive(PromptParams)]` on the params, [`template!`] and
//! [`markdown_section!`] reject placeholder typos even earlier, while
//! compiling. A section must name its params type:
//!
//! ```compile_fail,E0283
//! let section = north_prompt::MarkdownSection::new("Task", "task", "Plan ${objective}");
//! ```
//!
//! # Cloning
//!
//! A cloned [`Prompt`], [`PromptTemplate`] or section is fully decoupled: it
//! gets its own resource instances, wired into its own sections, so a
//! change made through the clone never reaches the original. `clone_with`
//! and a [`Rewiring`] wire a clone to instances you provide instead (a
//! different workspace, say).
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `path`: section paths, visibility, and the two override stores
//! - `text`: template text
//! - `error`: the errors of template construction and rendering (uses `path`, `text`)
//! - `output`: structured output (uses `error`)
//! - `disclosure`: progressive disclosure (uses `output`, `path`)
//! - `resources`: typed resources a prompt needs at run time (an HTTP client, a clock, the workspace…
//! - `params`: section params (uses `error`)
//! - `section`: sections (uses `error`, `params`, `path`, `resources`, `text`)
//! - `validate`: the checks every template text passes before it renders (uses `disclosure`, `error`, `path`, `section`, `text`)
//! - `template`: `PromptTemplate` (uses `error`, `output`, `path`, `resources`, `section`, `validate`)
//! - `macros`: compile-time checked templates (uses `template`)
//! - `render`: rendering (uses `disclosure`, `error`, `output`, `params`, `path`, `section`, `template`, `validate`)
//! - `prompt`: `Prompt` (uses `error`, `params`, `path`, `render`, `resources`, `section`, `template`)
//! - `reply`: reading a model's reply against the prompt it answered (uses `disclosure`, `output`, `path`, `render`)

extern crate self as north_prompt;

mod disclosure;
mod error;
mod macros;
mod output;
mod params;
mod path;
mod prompt;
mod render;
mod reply;
mod resources;
mod section;
mod template;
mod text;
mod validate;

pub use disclosure::{
    DisclosureError, OPEN_SECTIONS_TOOL, OpenSectionsParams, READ_SECTION_TOOL, ReadSectionParams,
    SummarizedSection, open_sections_tool, read_section_tool,
};
pub use error::{PromptRenderError, PromptValidationError};
pub use north_prompt_macros::PromptParams;
pub use output::{
    ARRAY_WRAPPER_KEY, Output, OutputContainer, OutputParseError, OutputParseErrorKind,
    StructuredOutputConfig, parse_output_value, strict_schema, strict_schema_for,
};
pub use params::{NoParams, ParamValue, Params, PromptParams};
pub use path::{
    PromptOverrides, SectionOverride, SectionPath, SectionVisibility, VisibilityExpansionRequired,
    VisibilityOverrides,
};
pub use prompt::{Prompt, PromptResources};
pub use render::{RenderOptions, RenderedPrompt};
pub use reply::{
    dispatch_disclosure_tool, handle_open_sections, handle_read_section, parse_structured_output,
};
pub use resources::{
    Binding, Resource, ResourceError, ResourceInstance, ResourceRegistry, ResourceResolver,
    ResourceScope, ResourceSnapshot, Rewiring, ScopedResourceContext, SessionSnapshot, Snapshot,
    ToolTransactionError, execute_tool_transaction,
};
pub use section::{
    Filesystem, HostFilesystem, MarkdownSection, RenderContext, Section, SectionNode,
    WorkspaceSection,
};
pub use template::PromptDescriptor;
pub use template::{PromptTemplate, TemplateBuilder};
pub use text::{TemplateError, dedent, is_valid_section_key, substitute};

#[doc(hidden)]
pub mod __private {
    pub use crate::text::{check_placeholders, check_section_key};
}
