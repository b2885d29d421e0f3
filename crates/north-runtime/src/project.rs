//! A project opened once for every session in it: root, trust, effective
//! configuration, model backend, sandbox, grants, agents and skills.

use std::path::{Path, PathBuf};

use north_agent::AgentOptions;
use north_agent::store::{Session, SessionStore};
use north_agent::trust::{ProjectTrust, TrustReport, TrustState, TrustStore};
use north_config::{Config, Overrides};
use north_llm::ModelLimits;
use north_tools::ToolContext;
use north_tools::os_sandbox::ChildKind;

use crate::RuntimeError;
use crate::provider::{self, ModelChoice, Selected};
use crate::sandboxing::SandboxChoice;

/// How to open a project: everything a front end knows before it starts.
#[derive(Debug, Clone, Default)]
pub struct ProjectOptions {
    /// `--path` (None: the git root above the current directory).
    pub path: Option<PathBuf>,
    /// The model asked for.
    pub model: ModelChoice,
    /// `--trust`: trust the project and remember it.
    pub trust: bool,
    /// `--sandbox on|off` (None: the user's config).
    pub sandbox: Option<bool>,
    /// Overrides of the configuration by flags (approvals, steps, tool
    /// protocol); provider, model, API and thinking come from `model`.
    pub overrides: Overrides,
    /// The user's grants (`--grant`): `net` opens commands' network.
    pub grants: Vec<north_protocol::Capability>,
}

/// What to do about sessions.
#[derive(Debug, Clone)]
pub enum SessionChoice {
    /// Start a new session.
    New,
    /// Resume this id (or the session of this name).
    Resume(String),
    /// Resume the most recent session.
    Latest,
    /// Continue this session as a new one (`--fork`), the original untouched.
    Fork(String),
    /// Continue the most recent session as a new one.
    ForkLatest,
}

impl SessionChoice {
    /// The choice `--resume ID`, `--continue` and `--fork` make.
    pub fn from_flags(
        resume: Option<&String>,
        latest: bool,
        fork: bool,
    ) -> Result<SessionChoice, RuntimeError> {
        Ok(match (resume, latest, fork) {
            (Some(id), _, false) => SessionChoice::Resume(id.clone()),
            (Some(id), _, true) => SessionChoice::Fork(id.clone()),
            (None, true, false) => SessionChoice::Latest,
            (None, true, true) => SessionChoice::ForkLatest,
            (None, false, false) => SessionChoice::New,
            (None, false, true) => return Err(RuntimeError::ForkWithoutSession),
        })
    }
}

/// The input budget condensation keeps requests under: what the window
/// leaves after the output, less a quarter, because North's estimate (4
/// bytes a token) runs low for code and JSON. A budget the user configured
/// is honoured up to what the window allows.
fn context_budget(config: &Config, limits: &ModelLimits, max_tokens: u32) -> u64 {
    let room = limits.input_budget(max_tokens);
    match config.context_budget.value {
        None => room / 4 * 3,
        Some(budget) => budget.min(room),
    }
}

/// A project ready to run the agent in.
pub struct Project {
    /// The project root.
    pub root: PathBuf,
    /// Effective configuration.
    pub config: Config,
    /// The model backend.
    pub selected: Selected,
    /// Whether the project's own security settings apply, and what they are.
    pub trust: TrustReport,
    /// The user's trust decisions (None: no config dir to keep them in).
    pub trust_store: Option<TrustStore>,
    /// How commands start: inside the OS sandbox under the project's
    /// command policy — in every mode, unless the user said `--sandbox off`
    /// (a project cannot).
    pub commands: north_tools::Spawner,
    /// The user's startup grants (`--grant`): `net` opens commands' network.
    pub grants: Vec<north_protocol::Capability>,
    /// Whether commands are confined and what else they may not read.
    pub sandbox: SandboxChoice,
    /// The agents the `agent` tool offers (built in, yours, a trusted
    /// project's).
    pub agents: north_agent::subagents::AgentSet,
    /// The skills (yours, a trusted project's).
    pub skills: north_agent::skills::SkillSet,
    /// The project's language servers (None: none configured or found).
    pub code: Option<std::sync::Arc<north_lsp::Servers>>,
    /// The installed plugins switched on here (their hooks are in the
    /// config's, their agents and skills in the sets above; their
    /// commands and MCP servers are read from here).
    pub plugins: north_plugin::Active,
    /// What the user should be told about opening it (settings ignored,
    /// edits settled, hooks skipped): each line once, for the front end to
    /// show where it shows such things.
    pub notices: Vec<String>,
}

