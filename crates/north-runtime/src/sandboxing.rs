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
    /// Hosts commands may reach through the proxy (`sandbox.network.allow`).
    pub network_allow: Vec<String>,
    /// Hosts commands never reach (`sandbox.network.deny`, a project's too).
    pub network_deny: Vec<String>,
    /// The package registries the user's tools use are allowed
    /// (`sandbox.network.registries`).
    pub registries: bool,
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
            network_allow: hosts(&config.sandbox_network_allow.value),
            network_deny: hosts(&config.sandbox_network_deny.value),
            registries: config.sandbox_network_registries.value,
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
                    network_allow: Vec::new(),
                    network_deny: Vec::new(),
                    registries: false,
                }
            }
        }
    }
}

/// Host patterns as grants and the proxy write them.
fn hosts(patterns: &[north_config::HostPattern]) -> Vec<String> {
    patterns.iter().map(|p| p.as_str().to_string()).collect()
}

impl SandboxChoice {
    /// The project's sandbox settings under `grants`, for the children
    /// that need no proxy (hooks, servers, `--explain`): the whole
    /// network only with the grant `net`, else none.
    pub fn settings(
        &self,
        root: &std::path::Path,
        grants: &[north_protocol::Capability],
    ) -> SandboxSettings {
        let mut settings = SandboxSettings::new(root.to_path_buf());
        // A worktree North made: commands may commit there (its branch and
        // git directory only); a repository's own `.git` file opens nothing.
        settings.worktree = crate::worktree_record::owned(root).map(|wt| {
            wt.prepare_git_dirs();
            wt.git()
        });
        settings.hidden = self.hide.clone();
        settings.home_readable = self.allow_read.clone();
        settings.unix_sockets = self.unix_sockets;
        if grants.contains(&north_protocol::Capability::Net) {
            settings.network = Network::On;
        }
        settings
    }

    /// The settings commands run under: without the grant `net`, a
    /// network of their own whose one way out is North's proxy, which
    /// reaches only the hosts a `net:<domain>` grant covers and says so of
    /// the rest (no network at all when the proxy cannot start).
    pub fn command_settings(
        &self,
        root: &std::path::Path,
        grants: &[north_protocol::Capability],
    ) -> SandboxSettings {
        let mut settings = self.settings(root, grants);
        // `net` alone is the whole network, unless hosts are denied: then
        // it goes through the proxy too, whose deny list wins.
        let whole = settings.network == Network::On && self.network_deny.is_empty();
        if !whole && let Some(socket) = crate::egress::socket_for(self.rules(grants), root) {
            settings.network = Network::Proxied(socket);
        }
        settings
    }

    /// What the proxy judges commands' connections by: the session's
    /// grants, the hosts the user's config allows (and the registries
    /// their tools use, when asked), and the hosts denied whatever grants
    /// them. (What the user allowed "always for this project" is read by
    /// the proxy at each connection.)
    pub fn rules(&self, grants: &[north_protocol::Capability]) -> north_egress::Rules {
        use north_protocol::Capability;
        let mut granted: Vec<Capability> = grants.to_vec();
        granted.extend(self.network_allow.iter().cloned().map(Capability::NetHost));
        if self.registries {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            granted.extend(
                crate::registries::registry_hosts(home.as_deref(), |k| std::env::var(k).ok())
                    .into_iter()
                    .map(Capability::NetHost),
            );
        }
        north_egress::Rules {
            grants: granted,
            deny: self.network_deny.clone(),
        }
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
        let settings = if kind == ChildKind::Command {
            self.command_settings(root, grants)
        } else {
            self.settings(root, grants)
        };
        sandboxed(&settings, kind).unwrap_or_else(|e| {
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
        // A plugin's server reads its own folder, and no more of home
        // than the user's hidden and readable paths.
        if server.scope == north_mcp::config::Scope::Plugin {
            // Its plugin's folder, as North set it (the plugin's own
            // settings cannot name another).
            if let north_mcp::config::Transport::Stdio { env, .. } = &server.transport
                && let Some(root) = env.get("CLAUDE_PLUGIN_ROOT")
            {
                settings.home_readable.push(PathBuf::from(root));
            }
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
