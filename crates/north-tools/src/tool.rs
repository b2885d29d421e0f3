//! The Tool contract, the per-call context, and the registry.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::ArgsSchema;
use crate::describe;
use crate::edit::{Applied, Proposal};
use crate::sandbox::{Sandbox, SandboxError};

/// A tool: a declarative spec and an async call returning `{ok, output, error}`.
///
/// Tools never panic on bad input and never write files directly: write tools
/// return a proposal that is applied only after review.
pub trait Tool: Send + Sync {
    /// The declaration sent to the model (name, description, input schema, approval).
    fn spec(&self) -> ToolSpec;

    /// Runs the tool with already-parsed JSON arguments.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome>;

    /// The proposal side of a write tool (`None` for every other tool).
    fn as_write(&self) -> Option<&dyn WriteTool> {
        None
    }

    /// What the tool does, as front ends file it.
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    /// The one-line intent shown when the model calls the tool with `args`
    /// ("Searching: `foo` in `src/`"); `None`: "Calling `name`".
    fn intent(&self, args: &Value) -> Option<String> {
        let _ = args;
        None
    }

    /// One line about a result; `None`: [`describe::summary`], by the
    /// output's shape.
    fn summary(&self, outcome: &ToolOutcome) -> Option<String> {
        let _ = outcome;
        None
    }
}

/// A tool whose effect is a reviewed [`Proposal`]: `propose` validates the
/// arguments against the current files and computes diffs without writing;
/// after approval the caller applies the proposal and reports
/// `applied_output` to the model.
pub trait WriteTool: Send + Sync {
    /// Validates `args` and returns the proposal, or the failed outcome the
    /// model should see (with structured retry hints).
    fn propose(&self, args: Value, ctx: &ToolContext) -> Result<Proposal, ToolOutcome>;

    /// What the model sees once `proposal` has been written as `applied`.
    fn applied_output(&self, proposal: &Proposal, applied: &Applied) -> Value {
        let _ = proposal;
        applied.to_json()
    }
}

/// What a tool call may use: the sandbox root, capabilities and shared services.
#[derive(Clone)]
pub struct ToolContext {
    /// Canonical project root; every path a tool touches resolves inside it.
    pub root: PathBuf,
    /// Capabilities granted by the user (`net`, `net:<domain>`).
    pub capabilities: Vec<north_protocol::Capability>,
    /// Global network allowlist of domains, if configured.
    pub net_allowlist: Option<Vec<String>>,
    /// The project's shell (North's: a persistent session started lazily
    /// on first use).
    pub shell: Arc<dyn crate::services::Shell>,
    /// The web (North's: an HTTP client with its cache, opened lazily).
    pub http: Arc<dyn crate::services::Web>,
    /// Cancelled when the user interrupts; long tools stop promptly.
    pub cancel: CancellationToken,
    /// Where a running command's output goes as it is produced, while a
    /// front end shows it live (set by the agent around each call).
    pub live_output: Option<crate::shell::LiveOutput>,
    /// Where accepted edits are written instead of the disk: an editor's
    /// buffers (ACP `fs/write_text_file`). None: North's atomic apply.
    pub file_writer: Option<Arc<dyn FileWriter>>,
    /// The command the policy gate approved for the call in flight: a shell
    /// tool runs its command only when it is this one (set by the gate
    /// around each call).
    pub approved: Option<north_policy::ApprovedCommand>,
    /// The project's language servers (None: none configured or found).
    pub code: Option<Arc<dyn crate::services::Code>>,
}

/// Writes accepted edits somewhere other than North's own file layer — an
/// editor's buffers, so unsaved changes there are edited, not overwritten.
pub trait FileWriter: Send + Sync {
    /// Replaces the content of `path` (absolute, inside the project root).
    fn write<'a>(
        &'a self,
        path: &'a std::path::Path,
        content: &'a str,
    ) -> futures::future::BoxFuture<'a, std::io::Result<()>>;
}