/// Asks the user whether to trust a project (the interactive assistant
/// asks on the terminal; headless commands never ask).
pub type TrustPrompt<'a> = &'a dyn Fn(&TrustReport) -> bool;

/// Decides trust for `root`: the recorded decision, `--trust`, or the
/// user's answer to `ask`. Adds the one notice about what stays ignored to
/// `notices`.
pub fn decide_trust(
    root: &std::path::Path,
    trust_flag: bool,
    ask: Option<TrustPrompt<'_>>,
    notices: &mut Vec<String>,
) -> Result<(TrustReport, Option<TrustStore>), RuntimeError> {
    let store = TrustStore::user();
    // Without a config dir nothing can be remembered; a scratch store keeps
    // the same rules for this run.
    let scratch = TrustStore::at(std::env::temp_dir().join("north-untrusted.json"));
    let mut report = match &store {
        Some(s) => s.evaluate(root)?,
        None => scratch.evaluate(root)?,
    };
    if !report.applies() && (trust_flag || ask.is_some_and(|ask| ask(&report))) {
        report = match &store {
            Some(s) => s.trust(root)?,
            None => TrustReport {
                state: TrustState::Trusted,
                ..report
            },
        };
        tracing::info!(root = %report.root.display(), "project trusted by the user");
    }
    notices.extend(report.notice());
    tracing::info!(state = ?report.state, wants = report.wants.len(), "workspace trust");
    Ok((report, store))
}

/// Settles an edit batch a killed process left half applied, before anything
/// reads or edits a file; what became of each file goes to `notices`.
pub fn settle_interrupted_edits(
    root: &std::path::Path,
    notices: &mut Vec<String>,
) -> Result<(), RuntimeError> {
    let sandbox = north_tools::Sandbox::new(root)?;
    let recovery =
        north_tools::edit::recover(&sandbox).map_err(|source| RuntimeError::Interrupted {
            root: root.to_path_buf(),
            source,
        })?;
    if !recovery.settled.is_empty() || !recovery.foreign.is_empty() {
        notices.push(recovery.to_string());
    }
    let sessions = SessionStore::new(root);
    let foreign = sessions.foreign();
    if !foreign.is_empty() {
        notices.push(format!(
            "ignored {} session(s) in {} that your North did not create here (they came with the repository; they are never resumed or undone): {}",
            foreign.len(),
            sessions.dir().display(),
            foreign.join(", ")
        ));
    }
    sessions.clean_stale_temps();
    Ok(())
}

impl Project {
    /// Opens the project `opts` describe: resolves the root, settles an
    /// interrupted edit batch, decides trust (asking `ask` when given),
    /// loads the configuration, builds the backend and the sandbox, loads
    /// agents and skills. What the user should hear is in `notices`.
    pub fn open(
        opts: &ProjectOptions,
        ask: Option<TrustPrompt<'_>>,
    ) -> Result<Project, RuntimeError> {
        let cwd = std::env::current_dir().map_err(RuntimeError::CurrentDir)?;
        let root = north_tools::repo::resolve_root(opts.path.as_deref(), &cwd)?;
        tracing::info!(root = %root.display(), "repo root");
        let mut notices = Vec::new();
        settle_interrupted_edits(&root, &mut notices)?;
        let (trust, trust_store) = decide_trust(&root, opts.trust, ask, &mut notices)?;
        let mut config = load_config(&root, opts, trust.applies())?;
        let plugins = crate::hooking::with_plugins(&mut config);
        notices.extend(plugins.notices.iter().cloned());
        let selected = provider::select(&config, &opts.model)?;
        notices.extend(config_notices(&config, &selected));
        let sandbox = SandboxChoice::new(&config, opts.sandbox);
        // The user's grants, and the hosts a trusted project's Claude Code
        // rules allow (`WebFetch(domain:…)`).
        let mut grants = opts.grants.clone();
        for grant in crate::permissions::host_grants(&config.claude) {
            if !grants.contains(&grant) {
                grants.push(grant);
            }
        }
        let commands = sandbox.spawner(&root, &grants, ChildKind::Command);
        let found_on_path = sandbox.enabled
            && trust.applies()
            && trust_store.as_ref().is_some_and(|s| s.chosen(&trust));
        let code_defs = crate::language_servers::defs(&config, found_on_path, &mut notices);
        let code = crate::language_servers::at(&root, code_defs, &sandbox, &grants);
        let config_dir = north_config::global_config_path()
            .and_then(|p| p.parent().map(std::path::Path::to_path_buf));
        let mut agents =
            north_agent::subagents::AgentSet::load(&root, config_dir.as_deref(), trust.applies());
        let mut skills =
            north_agent::skills::SkillSet::load(&root, config_dir.as_deref(), trust.applies());
        for plugin in &plugins.plugins {
            agents.add(plugin.parts.agents.clone());
            skills.add(plugin.parts.skills.clone());
        }
        // An untrusted project's agents and skills are named by the trust
        // notice; what else was not taken is said here, once.
        for ignored in agents.ignored.iter().chain(&skills.ignored) {
            if trust.applies() || !ignored.contains("not trusted") {
                notices.push(ignored.clone());
            }
        }
        Ok(Project {
            root,
            config,
            selected,
            trust,
            trust_store,
            commands,
            grants,
            sandbox,
            agents,
            skills,
            code,
            plugins,
            notices,
        })
    }
}

