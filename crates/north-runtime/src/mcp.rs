//! The MCP servers of a run: which are started (the user's; a trusted
//! project's; an editor's), how North's inputs reach their prompts and
//! resources, and the hub `north mcp` commands use.

use std::sync::Arc;

use north_agent::trust::{TrustState, TrustStore};

use crate::project::Project;

/// The user's own MCP servers file, beside the global config.
pub fn user_mcp_file() -> Option<std::path::PathBuf> {
    north_config::global_config_path().map(|p| p.with_file_name("mcp.json"))
}

/// How a front end wants the project's MCP servers run.
#[derive(Default)]
pub struct McpSetup {
    /// A server asking for OAuth starts the browser login when a browser
    /// can be opened (else it waits for `north mcp login`).
    pub login_on_demand: bool,
    /// Servers an editor passed for the session (`north acp`): started like
    /// the user's own, through the same sandbox, each call asked for like
    /// any server's.
    pub editor: Vec<north_mcp::config::ServerConfig>,
    /// Who fills in servers' forms (None: the hub's default, which declines).
    pub forms: Option<Arc<dyn north_mcp::elicit::Elicitor>>,
    /// Where login progress is told (None: the log).
    pub announce: Option<north_mcp::Announcer>,
}

impl McpSetup {
    /// For a run nobody watches (`north exec`, `north mesh`): a server's
    /// form is answered with its defaults when `accept_defaults` (`--yes`)
    /// and they cover what it requires, else declined.
    pub fn unattended(accept_defaults: bool) -> Self {
        McpSetup {
            forms: Some(Arc::new(north_mcp::elicit::Unattended {
                accept_defaults,
                announce: north_mcp::Announcer::default(),
            })),
            ..McpSetup::default()
        }
    }
}

/// The MCP servers of this run (the user's, the project's when it is
/// trusted, the editor's), started in the background — call inside a Tokio
/// runtime; `None` when there are none. Also what the user should hear
/// about servers that could not be configured.
pub(crate) fn start_hub(
    project: &Project,
    setup: McpSetup,
) -> (Option<Arc<north_mcp::McpHub>>, Vec<String>) {
    let user = user_mcp_file();
    let mut loaded =
        north_mcp::config::load(&project.root, user.as_deref(), project.trust.applies());
    loaded.add_editor_servers(setup.editor);
    loaded.add_plugin_servers(
        project
            .plugins
            .plugins
            .iter()
            .flat_map(|p| p.parts.servers.iter().cloned())
            .collect(),
    );
    let notices = loaded
        .errors
        .iter()
        .map(|e| format!("warning: MCP: {e}"))
        .collect();
    if !loaded.skipped.is_empty() {
        tracing::info!(servers = ?loaded.skipped, "project MCP servers not started: the project is not trusted");
    }
    if loaded.servers.is_empty() {
        return (None, notices);
    }
    let mut opts = hub_options(
        &project.root,
        &project.sandbox,
        &loaded.servers,
        setup.login_on_demand,
    );
    if let Some(announce) = setup.announce {
        opts.announce = announce;
    }
    let hub = north_mcp::McpHub::new(loaded.servers, opts);
    if let Some(forms) = setup.forms {
        hub.set_elicitor(forms);
    }
    hub.start_all();
    (Some(hub), notices)
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
pub(crate) fn attach_mcp(agent: &mut north_agent::Agent, hub: &std::sync::Arc<north_mcp::McpHub>) {
    agent.set_input_expander(std::sync::Arc::new(McpExpander(hub.clone())));
}

/// The user's trust decision about `root` as `north mcp` reads it (never
/// asking), and the store it came from.
pub fn trust_state(root: &std::path::Path) -> (TrustState, Option<TrustStore>) {
    let store = TrustStore::user();
    let state = store
        .as_ref()
        .and_then(|s| s.evaluate(root).ok())
        .map_or(TrustState::Untrusted, |r| r.state);
    (state, store)
}

/// Whether `state` lets the project's own settings apply.
pub fn trusted(state: TrustState) -> bool {
    matches!(state, TrustState::Trusted | TrustState::NothingToTrust)
}

/// The hub over every server of this project, not started (untrusted
/// project servers are returned apart, never started), with the names of
/// the servers skipped and the configuration errors. `login_on_demand`: a
/// server asking for OAuth starts the browser login (`north mcp call`),
/// where listing only reports it.
pub fn project_hub(
    root: &std::path::Path,
    login_on_demand: bool,
) -> (Arc<north_mcp::McpHub>, Vec<String>, Vec<String>) {
    let (state, _) = trust_state(root);
    let user = user_mcp_file();
    let loaded = north_mcp::config::load(root, user.as_deref(), trusted(state));
    let errors = loaded.errors.iter().map(|e| e.to_string()).collect();
    let choice = crate::sandboxing::SandboxChoice::for_project(root, None);
    let opts = hub_options(root, &choice, &loaded.servers, login_on_demand);
    (
        north_mcp::McpHub::new(loaded.servers, opts),
        loaded.skipped,
        errors,
    )
}

/// How a hub over `servers` in `root` runs them: through the MCP server
/// sandbox policy, a server asking for OAuth opening the browser login only
/// when `login_on_demand` and a browser can be opened.
fn hub_options(
    root: &std::path::Path,
    choice: &crate::sandboxing::SandboxChoice,
    servers: &[north_mcp::config::ServerConfig],
    login_on_demand: bool,
) -> north_mcp::HubOptions {
    let mut opts = north_mcp::HubOptions::new(root.to_path_buf());
    opts.spawner = crate::sandboxing::mcp_spawner(root, choice, servers);
    opts.oauth.interactive = login_on_demand && north_mcp::oauth::can_open_browser();
    opts
}
