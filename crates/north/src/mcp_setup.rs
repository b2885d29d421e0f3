//! The MCP servers of a run: which are started (the user's; a trusted
//! project's), how North's inputs reach their prompts and resources, and
//! the hub `north mcp` commands use.

use anyhow::Context;
use north_agent::trust::{TrustState, TrustStore};

/// The user's own MCP servers file, beside the global config.
pub fn user_mcp_file() -> Option<std::path::PathBuf> {
    north_agent::config::global_config_path().map(|p| p.with_file_name("mcp.json"))
}

/// The MCP servers of this run: the user's, and the project's when it is
/// trusted; `None` when there are none. Nothing starts here: call
/// [`north_mcp::McpHub::start_all`] inside the runtime. `login_on_demand`:
/// a server asking for OAuth starts the browser login when a browser can
/// be opened (a headless run); else it waits for `north mcp login`.
pub fn mcp_hub(
    project: &crate::setup::Project,
    login_on_demand: bool,
) -> Option<std::sync::Arc<north_mcp::McpHub>> {
    mcp_hub_with(project, login_on_demand, Vec::new(), None)
}

/// [`mcp_hub`] with the servers an editor passed for the session (`north
/// acp`): started like the user's own, through the same sandbox, each
/// call asked for like any server's.
pub fn mcp_hub_with(
    project: &crate::setup::Project,
    login_on_demand: bool,
    editor: Vec<north_mcp::config::ServerConfig>,
    announce: Option<north_mcp::Announcer>,
) -> Option<std::sync::Arc<north_mcp::McpHub>> {
    let user = user_mcp_file();
    let mut loaded =
        north_mcp::config::load(&project.root, user.as_deref(), project.trust.applies());
    loaded.add_editor_servers(editor);
    for e in &loaded.errors {
        eprintln!("north: warning: MCP: {e}");
    }
    if !loaded.skipped.is_empty() {
        tracing::info!(servers = ?loaded.skipped, "project MCP servers not started: the project is not trusted");
    }
    if loaded.servers.is_empty() {
        return None;
    }
    let mut opts = north_mcp::HubOptions::new(project.root.clone());
    opts.spawner = crate::sandboxing::mcp_spawner(&project.root, &project.sandbox, &loaded.servers);
    opts.oauth.interactive = login_on_demand && north_mcp::oauth::can_open_browser();
    if let Some(announce) = announce {
        opts.announce = announce;
    }
    Some(north_mcp::McpHub::new(loaded.servers, opts))
}

/// Puts MCP prompts (`/mcp__server__prompt …`) and resources
/// (`@server:uri`) into the user's inputs.
struct McpExpander(std::sync::Arc<north_mcp::McpHub>);

impl north_agent::InputExpander for McpExpander {
    fn expand<'a>(
        &'a self,
        input: &'a str,
        cancel: &'a tokio_util::sync::CancellationToken,
    ) -> futures::future::BoxFuture<
        'a,
        Result<Option<north_agent::ExpandedInput>, north_agent::ExpandError>,
    > {
        Box::pin(async move {
            match self.0.expand_input(input, cancel).await {
                Ok(expanded) => Ok(expanded.map(|e| north_agent::ExpandedInput {
                    text: e.text,
                    attached: e.attached,
                })),
                Err(e) => Err(north_agent::ExpandError(e.to_string())),
            }
        })
    }
}

/// Lets `agent` use `hub`'s prompts and resources in user inputs.
pub fn attach_mcp(agent: &mut north_agent::Agent, hub: &std::sync::Arc<north_mcp::McpHub>) {
    agent.set_input_expander(std::sync::Arc::new(McpExpander(hub.clone())));
}

pub(crate) fn trust_state(root: &std::path::Path) -> (TrustState, Option<TrustStore>) {
    let store = TrustStore::user();
    let state = store
        .as_ref()
        .and_then(|s| s.evaluate(root).ok())
        .map_or(TrustState::Untrusted, |r| r.state);
    (state, store)
}

pub(crate) fn trusted(state: TrustState) -> bool {
    matches!(state, TrustState::Trusted | TrustState::NothingToTrust)
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")
}

/// The hub over every server of this project (untrusted project servers
/// are returned apart, never started). `login_on_demand`: a server asking
/// for OAuth starts the browser login (`north mcp call`), where listing
/// only reports it.
pub(crate) fn hub(
    root: &std::path::Path,
    login_on_demand: bool,
) -> (std::sync::Arc<north_mcp::McpHub>, Vec<String>, Vec<String>) {
    let (state, _) = trust_state(root);
    let user = crate::mcp_setup::user_mcp_file();
    let loaded = north_mcp::config::load(root, user.as_deref(), trusted(state));
    let errors = loaded.errors.iter().map(|e| e.to_string()).collect();
    let mut opts = north_mcp::HubOptions::new(root.to_path_buf());
    opts.spawner = crate::sandboxing::mcp_spawner(
        root,
        &crate::setup::SandboxChoice::for_project(root, None),
        &loaded.servers,
    );
    opts.oauth.interactive = login_on_demand && north_mcp::oauth::can_open_browser();
    (
        north_mcp::McpHub::new(loaded.servers, opts),
        loaded.skipped,
        errors,
    )
}