/// The effective configuration of `root` under the user's flags.
fn load_config(
    root: &std::path::Path,
    opts: &ProjectOptions,
    trusted: bool,
) -> Result<Config, RuntimeError> {
    let model = &opts.model;
    let provider = match (&model.provider, &model.script) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(_)) => Some("scripted".into()),
        (None, None) => None,
    };
    let overrides = Overrides {
        provider,
        model: model.model.clone(),
        openai_api: model.openai_api,
        thinking: model.thinking,
        ..opts.overrides.clone()
    };
    let global = north_config::global_config_path();
    Ok(Config::load(
        root,
        global.as_deref(),
        north_secrets::var,
        &overrides,
        trusted,
    )?)
}

/// What the configuration asks for that this run does not do.
fn config_notices(config: &Config, selected: &Selected) -> Vec<String> {
    let mut notices: Vec<String> = config
        .hooks
        .skipped
        .iter()
        .map(|skipped| format!("hooks: {skipped}"))
        .collect();
    // Claude Code's permission rules North could not take, each said.
    notices.extend(
        config
            .claude
            .unmapped
            .iter()
            .map(|u| format!("permissions not taken from {u}")),
    );
    if config
        .ignored
        .iter()
        .any(|i| i.because == north_config::IgnoredBecause::SandboxFromProject)
    {
        notices.push(
            "ignored `sandbox` in .north/project.json: only your own config or --sandbox shapes the OS sandbox (a project may add hosts to `sandbox.network.deny`)".into(),
        );
    }
    if config.web_search_provider
        && !selected
            .backend
            .server_tools()
            .contains(&north_protocol::ServerTool::WebSearch)
    {
        notices.push(format!(
            "web_search.provider: {} has no search of its own here (Anthropic and the OpenAI Responses API do){}",
            selected.provider,
            if config.web_search_url.is_some() {
                "; web_search uses your searxng_url"
            } else {
                "; set web_search.searxng_url to a SearXNG endpoint to offer web_search"
            }
        ));
    }
    notices
}

/// What the permission modes need: `plan`'s read-only tools, where the
/// North's shell in `root`, started through `spawner` (None: unconfined).
fn shell_on(
    root: &Path,
    spawner: Option<north_tools::Spawner>,
) -> std::sync::Arc<dyn north_tools::services::Shell> {
    let root = root.to_path_buf();
    std::sync::Arc::new(match spawner {
        Some(spawner) => north_tools::shell::ShellManager::with_spawner(root, spawner),
        None => north_tools::shell::ShellManager::new(root),
    })
}

/// OS sandbox works a shell started inside `north sandbox` for `auto`, the
/// shell outside it a stopped command may escalate to once, and the
/// read-only shell lines that only read run in unasked.
pub(crate) fn mode_kit(project: &Project) -> north_agent::ModeKit {
    mode_kit_at(project, &project.root)
}

