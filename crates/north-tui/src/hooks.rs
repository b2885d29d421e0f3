//! What the binary plugs into the TUI: where the `@` picker finds files
//! and where `/mcp` reads the servers' state. The TUI knows neither the file
//! index nor MCP; it calls these, and shows nothing when they are absent.

use std::sync::Arc;

/// A function the binary gives the TUI, or none. Two hooks are equal when
/// they are the same function (or both absent).
pub struct Hook<F: ?Sized>(pub Option<Arc<F>>);

impl<F: ?Sized> Hook<F> {
    /// A hook calling `f`.
    pub fn new(f: Arc<F>) -> Self {
        Hook(Some(f))
    }
}

impl<F: ?Sized> Clone for Hook<F> {
    fn clone(&self) -> Self {
        Hook(self.0.clone())
    }
}

impl<F: ?Sized> Default for Hook<F> {
    fn default() -> Self {
        Hook(None)
    }
}

impl<F: ?Sized> std::fmt::Debug for Hook<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Hook(..)"
        } else {
            "Hook(none)"
        })
    }
}

impl<F: ?Sized> PartialEq for Hook<F> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// Finds the best `limit` files for a query.
pub type FindFiles = dyn Fn(&str, usize) -> Vec<String> + Send + Sync;

/// Where the `@` picker finds files (none: no picker).
pub type FileFinder = Hook<FindFiles>;

/// The models `/model` completes from, as they are known now.
pub(crate) type ListModels = dyn Fn() -> Vec<String> + Send + Sync;

/// What the provider serves, for `/model` (none: the catalogue only).
pub type ModelLister = Hook<ListModels>;

/// One server's state for `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerLine {
    /// The server's name.
    pub name: String,
    /// `user` or `project`.
    pub scope: String,
    /// `ready`, `starting`, `failed`, ...
    pub state: String,
    /// Tools, resources and prompts listed.
    pub counts: (usize, usize, usize),
    /// The last error, when it failed.
    pub last_error: Option<String>,
    /// Its resources as `@server:uri` mentions, with their names.
    pub resources: Vec<(String, String)>,
    /// Its prompts as slash commands, with their descriptions.
    pub prompts: Vec<(String, String)>,
}

/// Lists the servers' state.
pub(crate) type McpLines = dyn Fn() -> Vec<McpServerLine> + Send + Sync;

/// Where `/mcp` reads the servers' state (none: no servers configured).
pub type McpView = Hook<McpLines>;

/// Logs in to (or, with `true`, out of) the MCP server named; what the
/// login needs the user to see (the URL to open) goes to the callback.
/// Returns what happened, or why it failed.
pub(crate) type McpLogin = dyn Fn(
        String,
        bool,
        Arc<dyn Fn(String) + Send + Sync>,
    ) -> futures::future::BoxFuture<'static, Result<String, String>>
    + Send
    + Sync;

/// What `/mcp login NAME` and `/mcp logout NAME` call (none: no servers).
pub type McpAuth = Hook<McpLogin>;

/// Runs `/plugin VERB ARGS…` (the words after `/plugin`) and returns what
/// to show: a title and its lines, or why it failed.
pub(crate) type PluginVerb = dyn Fn(Vec<String>) -> futures::future::BoxFuture<'static, Result<(String, Vec<String>), String>>
    + Send
    + Sync;

/// What `/plugin install|update|accept|reject|enable|disable|remove|marketplace`
/// call (none: plugins are managed with `north plugin` only).
pub type PluginManager = Hook<PluginVerb>;
