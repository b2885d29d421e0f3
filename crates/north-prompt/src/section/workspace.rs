//! `WorkspaceSection`: tells the model where its files live and contributes
//! the workspace [`Filesystem`] to the prompt's resources.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use north_protocol::ToolSpec;

use super::{RenderContext, Section, SectionNode};
use crate::error::PromptRenderError;
use crate::params::NoParams;
use crate::path::SectionVisibility;
use crate::resources::{ResourceInstance, ResourceRegistry, Rewiring};
use crate::text::{ParsedTemplate, TemplateError, dedent};

/// The workspace a prompt's tools operate on, as a resource. Tools resolve
/// it with `resources.get::<dyn Filesystem>()`.
///
/// This is all the prompt system asks of a workspace (spec: "Section that
/// provides filesystem access. Contributes its filesystem to prompt
/// resources"): where it is, and a copy for a cloned prompt. Reading,
/// listing and refusing paths that leave the root are the tools' job, under
/// North's one sandbox (`north_tools::sandbox`); this crate never touches
/// the disk, so it cannot grow a second, drifting copy of that check.
pub trait Filesystem: Send + Sync + fmt::Debug + 'static {
    /// The workspace root every relative path is resolved against.
    fn root(&self) -> &Path;

    /// An independent copy for a cloned prompt: changes to the copy's own
    /// state (an in-memory filesystem's files, say) must not reach this one.
    /// A directory on disk stays the same directory.
    fn fork(&self) -> Arc<dyn Filesystem>;
}

/// A [`Filesystem`] that is a directory on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFilesystem {
    root: PathBuf,
}

impl HostFilesystem {
    /// A filesystem rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        HostFilesystem { root: root.into() }
    }
}

impl Filesystem for HostFilesystem {
    fn root(&self) -> &Path {
        &self.root
    }

    fn fork(&self) -> Arc<dyn Filesystem> {
        Arc::new(self.clone())
    }
}

const DEFAULT_TEMPLATE: &str = "The workspace root is `${root}`. Use paths relative to it.";

/// A section describing the workspace; its `${root}` placeholder is the
/// filesystem's root. Entering the prompt's resources makes the filesystem
/// available as `dyn Filesystem`. A clone holds (and contributes) a
/// [fork](Filesystem::fork) of the filesystem, or the one a
/// [`Rewiring`] provides.
pub struct WorkspaceSection {
    title: String,
    key: String,
    filesystem: Arc<dyn Filesystem>,
    template: String,
    parsed: Result<ParsedTemplate, TemplateError>,
    children: Vec<SectionNode>,
    tools: Vec<ToolSpec>,
    visibility: SectionVisibility,
    summary: Option<String>,
}

impl Clone for WorkspaceSection {
    /// A copy holding a fork of the filesystem (see [`Section::clone_with`]).
    fn clone(&self) -> Self {
        Section::clone_with(self, &mut Rewiring::new())
    }
}

impl fmt::Debug for WorkspaceSection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkspaceSection")
            .field("key", &self.key)
            .field("filesystem", &self.filesystem)
            .finish_non_exhaustive()
    }
}

impl WorkspaceSection {
    /// A "Workspace" section (key `workspace`) for `filesystem`.
    pub fn new(filesystem: Arc<dyn Filesystem>) -> Self {
        WorkspaceSection {
            title: "Workspace".to_owned(),
            key: "workspace".to_owned(),
            filesystem,
            template: DEFAULT_TEMPLATE.to_owned(),
            parsed: ParsedTemplate::parse(DEFAULT_TEMPLATE),
            children: Vec::new(),
            tools: Vec::new(),
            visibility: SectionVisibility::Full,
            summary: None,
        }
    }

    /// Changes the heading and key.
    #[must_use]
    pub fn titled(mut self, title: impl Into<String>, key: impl Into<String>) -> Self {
        self.title = title.into();
        self.key = key.into();
        self
    }

    /// Replaces the body template (`${root}` is the only placeholder).
    #[must_use]
    pub fn template(mut self, template: &str) -> Self {
        self.template = dedent(template);
        self.parsed = ParsedTemplate::parse(&self.template);
        self
    }

    /// Adds a tool exposed with the section.
    #[must_use]
    pub fn tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// Appends a child section.
    #[must_use]
    pub fn child(mut self, child: impl Into<SectionNode>) -> Self {
        self.children.push(child.into());
        self
    }

    /// Renders the section as `summary` until it is opened.
    #[must_use]
    pub fn summarized(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self.visibility = SectionVisibility::Summary;
        self
    }

    /// The filesystem this section contributes.
    pub fn filesystem(&self) -> &Arc<dyn Filesystem> {
        &self.filesystem
    }

    /// A clone wired to another filesystem (for inserting the section into a
    /// prompt that works on a different workspace); workspace sections among
    /// its children are wired to it too.
    #[must_use]
    pub fn clone_with_filesystem(&self, filesystem: Arc<dyn Filesystem>) -> Self {
        Section::clone_with(
            self,
            &mut Rewiring::new().provide::<dyn Filesystem>(filesystem),
        )
    }

    fn root_text(&self) -> String {
        self.filesystem.root().display().to_string()
    }
}

impl Section for WorkspaceSection {
    type Params = NoParams;

    fn title(&self) -> &str {
        &self.title
    }

    fn key(&self) -> &str {
        &self.key
    }

    fn render_body(
        &self,
        _params: &NoParams,
        cx: &RenderContext<'_>,
    ) -> Result<String, PromptRenderError> {
        let root = self.root_text();
        let extra = [("root", root.as_str())];
        let empty = serde_json::Map::new();
        match (cx.override_template(), &self.parsed) {
            (Some(template), _) => cx.substitute_values(&dedent(template), &empty, &extra),
            (None, Ok(parsed)) => cx.render_parsed(parsed, &empty, &extra),
            (None, Err(error)) => Err(PromptRenderError::Substitution {
                path: cx.path(),
                error: error.clone(),
            }),
        }
    }

    fn render_summary(
        &self,
        _params: &NoParams,
        _cx: &RenderContext<'_>,
    ) -> Result<Option<String>, PromptRenderError> {
        Ok(self.summary.clone())
    }

    fn children(&self) -> &[SectionNode] {
        &self.children
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    fn visibility(&self, _params: &NoParams) -> SectionVisibility {
        self.visibility
    }

    fn resources(&self) -> ResourceRegistry {
        ResourceRegistry::build([ResourceInstance::shared::<dyn Filesystem>(
            self.filesystem.clone(),
        )])
    }

    fn clone_with(&self, rewiring: &mut Rewiring) -> Self {
        WorkspaceSection {
            title: self.title.clone(),
            key: self.key.clone(),
            filesystem: rewiring.copy(&self.filesystem, |fs| fs.fork()),
            template: self.template.clone(),
            parsed: self.parsed.clone(),
            children: self
                .children
                .iter()
                .map(|child| child.clone_with(rewiring))
                .collect(),
            tools: self.tools.clone(),
            visibility: self.visibility,
            summary: self.summary.clone(),
        }
    }

    fn placeholders(&self) -> Result<Vec<String>, TemplateError> {
        let parsed = self.parsed.as_ref().map_err(Clone::clone)?;
        Ok(parsed.placeholders().map(str::to_owned).collect())
    }

    fn provided_fields(&self) -> Vec<String> {
        vec!["root".to_owned()]
    }

    fn fingerprint(&self) -> String {
        self.template.clone()
    }
}
