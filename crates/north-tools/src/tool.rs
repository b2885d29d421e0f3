//! The Tool contract, the per-call context, and the registry.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ToolOutcome, ToolSpec};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A tool: a declarative spec and an async call returning `{ok, output, error}`.
///
/// Tools never panic on bad input and never write files directly: write tools
/// return a proposal that is applied only after review.
pub trait Tool: Send + Sync {
    /// The declaration sent to the model (name, description, input schema, approval).
    fn spec(&self) -> ToolSpec;

    /// Runs the tool with already-parsed JSON arguments.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome>;
}

/// What a tool call may use: the sandbox root, capabilities and shared services.
#[derive(Clone)]
pub struct ToolContext {
    /// Canonical project root; every path a tool touches resolves inside it.
    pub root: PathBuf,
    /// Capabilities granted by the user (`net`, `net:<domain>`).
    pub capabilities: Vec<String>,
    /// Global network allowlist of domains, if configured.
    pub net_allowlist: Option<Vec<String>>,
    /// The project's persistent shell (started lazily on first use).
    pub shell: Arc<crate::shell::ShellManager>,
    /// HTTP client with its cache (opened lazily on first use).
    pub http: Arc<crate::net::HttpClient>,
    /// Cancelled when the user interrupts; long tools stop promptly.
    pub cancel: CancellationToken,
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
        }
    }
}

/// Tools by name.
#[derive(Default, Clone)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
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

    /// The specs of all tools, sorted by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|t| t.spec()).collect()
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Calls the tool `name`; an unknown name is an `ok:false` outcome.
    pub async fn call(&self, name: &str, args: Value, ctx: &ToolContext) -> ToolOutcome {
        match self.tools.get(name) {
            Some(tool) => tool.call(args, ctx).await,
            None => ToolOutcome::err(format!(
                "unknown tool `{name}`; available tools: {}",
                self.tools.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }
}
