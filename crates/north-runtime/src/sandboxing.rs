//! Where North's children run: the user's choice about the OS sandbox
//! (their flag, else their own config), turned into the project's
//! [`SandboxSettings`] and a [`Spawner`] per kind of child. The policy each
//! kind gets is decided in `north_tools::os_sandbox` alone.

use std::path::PathBuf;

use crate::RuntimeError;
use north_config::{Config, Overrides};
use north_tools::Spawner;
use north_tools::os_sandbox::{ChildKind, Network, SandboxSettings};

/// The user's choice about the OS sandbox: their flag, else their own
/// config; a project's file never counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxChoice {
    /// Commands run inside the sandbox.
    pub enabled: bool,
    /// Paths hidden besides the secret stores (`sandbox.deny_read`).
    pub hide: Vec<PathBuf>,
    /// Paths under the home directory readable besides the built-in
    /// allow-list (`sandbox.allow_read`).
    pub allow_read: Vec<PathBuf>,
    /// Unix sockets allowed (`sandbox.unix_sockets`).
    pub unix_sockets: bool,
}

impl SandboxChoice {
    /// From the effective configuration and the `--sandbox` flag (`Some(true)`:
    /// on, `Some(false)`: off).
    pub fn new(config: &Config, flag: Option<bool>) -> Self {
        let enabled = flag.unwrap_or(config.sandbox.value);
        SandboxChoice {
            enabled,
            hide: config.sandbox_deny_read.value.clone(),
            allow_read: config.sandbox_allow_read.value.clone(),
            unix_sockets: config.sandbox_unix_sockets.value,
        }
    }

    /// For a command that loads no configuration of its own (`north tool`):
    /// the user's config, read for this alone.
    pub fn for_project(root: &std::path::Path, flag: Option<bool>) -> Self {
        let global = north_config::global_config_path();
        match Config::load(
            root,
            global.as_deref(),
            north_secrets::var,
            &Overrides::default(),
            false,
        ) {
            Ok(config) => SandboxChoice::new(&config, flag),
            Err(e) => {
                tracing::warn!(error = %e, "config unreadable; the sandbox stays on");
                SandboxChoice {
                    enabled: flag != Some(false),
                    hide: Vec::new(),
                    allow_read: Vec::new(),
                    unix_sockets: false,
                }
            }
        }
    }
}

impl SandboxChoice {
    /// The project's sandbox settings under `grants`: commands get the
    /// whole network only with the grant `net`; with per-domain grants
    /// (`net:<domain>`), a network of their own whose one way out is
    /// North's proxy, which reaches only the granted hosts.
    pub fn settings(
        &self,
        root: &std::path::Path,
        grants: &[north_protocol::Capability],
    ) -> SandboxSettings {
        let mut settings = SandboxSettings::new(root.to_path_buf());
        settings.hidden = self.hide.clone();
        settings.home_readable = self.allow_read.clone();
        settings.unix_sockets = self.unix_sockets;
        if grants.contains(&north_protocol::Capability::Net) {
            settings.network = Network::On;
        } else if grants.iter().any(|g| g.host().is_some())
            && let Some(socket) = crate::egress::socket_for(grants)
        {
            settings.network = Network::Proxied(socket);
        }
        settings
    }

    /// How children of `kind` start for `root`: inside the sandbox under
    /// their policy, or unconfined when the user turned the sandbox off.
    pub fn spawner(
        &self,
        root: &std::path::Path,
        grants: &[north_protocol::Capability],
        kind: ChildKind,
    ) -> Spawner {
        if !self.enabled {
            return Spawner::unconfined();
        }
        sandboxed(&self.settings(root, grants), kind).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "no sandbox launcher; children run unconfined");
            Spawner::unconfined()
        })
    }
}

/// How stdio MCP servers start: always inside the sandbox (where there is
/// one) under the MCP server policy, with the user's hidden and readable
/// paths — and what the user's own servers (their `mcp.json`, their
/// editor's) name in their home directory (`node ~/tools/mcp-x/index.js`),
/// never what a project's `.mcp.json` names there.
pub(crate) fn mcp_spawner(
    root: &std::path::Path,
    choice: &SandboxChoice,
    servers: &[north_mcp::config::ServerConfig],
) -> Spawner {
    let mut settings = choice.settings(root, &[]);
    for server in servers {
        if server.scope == north_mcp::config::Scope::Project {
            continue;
        }
        if let north_mcp::config::Transport::Stdio {
            command, args, cwd, ..
        } = &server.transport
        {
            let mut words: Vec<String> = vec![command.clone()];
            words.extend(args.iter().cloned());
            words.extend(cwd.iter().map(|c| c.display().to_string()));
            settings.home_readable.extend(named_in_home(&words));
        }
    }
    sandboxed(&settings, ChildKind::McpServer).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "no sandbox launcher; MCP servers run unconfined");
        Spawner::unconfined()
    })
}

/// What `commands` (commands the user configured: hooks, the status line)
/// name in the home directory, split at spaces and shell operators.
pub(crate) fn named_in_commands<'a>(commands: impl Iterator<Item = &'a str>) -> Vec<PathBuf> {
    let words: Vec<String> = commands
        .flat_map(|c| {
            c.split(|ch: char| ch.is_whitespace() || matches!(ch, ';' | '|' | '&' | '(' | ')'))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    named_in_home(&words)
}

/// What `words` (a command the user configured) name in the home directory.
pub(crate) fn named_in_home(words: &[String]) -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok())
    else {
        return Vec::new();
    };
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    north_tools::os_sandbox::home_paths_named(&words, &home)
}

/// A spawner that starts children of `kind` inside the sandbox (whatever
/// the user's choice: the `auto` mode needs one); an error when this
/// platform has no sandbox or the binary cannot be found.
pub fn sandboxed(settings: &SandboxSettings, kind: ChildKind) -> Result<Spawner, RuntimeError> {
    if !cfg!(target_os = "linux") {
        return Err(RuntimeError::NoOsSandbox);
    }
    let exe = std::env::current_exe().map_err(RuntimeError::NoLauncher)?;
    Ok(Spawner::sandboxed(exe, settings.policy_for(kind)))
}