impl ToolContext {
    /// A context rooted at `root` with no capabilities and fresh services.
    pub fn new(root: PathBuf) -> Self {
        ToolContext {
            shell: Arc::new(crate::shell::ShellManager::new(root.clone())),
            http: Arc::new(crate::net::HttpClient::new(None)),
            root,
            capabilities: Vec::new(),
            net_allowlist: None,
            cancel: CancellationToken::new(),
            live_output: None,
            file_writer: None,
            approved: None,
            code: None,
        }
    }

    /// A context for a project: like [`ToolContext::new`], with `http.get`
    /// caching into `<root>/.north/http-cache.sqlite`.
    pub fn for_project(root: PathBuf) -> Self {
        let cache = root.join(".north").join("http-cache.sqlite");
        ToolContext {
            http: Arc::new(crate::net::HttpClient::new(Some(cache))),
            ..ToolContext::new(root)
        }
    }

    /// The context of one call, by value: this context's services with the
    /// call's own capabilities, no approval yet and no live output. Whatever
    /// the call sets on it (the approved command, an unconfined shell for
    /// one escalated run) ends with it, a panic included.
    pub fn for_call(&self, capabilities: Vec<north_protocol::Capability>) -> ToolContext {
        ToolContext {
            capabilities,
            live_output: None,
            approved: None,
            ..self.clone()
        }
    }

    /// The sandbox for this context's root.
    pub fn sandbox(&self) -> Result<Sandbox, SandboxError> {
        Sandbox::new(&self.root)
    }
}

/// Tools that come and go while a session runs: an MCP server's tools
/// appear once it has connected. A [`Registry`] asks its sources on every
/// request, so the agent loop never changes when tools arrive.
pub trait ToolSource: Send + Sync {
    /// The specs to offer the model now.
    fn specs(&self) -> Vec<ToolSpec>;

    /// The tool `name`, when this source answers for it (also for tools it
    /// has not listed yet: a call may start the server that has it).
    fn get(&self, name: &str) -> Option<Arc<dyn Tool>>;
}

/// What runs around a tool call a front end makes itself (`north tool`,
/// `north mcp serve`): the user's hooks, as the agent runs them around its
/// own calls. The agent's turn loop uses the same implementation.
pub trait CallGate: Send + Sync + std::fmt::Debug {
    /// Before `name` runs with `args` (call `id`): `Err(reason)` blocks it.
    fn before<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// After it ran: may add what the hooks said to `outcome`.
    fn after<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        id: &'a str,
        outcome: &'a mut ToolOutcome,
    ) -> BoxFuture<'a, ()>;
}

