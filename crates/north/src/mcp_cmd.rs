//! `north mcp`: manage the MCP servers North connects to (`list`, `get`,
//! `add`, `remove`; `login`, `logout` and `call` in `mcp_use`) and serve
//! North's own tools to MCP clients (`serve`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::mcp_use::runtime;
use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use north_agent::trust::{TrustState, TrustStore};
use north_mcp::config::{Scope, ServersFile};
use north_mcp::{ServerState, ServerStatus};
use north_runtime::{project_hub as hub, trust_state, trusted};
use serde_json::{Map, Value, json};

/// `north mcp` options.
#[derive(Debug, Args)]
#[command(
    after_help = "CONFIGURATION:\n  Project servers live in .mcp.json at the project root (the mcpServers format Claude Code\n  reads) and start only in a trusted project (north trust). Your own servers live in mcp.json\n  beside North's config and start everywhere. Every MCP tool call is asked for unless\n  --grant tool:mcp__<server>[__<tool>] or \"allowedTools\" in .north/allowlist.json covers it."
)]
pub struct McpArgs {
    /// Project root [default: the git root above the current directory, else the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub path: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// `north mcp` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the configured servers and whether they start (connects to each).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Show the configuration only; start nothing.
        #[arg(long)]
        no_connect: bool,
    },
    /// Show one server: configuration, state, tools, resources and prompts.
    Get {
        /// The server's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `north mcp add NAME -- COMMAND [ARGS...]` (stdio) or
    /// `north mcp add --transport http NAME URL`.
    Add(AddArgs),
    /// Remove a server.
    Remove {
        /// The server's name.
        name: String,
        /// Which file [default: the one that has it, the project's first].
        #[arg(long, value_enum)]
        scope: Option<ScopeArg>,
    },
    /// Import the servers configured in Claude Code, Claude Desktop and
    /// Codex into your own config (secrets become `${VAR}` references).
    Import(crate::mcp_import::ImportArgs),
    /// Serve North's tools to an MCP client on stdin/stdout.
    Serve(ServeArgs),
    /// Log in to an HTTP server that asks for OAuth: opens your browser
    /// ($BROWSER, else xdg-open/open; else prints the URL) and keeps the
    /// tokens in your state directory (mode 0600).
    Login {
        /// The server's name.
        name: String,
    },
    /// Forget a server's login (deletes its tokens).
    Logout {
        /// The server's name.
        name: String,
    },
    /// Call one tool of a server and print its result (to try a server).
    Call(crate::mcp_use::CallArgs),
}

/// Which configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// The project's `.mcp.json`.
    Project,
    /// Your own `mcp.json` beside North's config.
    User,
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// A child process on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// `north mcp add` options.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The server's name (letters, digits, `-`, `_`).
    pub name: String,
    /// The command (stdio) or URL (http), then the command's arguments.
    #[arg(num_args = 1.., required = true, allow_hyphen_values = true)]
    pub target: Vec<String>,
    /// How North reaches it.
    #[arg(long, short = 't', value_enum, default_value = "stdio")]
    pub transport: TransportArg,
    /// Which file to write.
    #[arg(long, short = 's', value_enum, default_value = "project")]
    pub scope: ScopeArg,
    /// An environment variable for a stdio server (`KEY=value`; `${VAR}` is expanded at start); repeatable.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A header for an http server (`Name: value`); repeatable.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Replace a server of the same name in that file.
    #[arg(long)]
    pub force: bool,
}

/// `north mcp serve` options.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Run commands North can verify stay in the project without an allow rule
    /// (others are still refused: there is no one to ask).
    #[arg(long)]
    pub allow_shell: bool,
    /// Trust the project's own settings (its .north/allowlist.json) for this run.
    #[arg(long)]
    pub trust: bool,
}

fn root(path: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(north_tools::repo::resolve_root(path, &cwd)?)
}

/// Runs `north mcp`.
pub fn main(args: McpArgs) -> anyhow::Result<ExitCode> {
    let root = root(args.path.as_deref())?;
    match args.command {
        McpCommand::List { json, no_connect } => list(&root, json, no_connect),
        McpCommand::Get { name, json } => get(&root, &name, json),
        McpCommand::Add(add_args) => add(&root, add_args),
        McpCommand::Remove { name, scope } => remove(&root, &name, scope),
        McpCommand::Serve(serve_args) => serve(&root, serve_args),
        McpCommand::Import(import_args) => crate::mcp_import::import(&root, &import_args),
        McpCommand::Login { name } => crate::mcp_use::login(&root, &name),
        McpCommand::Logout { name } => crate::mcp_use::logout(&root, &name),
        McpCommand::Call(call) => crate::mcp_use::call(&root, call),
    }
}

