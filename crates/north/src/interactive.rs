//! `north` with no subcommand: the interactive assistant (the TUI in
//! `north-tui`) on top of the agent. This file only wires setup to the UI.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use clap::Args;
use north_agent::redact::Redactor;
use north_tui::{Exit, SessionInfo, Start, TuiError};

use north_runtime::{LiveSession, McpSetup, Project, SessionChoice, SessionSpec, Sessions};

use crate::args::ModelArgs;
use crate::logging;

const EXIT_USAGE: u8 = 2;
const EXIT_TERMINATED: u8 = 143;

/// Options of the interactive assistant.
#[derive(Debug, Clone, Args)]
pub struct InteractiveArgs {
    /// Model and project options.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Resume the session with this id, or the one you named this (`/rename`).
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Resume the most recent session.
    #[arg(long = "continue", short = 'c')]
    pub continue_latest: bool,
    /// With --resume or --continue: continue the session as a new one,
    /// leaving the original untouched.
    #[arg(long)]
    pub fork: bool,
    /// Open the UI on a session of a running `north serve` instead of
    /// starting one here: `unix:PATH`, `ws://127.0.0.1:PORT`, or nothing for
    /// the default socket (`--attach=ADDR`). With --resume, that session.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true,
          default_missing_value = "default", conflicts_with_all = ["continue_latest", "fork"])]
    pub attach: Option<String>,
    /// The server's token file [default: the one North keeps for that socket in its runtime dir].
    #[arg(long, value_name = "FILE", requires = "attach")]
    pub token_file: Option<std::path::PathBuf>,
    /// Maximum output tokens per model request [default: 8192, at most a quarter of the model's context window].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), hide = true)]
    pub max_tokens: Option<u32>,
    /// Worktree flags.
    #[command(flatten)]
    pub worktree: crate::worktree_enter::WorktreeArgs,
}

/// The saved stderr while it points at the log file (-1: not redirected).
static SAVED_STDERR: AtomicI32 = AtomicI32::new(-1);

/// Sends stderr to the log file while the UI owns the terminal: a warning
/// printed by a library must not land in the middle of the screen.
pub(crate) fn redirect_stderr(log: Option<&std::path::Path>) {
    use std::os::fd::AsRawFd;
    let file = log
        .and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        })
        .or_else(|| {
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .ok()
        });
    let Some(file) = file else { return };
    // SAFETY: dup/dup2 on valid descriptors; the file outlives the dup2 call
    // and the saved descriptor is kept until `restore_stderr`.
    unsafe {
        let saved = libc::dup(2);
        if saved < 0 {
            return;
        }
        if libc::dup2(file.as_raw_fd(), 2) < 0 {
            libc::close(saved);
            return;
        }
        SAVED_STDERR.store(saved, Ordering::SeqCst);
    }
}

pub(crate) fn restore_stderr() {
    let saved = SAVED_STDERR.swap(-1, Ordering::SeqCst);
    if saved >= 0 {
        // SAFETY: `saved` came from dup() above and is closed exactly once.
        unsafe {
            libc::dup2(saved, 2);
            libc::close(saved);
        }
    }
}