/// The modes' shells of `project` rooted at `root` (a sub-agent's
/// worktree).
pub(crate) fn mode_kit_at(project: &Project, root: &Path) -> north_agent::ModeKit {
    let grants = &project.grants;
    let settings = project.sandbox.settings(root, grants);
    let command_settings = project.sandbox.command_settings(root, grants);
    let sandboxed_shell = match crate::sandboxing::sandboxed(&command_settings, ChildKind::Command)
    {
        Ok(spawner) => Some(shell_on(root, Some(spawner))),
        Err(e) => {
            tracing::warn!(error = %e, "no sandboxed shell; the auto mode is unavailable");
            None
        }
    };
    let outside_shell = project.commands.is_confined().then(|| shell_on(root, None));
    // Only where commands are confined at all: with the sandbox off, a
    // line that reads still asks.
    let read_only_shell = project
        .commands
        .is_confined()
        .then(|| crate::sandboxing::sandboxed(&settings, ChildKind::ReadOnlyCommand).ok())
        .flatten()
        .map(|spawner| shell_on(root, Some(spawner)));
    north_agent::ModeKit {
        plan_tools: {
            // Asking a language server changes nothing: planning may.
            let mut tools = plan_tools(grants);
            if project.code.is_some() {
                for tool in north_tools::tools::CodeTool::ALL {
                    tools.register(std::sync::Arc::new(tool));
                }
            }
            tools
        },
        sandboxed_shell,
        outside_shell,
        read_only_shell,
    }
}

/// The assistant's tools: North's own, plus `http.get` when a `net`
/// capability is granted (the model cannot use what it is not offered).
pub(crate) fn assistant_tools(grants: &[north_protocol::Capability]) -> north_tools::Registry {
    let mut tools = north_tools::north_tools();
    add_http_get(&mut tools, grants);
    tools
}

/// The tools of `--mode plan`: reading and searching only (no edits, no
/// commands), plus `http.get` when `net` is granted.
pub fn plan_tools(grants: &[north_protocol::Capability]) -> north_tools::Registry {
    let all = north_tools::north_tools();
    let mut tools = north_tools::Registry::new();
    for spec in all.specs() {
        if spec.approval == north_protocol::ApprovalPolicy::None
            && let Some(tool) = all.get(&spec.name)
            && tool.kind() != north_protocol::ToolKind::Execute
        {
            tools.register(tool.clone());
        }
    }
    add_http_get(&mut tools, grants);
    // Reading the web changes nothing: planning may use it.
    tools.register(std::sync::Arc::new(north_tools::net::fetch::WebFetch::new()));
    tools
}

/// The web tools: `web_fetch` always (each domain is asked for), and
/// `web_search` when the user's config names a search backend — the
/// provider's own search when asked for and it has one (then it is the
/// provider's tool of that name), else a SearXNG endpoint.
pub(crate) fn add_web_tools(tools: &mut north_tools::Registry, project: &Project) {
    let config = &project.config;
    tools.register(std::sync::Arc::new(north_tools::net::fetch::WebFetch::new()));
    if project.hosted_search() {
        return;
    }
    if let Some(url) = &config.web_search_url {
        tools.register(std::sync::Arc::new(
            north_tools::net::search::WebSearch::searxng(url.clone()),
        ));
    }
}

fn add_http_get(tools: &mut north_tools::Registry, grants: &[north_protocol::Capability]) {
    let net = grants.iter().any(|c| {
        matches!(
            c,
            north_protocol::Capability::Net | north_protocol::Capability::NetHost(_)
        )
    });
    if net && let Some(get) = north_tools::contracts_tools().get("http.get") {
        tools.register(get.clone());
    }
}

impl Project {
    /// Opens or creates the session.
    pub fn session(&self, choice: &SessionChoice) -> Result<Session, RuntimeError> {
        let store = SessionStore::new(&self.root);
        Ok(match choice {
            SessionChoice::New => store.create()?,
            // An id, or the name the user gave a session (`/rename`).
            SessionChoice::Resume(id) => store.resolve(id)?,
            SessionChoice::Latest => store.latest()?.ok_or(RuntimeError::NoSession)?,
            SessionChoice::Fork(id) => store.fork(&store.resolve(id)?.id)?,
            SessionChoice::ForkLatest => {
                let latest = store.latest()?.ok_or(RuntimeError::NoSession)?;
                store.fork(&latest.id)?
            }
        })
    }

