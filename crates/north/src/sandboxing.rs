//! Where North's children run: the user's choice about the OS sandbox
//! (their flag, else their own config), turned into the project's
//! [`SandboxSettings`] and a [`Spawner`] per kind of child. The policy each
//! kind gets is decided in `north_tools::os_sandbox` alone.

use std::path::PathBuf;

use anyhow::Context;
use north_agent::config::{Config, Overrides};
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
    /// From the effective configuration and the `--sandbox` flag.
    pub fn new(config: &Config, flag: Option<crate::args::SandboxSwitch>) -> Self {
        let enabled = match flag {
            Some(crate::args::SandboxSwitch::On) => true,
            Some(crate::args::SandboxSwitch::Off) => false,
            None => config.sandbox.value,
        };
        if config
            .ignored
            .iter()
            .any(|i| i.because == north_agent::config::IgnoredBecause::SandboxFromProject)
        {
            eprintln!(
                "north: ignored `sandbox` in .north/project.json: only your own config or --sandbox shapes the OS sandbox"
            );
        }
        SandboxChoice {
            enabled,
            hide: config.sandbox_deny_read.value.clone(),
            allow_read: config.sandbox_allow_read.value.clone(),
            unix_sockets: config.sandbox_unix_sockets.value,
        }
    }

    /// For a command that loads no configuration of its own (`north tool`):
    /// the user's config, read for this alone.
    pub fn for_project(root: &std::path::Path, flag: Option<crate::args::SandboxSwitch>) -> Self {
        let global = north_agent::config::global_config_path();
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
                    enabled: flag != Some(crate::args::SandboxSwitch::Off),
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
    /// network only with the whole-network grant `net` — a per-domain
    /// grant is for North's own fetchers and never opens sockets.
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
/// paths.
pub fn mcp_spawner(root: &std::path::Path, choice: &SandboxChoice) -> Spawner {
    sandboxed(&choice.settings(root, &[]), ChildKind::McpServer).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "no sandbox launcher; MCP servers run unconfined");
        Spawner::unconfined()
    })
}

/// A spawner that starts children of `kind` inside the sandbox (whatever
/// the user's choice: the `auto` mode needs one); an error when this
/// platform has no sandbox or the binary cannot be found.
pub fn sandboxed(settings: &SandboxSettings, kind: ChildKind) -> anyhow::Result<Spawner> {
    if !cfg!(target_os = "linux") {
        anyhow::bail!("the OS sandbox is available on Linux only");
    }
    let exe =
        std::env::current_exe().context("cannot find the north binary to sandbox commands")?;
    Ok(Spawner::sandboxed(exe, settings.policy_for(kind)))
}