/// Asks once, on the terminal and before the UI starts, whether to trust a
/// project whose files want to widen what North does. Without a terminal
/// the answer is no (the settings stay ignored, with a notice).
fn ask_trust(report: &north_agent::trust::TrustReport) -> bool {
    use std::io::{BufRead, IsTerminal, Write};
    if report.wants.is_empty()
        || !std::io::stdin().is_terminal()
        || !std::io::stderr().is_terminal()
    {
        return false;
    }
    let mut err = std::io::stderr();
    let changed = report.state == north_agent::trust::TrustState::Changed;
    let _ = writeln!(
        err,
        "{} {} wants North to:",
        if changed {
            "The security settings of"
        } else {
            "This project,"
        },
        report.root.display()
    );
    for want in &report.wants {
        let _ = writeln!(err, "  • {want}");
    }
    let _ = write!(
        err,
        "Only trust a project you know. Apply these settings and remember your choice? [y/N] "
    );
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

pub(crate) fn usage_error(message: &str) -> ExitCode {
    eprintln!("north: error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// `/status`'s line about workspace trust.
fn trust_line(report: &north_agent::trust::TrustReport) -> String {
    use north_agent::trust::TrustState;
    match report.state {
        TrustState::NothingToTrust => "nothing to trust (the project asks for no extra access)".into(),
        TrustState::Trusted => "trusted: the project's own allow rules, settings and MCP servers apply".into(),
        TrustState::Untrusted => "not trusted: the project's allow rules, widening settings and MCP servers are ignored (north trust)".into(),
        TrustState::Changed => "changed since you trusted it: its new settings are ignored until `north trust`".into(),
    }
}

/// `/mcp`'s view of the hub's servers.
fn mcp_view(hub: Option<&Arc<north_mcp::McpHub>>) -> north_tui::McpView {
    let Some(hub) = hub.cloned() else {
        return north_tui::McpView::default();
    };
    north_tui::McpView::new(Arc::new(move || {
        hub.statuses()
            .into_iter()
            .map(|s| {
                let offers = hub.offers(&s.name);
                north_tui::McpServerLine {
                    resources: offers.resources,
                    prompts: offers.prompts,
                    name: s.name,
                    scope: s.scope.to_string(),
                    state: s.state.to_string(),
                    counts: (s.tools, s.resources, s.prompts),
                    last_error: s.last_error,
                }
            })
            .collect()
    }))
}

/// `/mcp login NAME` and `/mcp logout NAME` on `hub`.
fn mcp_auth(hub: Option<&Arc<north_mcp::McpHub>>) -> north_tui::McpAuth {
    let Some(hub) = hub.cloned() else {
        return north_tui::McpAuth::default();
    };
    north_tui::McpAuth::new(Arc::new(
        move |name: String, logout: bool, say: Arc<dyn Fn(String) + Send + Sync>| {
            let hub = hub.clone();
            Box::pin(async move {
                if logout {
                    return match hub.logout(&name).await {
                        Ok(true) => Ok(format!("logged out of {name}: its tokens are deleted")),
                        Ok(false) => Ok(format!("{name} had no stored login")),
                        Err(e) => Err(e.to_string()),
                    };
                }
                let announce = north_mcp::Announcer::new(move |line| say(line.to_string()));
                match hub.login_announcing(&name, announce).await {
                    Ok(path) => Ok(format!(
                        "logged in to {name}; its tokens are in {} (readable only by you)",
                        path.display()
                    )),
                    Err(e) => Err(e.to_string()),
                }
            }) as futures::future::BoxFuture<'static, Result<String, String>>
        },
    ))
}

/// How the project's MCP servers reach the user: a login opens the
/// browser when one can be opened (the URL and the outcome show in the
/// transcript), a server's form is asked in the TUI.
fn mcp_setup(inbox: &north_tui::Inbox) -> McpSetup {
    let login_notices = inbox.sender();
    let announce = north_mcp::Announcer::new(move |line| {
        let _ = login_notices.send(north_tui::UiMsg::Event(north_protocol::Event::Notice {
            kind: north_protocol::NoticeKind::Login,
            message: line.to_string(),
        }));
    });
    let forms = Arc::new(TuiForms(north_tui::FormAsker::new(inbox.sender())));
    McpSetup {
        login_on_demand: true,
        forms: Some(forms),
        announce: Some(announce),
        ..McpSetup::default()
    }
}

/// What the TUI shows about the session and its project (the header,
/// `/status`, `/mcp`, `/hooks`, `/agents`, the `@` file picker).
fn session_info(agent: &LiveSession, sessions: &Sessions) -> SessionInfo {
    let project = sessions.project();
    let mcp_hub = sessions.mcp().cloned();
    let modes: Vec<north_protocol::PermissionMode> = north_protocol::PermissionMode::ALL
        .into_iter()
        .filter(|m| agent.mode_available(*m).is_ok())
        .collect();
    SessionInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        mode: agent.mode(),
        modes,
        root: project.root.clone(),
        provider: project.selected.provider.clone(),
        model: project.selected.model.clone(),
        session_id: agent.session_id().to_string(),
        context_window: Some(project.selected.limits.context_window),
        catalog: north_llm::catalog::lookup(&project.selected.model),
        mcp: mcp_view(mcp_hub.as_ref()),
        mcp_auth: mcp_auth(mcp_hub.as_ref()),
        commands: project.custom_commands(&builtin_commands()),
        files: file_finder(project.root.clone()),
        trust: Some(trust_line(&project.trust)),
        instructions: north_agent::instructions::load(
            &project.root,
            &north_agent::instructions::UserDirs::from_env(),
        )
        .iter()
        .map(north_agent::instructions::InstructionFile::describe)
        .collect(),
        global_memory: north_agent::memory::MemoryFile::global().map(|m| m.path().to_path_buf()),
        hooks: project.config.hooks.clone(),
        hooks_not_run: if project.trust.applies() {
            Vec::new()
        } else {
            north_agent::hooks::project_hooks(&project.root).describe()
        },
        provider_models: crate::models_cmd::model_lister(&project.config),
        agents: project.agents.describe(),
        skills: project
            .skills
            .skills()
            .iter()
            .map(|s| format!("{} — {} ({})", s.name, s.description, s.source))
            .collect(),
        agents_not_used: project
            .agents
            .ignored
            .iter()
            .chain(&project.skills.ignored)
            .cloned()
            .collect(),
        plugins: crate::plugin_cmd::described(&project.plugins),
        plugin_manager: crate::plugin_cmd::tui_manager(project.root.clone()),
    }
}

/// Why the project could not be opened, with what to do about a missing
/// key.
fn open_failed(e: &north_runtime::RuntimeError, redactor: &Redactor) -> String {
    let message = redactor.scrub(&e.to_string()).into_owned();
    let hint = if message.contains("API_KEY") {
        "\nnorth: set the key in the environment, pick another provider (--provider openai with OPENAI_BASE_URL for a local server), or try North with no model at all: north --script examples/hello.json"
    } else {
        ""
    };
    format!("{message}{hint}")
}

/// The exit code of the UI's end, with the line that says how to resume.
pub(crate) fn exit_code(result: Result<north_tui::Ended, TuiError>) -> ExitCode {
    match result {
        Ok(ended) => {
            // The session in use at the end: `/resume` or `/new` may have
            // changed it.
            let id = &ended.session_id;
            println!("north: session {id} (resume with: north --resume {id})");
            tracing::info!(session = %id, exit = ?ended.exit, "north finished");
            match ended.exit {
                Exit::Quit => ExitCode::SUCCESS,
                Exit::Terminated => ExitCode::from(EXIT_TERMINATED),
            }
        }
        Err(e @ TuiError::NotATerminal) => usage_error(&e.to_string()),
        Err(e) => {
            eprintln!("north: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The project the flags name (the worktree of `-w`, or the one a resumed
/// session ran in), its trust asked on the terminal; a usage error else.
fn open_project(args: &InteractiveArgs, redactor: &Redactor) -> Result<Project, ExitCode> {
    let ask = |report: &north_agent::trust::TrustReport| {
        crate::typeahead::with_echo(|| ask_trust(report))
    };
    let mut options = args
        .model
        .project_options(&crate::args::RunFlags::default(), &[]);
    let (path, entered) = crate::worktree_enter::project_path(
        &args.worktree,
        args.model.path.as_ref(),
        args.resume.as_ref(),
    )
    .map_err(|e| usage_error(&format!("{e:#}")))?;
    options.path = path;
    let project =
        Project::open(&options, Some(&ask)).map_err(|e| usage_error(&open_failed(&e, redactor)))?;
    if let Some(entered) = &entered {
        crate::worktree_enter::created_hooks(&project, entered)
            .map_err(|e| usage_error(&format!("{e:#}")))?;
    }
    Ok(project)
}

/// Runs the interactive assistant.
pub fn main(args: InteractiveArgs) -> ExitCode {
    // Until the TUI has the terminal, keys wait for the composer unechoed.
    let _quiet = crate::typeahead::quiet();
    crate::typeahead::show_waits();
    let redactor = Redactor::from_env();
    let log = logging::init(args.model.log_level, &redactor);
    tracing::info!(version = env!("CARGO_PKG_VERSION"), log = ?log, "north starting");
    let project = match open_project(&args, &redactor) {
        Ok(p) => p,
        Err(code) => return code,
    };
    crate::args::print_notices(&project.notices);
    let choice =
        match SessionChoice::from_flags(args.resume.as_ref(), args.continue_latest, args.fork) {
            Ok(c) => c,
            Err(e) => return usage_error(&e.to_string()),
        };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return usage_error(&format!("cannot start the runtime: {e}")),
    };
    let (mut approver, inbox) = north_tui::channel();
    approver.approve_edits = project.config.approve_edits.value;
    approver.allow_shell = project.config.allow_shell.value;
    let approver = Arc::new(approver);
    // A command that connects to a host no grant covers: the user is asked.
    north_runtime::egress::ask_with(approver.clone());
    // The servers start in the background: the first prompt never waits.
    let sessions = {
        let _entered = runtime.enter();
        Sessions::start(
            project,
            args.model.choice(),
            args.max_tokens,
            mcp_setup(&inbox),
        )
    };
    crate::args::print_notices(sessions.notices());
    let opened = sessions.open(SessionSpec {
        choice,
        approver: approver.clone(),
        redactor: redactor.clone(),
        mode: None,
    });
    let agent = match opened {
        Ok(a) => a,
        Err(e) => return usage_error(&e.to_string()),
    };
    let info = session_info(&agent, &sessions);
    let sessions = Arc::new(sessions);
    let servers = sessions.clone();
    let sessions = north_tui::SessionSource {
        sessions,
        approver,
        redactor,
    };
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_stderr();
        previous(info);
    }));
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        redirect_stderr(log.as_deref());
    }
    let result = runtime.block_on(north_tui::run(Start {
        info,
        backend: north_tui::Backend::Local {
            agent: Box::new(agent),
            sessions,
        },
        inbox,
    }));
    restore_stderr();
    // The session closed in the UI (its SessionEnd hooks ran); the MCP
    // servers stop here, however the UI ended.
    runtime.block_on(servers.shutdown());
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    exit_code(result)
}

/// Servers' forms, filled in in the TUI.
struct TuiForms(north_tui::FormAsker);

impl north_mcp::elicit::Elicitor for TuiForms {
    fn elicit(
        &self,
        form: north_protocol::ElicitForm,
    ) -> futures::future::BoxFuture<'static, north_protocol::ElicitAnswer> {
        self.0.ask(form)
    }
}