    /// What the agent is told about the project's own rules.
    pub fn project_trust(&self) -> ProjectTrust {
        if self.trust.applies() {
            ProjectTrust::Trusted {
                store: self.trust_store.clone(),
            }
        } else {
            ProjectTrust::Untrusted
        }
    }

    /// The configured hooks bound to this project and its sandbox.
    pub fn hooks(&self) -> north_agent::hooks::Hooks {
        crate::hooking::hooks_for(&self.root, &self.config, &self.sandbox, &self.grants)
    }

    /// A tool context with the project's http cache.
    pub fn tool_context(&self) -> ToolContext {
        let mut ctx = ToolContext::for_project(self.root.clone());
        ctx.net_allowlist = self.config.net_allowlist.value.clone();
        ctx.code = self
            .code
            .clone()
            .map(|c| c as std::sync::Arc<dyn north_tools::services::Code>);
        if self.commands.is_confined() {
            ctx.shell = std::sync::Arc::new(north_tools::shell::ShellManager::with_spawner(
                self.root.clone(),
                self.commands.clone(),
            ));
        }
        ctx
    }

    /// Whether the provider's own web search is used: the user asked
    /// (`web_search.provider`) and the provider's API has one.
    pub(crate) fn hosted_search(&self) -> bool {
        self.config.web_search_provider
            && self
                .selected
                .backend
                .server_tools()
                .contains(&north_protocol::ServerTool::WebSearch)
    }

    fn server_tools(&self) -> Vec<north_protocol::ServerTool> {
        if self.hosted_search() {
            vec![north_protocol::ServerTool::WebSearch]
        } else {
            Vec::new()
        }
    }

    /// Agent options from the configuration; `max_tokens` is the user's
    /// `--max-tokens`, fitted to the model's window and output limit.
    pub fn agent_options(&self, max_tokens: Option<u32>) -> AgentOptions {
        let limits = &self.selected.limits;
        let max_tokens = limits.max_tokens(max_tokens);
        let context_budget = context_budget(&self.config, limits, max_tokens);
        tracing::info!(max_tokens, context_budget, "request budgets");
        let (shell_allow, shell_limits) = crate::permissions::shell_rules(&self.config.claude);
        AgentOptions {
            provider: self.selected.provider.clone(),
            model: self.selected.model.clone(),
            max_steps: self.config.max_steps.value,
            tool_protocol: self.config.tool_protocol.value,
            max_tokens,
            context_budget,
            compact_at_percent: self.config.compact_at.value,
            reasoning: self.config.thinking.value,
            extra_memory: north_config::data_dir()
                .map(|d| d.join("memory.json"))
                .into_iter()
                .collect(),
            project_trust: self.project_trust(),
            snapshots: true,
            server_tools: self.server_tools(),
            shell_allow,
            shell_limits,
            path_rules: crate::permissions::path_rules(&self.config.claude),
            ..AgentOptions::default()
        }
    }
}

/// The switch to another model for `/model NAME`: `provider:model`, or a
/// model name whose provider the catalogue knows (else the current
/// provider's). Keys and base URLs come from the user's configuration and
/// environment, as at start.
pub fn model_switch(
    config: &Config,
    choice: &ModelChoice,
    max_tokens: Option<u32>,
    name: &str,
) -> Result<north_agent::ModelSwitch, RuntimeError> {
    let name = name.trim();
    let (provider, model) = match name.split_once(':') {
        Some((p, m)) if ["anthropic", "openai"].contains(&p) => (p.to_string(), m.to_string()),
        _ => {
            let provider = match north_llm::catalog::lookup(name).map(|m| m.family) {
                Some(family) => family.provider().to_string(),
                None => config.provider.value.clone(),
            };
            (provider, name.to_string())
        }
    };
    if model.is_empty() {
        return Err(RuntimeError::NoModelNamed);
    }
    if provider == "scripted" {
        return Err(RuntimeError::ScriptedSwitch(model));
    }
    let mut config = config.clone();
    config.provider.value = provider;
    config.model.value = Some(model);
    let selected = crate::provider::select(&config, choice)?;
    let limits = &selected.limits;
    let max_tokens = limits.max_tokens(max_tokens);
    Ok(north_agent::ModelSwitch {
        context_budget: context_budget(&config, limits, max_tokens),
        backend: selected.backend,
        provider: selected.provider,
        model: selected.model,
        max_tokens,
    })
}
