//! The services a tool call reaches through its [`crate::ToolContext`]: the
//! project's shell and the web.
//!
//! They are traits so that what stands behind a tool can be swapped without
//! touching the tool: a library user runs commands on a remote machine or
//! serves pages from a fixture, a front end wraps a shell of its own. North's
//! own implementations are [`ShellManager`] (a persistent PTY session started
//! through the [`Spawner`], with background jobs) and [`HttpClient`]
//! (policy-checked GETs with a SQLite cache). A service never decides
//! policy: a shell runs only an [`ApprovedCommand`], the web only what the
//! [`NetAccess`] the tool passes allows.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use north_policy::{ApprovedCommand, NetAccess};
use tokio_util::sync::CancellationToken;

use crate::Spawner;
use crate::net::{HttpClient, HttpConfig, HttpResponse, NetError};
use crate::shell::background::Jobs;
use crate::shell::{RunOptions, RunResult, ShellError, ShellManager};

/// The project's shell as the shell tools use it.
pub trait Shell: Send + Sync {
    /// How this shell (and North's helpers beside it) start processes:
    /// confined or not, under which sandbox policy.
    fn spawner(&self) -> &Spawner;

    /// The commands running in the background.
    fn jobs(&self) -> &Arc<Jobs>;

    /// Runs `command` (only one the policy approved) in the session,
    /// interrupting it when `cancel` fires.
    fn run<'a>(
        &'a self,
        command: &'a ApprovedCommand,
        opts: RunOptions,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<RunResult, ShellError>>;

    /// Starts `command` in the background in `cwd` (relative to the root;
    /// None: the root); its job id.
    fn start_background(
        &self,
        command: &ApprovedCommand,
        cwd: Option<&Path>,
    ) -> Result<String, ShellError>;
}

impl Shell for ShellManager {
    fn spawner(&self) -> &Spawner {
        ShellManager::spawner(self)
    }

    fn jobs(&self) -> &Arc<Jobs> {
        ShellManager::jobs(self)
    }

    fn run<'a>(
        &'a self,
        command: &'a ApprovedCommand,
        opts: RunOptions,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<RunResult, ShellError>> {
        Box::pin(self.run_cancellable(command, opts, cancel))
    }

    fn start_background(
        &self,
        command: &ApprovedCommand,
        cwd: Option<&Path>,
    ) -> Result<String, ShellError> {
        ShellManager::start_background(self, command, cwd)
    }
}

/// The project's language servers as the code tools and the edit review
/// use them: what a server says of proposed (unsaved) text, definitions,
/// references, symbols. North's own is [`north_lsp::Servers`].
pub trait Code: Send + Sync {
    /// Whether a server is configured for the project path `rel`.
    fn handles(&self, rel: &str) -> bool;

    /// What the server of `rel` says of `text` as its content (never
    /// written).
    fn diagnose<'a>(&'a self, rel: &'a str, text: &'a str) -> BoxFuture<'a, north_lsp::Diagnosed>;

    /// The server of `rel` is told what was written.
    fn written<'a>(&'a self, rel: &'a str, text: &'a str) -> BoxFuture<'a, ()>;

    /// The server of `rel` forgets it (proposed, never written).
    fn closed<'a>(&'a self, rel: &'a str) -> BoxFuture<'a, ()>;

    /// Where the symbol at `line`:`column` (1-based) is defined.
    fn definition<'a>(
        &'a self,
        rel: &'a str,
        line: u32,
        column: u32,
    ) -> BoxFuture<'a, Result<Vec<north_lsp::Location>, north_lsp::LspError>>;

    /// Where the symbol at `line`:`column` is used.
    fn references<'a>(
        &'a self,
        rel: &'a str,
        line: u32,
        column: u32,
    ) -> BoxFuture<'a, Result<Vec<north_lsp::Location>, north_lsp::LspError>>;

    /// The workspace's symbols matching `query`.
    fn symbols<'a>(
        &'a self,
        query: &'a str,
    ) -> BoxFuture<'a, Result<Vec<north_lsp::Symbol>, north_lsp::LspError>>;
}

impl Code for north_lsp::Servers {
    fn handles(&self, rel: &str) -> bool {
        self.def_for(rel).is_some()
    }

    fn diagnose<'a>(&'a self, rel: &'a str, text: &'a str) -> BoxFuture<'a, north_lsp::Diagnosed> {
        Box::pin(north_lsp::Servers::diagnose(self, rel, text))
    }

    fn written<'a>(&'a self, rel: &'a str, text: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(north_lsp::Servers::written(self, rel, text))
    }

    fn closed<'a>(&'a self, rel: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(north_lsp::Servers::closed(self, rel))
    }

    fn definition<'a>(
        &'a self,
        rel: &'a str,
        line: u32,
        column: u32,
    ) -> BoxFuture<'a, Result<Vec<north_lsp::Location>, north_lsp::LspError>> {
        Box::pin(north_lsp::Servers::definition(self, rel, line, column))
    }

    fn references<'a>(
        &'a self,
        rel: &'a str,
        line: u32,
        column: u32,
    ) -> BoxFuture<'a, Result<Vec<north_lsp::Location>, north_lsp::LspError>> {
        Box::pin(north_lsp::Servers::references(self, rel, line, column))
    }

    fn symbols<'a>(
        &'a self,
        query: &'a str,
    ) -> BoxFuture<'a, Result<Vec<north_lsp::Symbol>, north_lsp::LspError>> {
        Box::pin(north_lsp::Servers::symbols(self, query))
    }
}

/// The web as the network tools use it: GETs the access rules allow.
pub trait Web: Send + Sync {
    /// Limits and cache lifetime.
    fn config(&self) -> &HttpConfig;

    /// Fetches `url` if `access` allows its host (and every redirect's); a
    /// cached response is served only while younger than `max_age` (None:
    /// always fetched). The tools check `url`'s host before they ask; the
    /// service checks each host a redirect leads to.
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        max_age: Option<Duration>,
        access: &'a NetAccess<'a>,
    ) -> BoxFuture<'a, Result<HttpResponse, NetError>>;
}

impl Web for HttpClient {
    fn config(&self) -> &HttpConfig {
        HttpClient::config(self)
    }

    fn fetch<'a>(
        &'a self,
        url: &'a str,
        max_age: Option<Duration>,
        access: &'a NetAccess<'a>,
    ) -> BoxFuture<'a, Result<HttpResponse, NetError>> {
        Box::pin(self.get_fresh(url, max_age, access))
    }
}

/// Whether two handles are the same service (the address of the value,
/// not of its vtable, which may differ between codegen units).
pub fn same<T: ?Sized>(a: &Arc<T>, b: &Arc<T>) -> bool {
    std::ptr::eq(Arc::as_ptr(a).cast::<()>(), Arc::as_ptr(b).cast::<()>())
}