/// The TUI's own slash commands, which no custom command may take.
pub fn builtin_commands() -> Vec<&'static str> {
    north_tui::COMMANDS
        .iter()
        .filter_map(|(c, _)| c.split_whitespace().next())
        .collect()
}

/// How old the `@` picker's file list may get before a query rebuilds it
/// (in the background; the old list answers meanwhile).
const FILE_INDEX_TTL: std::time::Duration = std::time::Duration::from_secs(15);

/// The `@` picker's files: the project's file list, walked in the
/// background at start and again when it is older than a few seconds.
pub fn file_finder(root: std::path::PathBuf) -> north_tui::FileFinder {
    use north_tools::repo::FileIndex;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;
    #[derive(Default)]
    struct State {
        index: Option<Arc<FileIndex>>,
        built: Option<Instant>,
        building: bool,
    }
    let state = Arc::new(Mutex::new(State::default()));
    let rebuild = {
        let state = state.clone();
        move || {
            if let Ok(mut s) = state.lock() {
                if s.building {
                    return;
                }
                s.building = true;
            }
            let state = state.clone();
            let root = root.clone();
            std::thread::spawn(move || {
                let index = Arc::new(FileIndex::build(&root));
                if let Ok(mut s) = state.lock() {
                    s.index = Some(index);
                    s.built = Some(Instant::now());
                    s.building = false;
                }
            });
        }
    };
    rebuild();
    north_tui::FileFinder::new(Arc::new(move |query: &str, limit: usize| {
        let (index, stale) = match state.lock() {
            Ok(s) => (
                s.index.clone(),
                s.built.is_some_and(|b| b.elapsed() > FILE_INDEX_TTL),
            ),
            Err(_) => (None, false),
        };
        if stale {
            rebuild();
        }
        index.map(|i| i.find(query, limit)).unwrap_or_default()
    }))
}