/// Tools by name.
#[derive(Default, Clone)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("sources", &self.sources.len())
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds (or replaces) a tool under its spec's name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
    }

    /// Adds every tool and source of `other` (replacing same-named tools).
    pub fn extend(&mut self, other: &Registry) {
        for (name, tool) in &other.tools {
            self.tools.insert(name.clone(), tool.clone());
        }
        self.sources.extend(other.sources.iter().cloned());
    }

    /// The tools whose names `keep` accepts (a sub-agent's): the
    /// sources' tools as they are now.
    pub fn only(&self, keep: impl Fn(&str) -> bool) -> Registry {
        let mut out = Registry::new();
        for (name, tool) in &self.tools {
            if keep(name) {
                out.tools.insert(name.clone(), tool.clone());
            }
        }
        for source in &self.sources {
            for spec in source.specs() {
                if keep(&spec.name)
                    && !out.tools.contains_key(&spec.name)
                    && let Some(tool) = source.get(&spec.name)
                {
                    out.tools.insert(spec.name, tool);
                }
            }
        }
        out
    }

    /// Adds a source of tools that come and go (MCP servers). Its tools
    /// follow the registry's own: a source cannot shadow a built-in tool.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// The specs of all tools: the registry's own sorted by name, then each
    /// source's current ones.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.tools.values().map(|t| t.spec()).collect();
        for source in &self.sources {
            specs.extend(
                source
                    .specs()
                    .into_iter()
                    .filter(|s| !self.tools.contains_key(&s.name)),
            );
        }
        specs
    }

    /// The names of all tools offered now.
    pub fn names(&self) -> Vec<String> {
        if self.sources.is_empty() {
            return self.tools.keys().cloned().collect();
        }
        self.specs().into_iter().map(|s| s.name).collect()
    }

    /// Looks a tool up by name: the registry's own, then its sources'.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.get(name) {
            return Some(tool.clone());
        }
        self.sources.iter().find_map(|s| s.get(name))
    }

    /// How a call of `name` with `args` reads: the tool's kind and intent
    /// line, from the tool itself (an unknown tool is "Calling `name`").
    pub fn describe(&self, name: &str, args: &Value) -> (ToolKind, String) {
        let tool = self.get(name);
        let kind = tool.as_ref().map_or(ToolKind::Other, |t| t.kind());
        let line = tool
            .and_then(|t| t.intent(args))
            .unwrap_or_else(|| describe::calling(name));
        (kind, line)
    }

    /// One line about the result of a call of `name`.
    pub fn summary(&self, name: &str, outcome: &ToolOutcome) -> String {
        self.get(name)
            .and_then(|t| t.summary(outcome))
            .unwrap_or_else(|| describe::summary(outcome))
    }

    /// Calls the tool `name`; an unknown name is an `ok:false` outcome.
    pub async fn call(&self, name: &str, args: Value, ctx: &ToolContext) -> ToolOutcome {
        match self.get(name) {
            Some(tool) => tool.call(args, ctx).await,
            None => self.unknown(name),
        }
    }

    /// The proposal of write tool `name`; unknown or non-write tools are
    /// `ok:false` outcomes.
    pub fn propose(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<Proposal, ToolOutcome> {
        match self.get(name) {
            Some(tool) => match tool.as_write() {
                Some(write) => write.propose(args, ctx),
                None => Err(ToolOutcome::err(format!(
                    "tool `{name}` is not a write tool"
                ))),
            },
            None => Err(self.unknown(name)),
        }
    }

    fn unknown(&self, name: &str) -> ToolOutcome {
        let available = self.names();
        ToolOutcome {
            ok: false,
            output: json!({ "unknownTool": name, "available": available }),
            error: Some(format!(
                "unknown tool `{name}`; available tools: {}",
                available.join(", ")
            )),
        }
    }
}

/// A tool failure: the message for the model plus structured details.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub message: String,
    pub details: Value,
}

impl Failure {
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            details: Value::Null,
        }
    }

    pub(crate) fn into_outcome(self) -> ToolOutcome {
        ToolOutcome {
            ok: false,
            output: self.details,
            error: Some(self.message),
        }
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.to_string())
    }
}

/// A read-only tool written as a typed, synchronous function; `Typed` turns
/// it into a [`Tool`] that validates arguments and runs off the async threads.
pub(crate) trait Handler: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// Typed tools read; some search.
    const KIND: ToolKind = ToolKind::Read;
    /// The intent line for `args` (see [`Tool::intent`]).
    fn intent(args: &Value) -> String;
    fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, Failure>;
}

/// Adapter from [`Handler`] to [`Tool`].
pub(crate) struct Typed<H: Handler> {
    handler: Arc<H>,
    args: ArgsSchema,
}

impl<H: Handler> Typed<H> {
    pub fn tool(handler: H) -> Arc<dyn Tool> {
        Arc::new(Typed {
            handler: Arc::new(handler),
            args: ArgsSchema::of::<H::Args>(),
        })
    }
}

impl<H: Handler> Tool for Typed<H> {
    fn kind(&self) -> ToolKind {
        H::KIND
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(H::intent(args))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: H::NAME.to_owned(),
            description: H::DESCRIPTION.to_owned(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::None,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: H::Args = match self.args.parse(H::NAME, args) {
                Ok(a) => a,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            let handler = self.handler.clone();
            let ctx = ctx.clone();
            let result = tokio::task::spawn_blocking(move || handler.run(args, &ctx)).await;
            match result {
                Ok(Ok(output)) => ToolOutcome::ok(output),
                Ok(Err(failure)) => failure.into_outcome(),
                Err(e) => ToolOutcome::err(format!("tool `{}` stopped unexpectedly: {e}", H::NAME)),
            }
        })
    }
}