fn status_line(s: &ServerStatus) -> String {
    let state = match s.state {
        ServerState::Ready => format!(
            "ready · {} tools · {} resources · {} prompts",
            s.tools, s.resources, s.prompts
        ),
        ServerState::Failed => format!(
            "failed: {}",
            s.last_error.as_deref().unwrap_or("unknown error")
        ),
        ServerState::NeedsLogin => format!(
            "needs login: {}",
            s.last_error.as_deref().unwrap_or("run `north mcp login`")
        ),
        other => other.to_string(),
    };
    format!(
        "{:<16} {:<8} {}\n    {}",
        s.name, s.scope, state, s.transport
    )
}

fn list(root: &std::path::Path, json: bool, no_connect: bool) -> anyhow::Result<ExitCode> {
    let (hub, skipped, errors) = hub(root, false);
    if !no_connect && !hub.is_empty() {
        runtime()?.block_on(async {
            hub.wait_ready(Duration::from_secs(30)).await;
            hub.shutdown().await;
        });
    }
    let statuses = hub.statuses();
    if json {
        let out = json!({
            "servers": statuses,
            "untrusted": skipped,
            "errors": errors,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    if statuses.is_empty() && skipped.is_empty() && errors.is_empty() {
        println!(
            "no MCP servers configured; add one with `north mcp add NAME -- COMMAND [ARGS...]` (project .mcp.json) or `--scope user`"
        );
    }
    for s in &statuses {
        println!("{}", status_line(s));
    }
    for name in &skipped {
        println!(
            "{name:<16} project  not started: this project is not trusted (review .mcp.json, then `north trust`)"
        );
    }
    for e in &errors {
        eprintln!("north: {e}");
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

fn get(root: &std::path::Path, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let (hub, skipped, _) = hub(root, false);
    if skipped.iter().any(|s| s == name) {
        bail!(
            "MCP server `{name}` is in this project's .mcp.json, which is not trusted: review it, then run `north trust`"
        );
    }
    let rt = runtime()?;
    let details = rt.block_on(async {
        let tools = hub.tools(name).await;
        let (resources, prompts) = if tools.is_ok() {
            (
                hub.resources(name).await.unwrap_or_default(),
                hub.prompts(name).await.unwrap_or_default(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        hub.shutdown().await;
        (tools, resources, prompts)
    });
    let status = hub
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .with_context(|| format!("no MCP server named `{name}` (see `north mcp list`)"))?;
    let (tools, resources, prompts) = details;
    if json {
        let tools: Vec<Value> = tools
            .as_ref()
            .map(|t| {
                t.iter()
                    .map(|t| json!({ "name": t.exposed, "description": t.description, "inputSchema": t.input_schema }))
                    .collect()
            })
            .unwrap_or_default();
        let out =
            json!({ "server": status, "tools": tools, "resources": resources, "prompts": prompts });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", status_line(&status));
    if let Ok(tools) = &tools {
        println!("tools ({}):", tools.len());
        for t in tools {
            let first = t.description.lines().next().unwrap_or("");
            println!(
                "  {:<40} {}",
                t.exposed,
                first.chars().take(80).collect::<String>()
            );
        }
    }
    if !resources.is_empty() {
        println!(
            "resources ({}) — attach one with @{name}:<uri>:",
            resources.len()
        );
        for r in &resources {
            println!("  {:<40} {}", r.uri, r.name);
        }
    }
    if !prompts.is_empty() {
        println!("prompts ({}):", prompts.len());
        for p in &prompts {
            println!(
                "  {:<40} {}",
                p.name,
                p.description.lines().next().unwrap_or("")
            );
        }
    }
    Ok(if status.state == ServerState::Ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn file_for(root: &std::path::Path, scope: ScopeArg) -> anyhow::Result<ServersFile> {
    Ok(match scope {
        ScopeArg::Project => {
            ServersFile::load(&root.join(ServersFile::PROJECT_FILE), Scope::Project)?
        }
        ScopeArg::User => {
            let path = north_runtime::user_mcp_file().context(
                "no config directory for your own servers (set HOME or XDG_CONFIG_HOME)",
            )?;
            ServersFile::load(&path, Scope::User)?
        }
    })
}

/// After North itself changed the project's `.mcp.json` on the user's
/// command, a project that applied before keeps applying.
pub(crate) fn keep_trust(
    root: &std::path::Path,
    before: TrustState,
    store: Option<TrustStore>,
    changed: &str,
) {
    if trusted(before)
        && let Some(store) = store
        && let Err(e) = store.trust(root)
    {
        eprintln!("north: warning: cannot record trust after changing {changed}: {e}");
    }
}

fn add(root: &std::path::Path, args: AddArgs) -> anyhow::Result<ExitCode> {
    let (first, rest) = args
        .target
        .split_first()
        .context("give the command (stdio) or URL (http)")?;
    let mut entry = Map::new();
    match args.transport {
        TransportArg::Stdio => {
            if !args.headers.is_empty() {
                bail!("--header is for http servers; use --env for a stdio server");
            }
            entry.insert("command".into(), json!(first));
            if !rest.is_empty() {
                entry.insert("args".into(), json!(rest));
            }
            let mut env = Map::new();
            for pair in &args.env {
                let (k, v) = pair
                    .split_once('=')
                    .with_context(|| format!("--env `{pair}`: write KEY=VALUE"))?;
                env.insert(k.trim().to_string(), json!(v));
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
        }
        TransportArg::Http => {
            if !rest.is_empty() {
                bail!("an http server takes one URL, not arguments");
            }
            if !args.env.is_empty() {
                bail!("--env is for stdio servers; use --header for an http server");
            }
            entry.insert("type".into(), json!("http"));
            entry.insert("url".into(), json!(first));
            let mut headers = Map::new();
            for pair in &args.headers {
                let (k, v) = pair
                    .split_once(':')
                    .with_context(|| format!("--header `{pair}`: write 'Name: value'"))?;
                headers.insert(k.trim().to_string(), json!(v.trim()));
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
        }
    }
    let (before, store) = trust_state(root);
    let mut file = file_for(root, args.scope)?;
    let replaced = file.entry(&args.name).is_some();
    if replaced && !args.force {
        bail!(
            "{} already has an MCP server named `{}`: pick another name, or add --force to replace it",
            file.path().display(),
            args.name
        );
    }
    file.put(&args.name, Value::Object(entry))?;
    if args.scope == ScopeArg::Project {
        keep_trust(root, before, store, ".mcp.json");
    }
    println!(
        "{} MCP server `{}` in {}",
        if replaced { "replaced" } else { "added" },
        args.name,
        file.path().display()
    );
    if args.scope == ScopeArg::Project && !trusted(before) {
        println!(
            "this project is not trusted, so its servers do not start: run `north trust` once you have reviewed .mcp.json"
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(root: &std::path::Path, name: &str, scope: Option<ScopeArg>) -> anyhow::Result<ExitCode> {
    let scopes = match scope {
        Some(s) => vec![s],
        None => vec![ScopeArg::Project, ScopeArg::User],
    };
    let (before, store) = trust_state(root);
    for scope in scopes {
        let mut file = file_for(root, scope)?;
        if file.remove(name)? {
            if scope == ScopeArg::Project {
                keep_trust(root, before, store, ".mcp.json");
            }
            println!("removed MCP server `{name}` from {}", file.path().display());
            return Ok(ExitCode::SUCCESS);
        }
    }
    bail!("no MCP server named `{name}` (see `north mcp list`)")
}

fn serve(root: &std::path::Path, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut notices = Vec::new();
    north_runtime::settle_interrupted_edits(root, &mut notices)?;
    crate::args::print_notices(&notices);
    let (state, store) = trust_state(root);
    if args.trust
        && let Some(store) = &store
    {
        store.trust(root)?;
    }
    let trusted_now = args.trust || trusted(state);
    let mut rules = if trusted_now {
        north_tools::allowlist::ProjectAllowlist::load(root)?.rules()
    } else {
        north_policy::AllowRules::default()
    };
    let (allow, limits) = north_runtime::permissions::project_shell_rules(root, trusted_now);
    rules.exact.extend(allow.exact);
    rules.prefixes.extend(allow.prefixes);
    let choice = north_runtime::SandboxChoice::for_project(root, None);
    let spawner = if cfg!(target_os = "linux") {
        north_runtime::sandboxing::sandboxed(
            &choice.settings(root, &[]),
            north_tools::os_sandbox::ChildKind::Command,
        )?
    } else {
        north_tools::Spawner::unconfined()
    };
    let gate = north_runtime::hooking::hook_gate(root, args.trust || trusted(state), &choice, &[])
        .map(|g| std::sync::Arc::new(g) as std::sync::Arc<dyn north_tools::CallGate>);
    let opts = north_mcp::ServeOptions {
        root: root.to_path_buf(),
        spawner,
        gate,
        rules,
        limits,
        path_rules: north_runtime::permissions::project_path_rules(root, trusted_now),
        allow_shell: args.allow_shell,
    };
    runtime()?.block_on(north_mcp::serve(opts))?;
    Ok(ExitCode::SUCCESS)
}
