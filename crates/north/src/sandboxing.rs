//! Where North's commands run: the user's choice about the OS sandbox
//! (their flag, else their own config), and the `north sandbox` launcher
//! argv that the shell, MCP stdio servers and `north mcp serve` start
//! through.

use std::path::PathBuf;

use anyhow::Context;
use north_agent::config::{Config, Overrides};

/// The user's choice about the OS sandbox: their flag, else their own
/// config; a project's file never counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxChoice {
    /// Commands run inside the sandbox.
    pub enabled: bool,
    /// Paths hidden besides the secret stores (`sandbox.deny_read`).
    pub hide: Vec<PathBuf>,
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
                    unix_sockets: false,
                }
            }
        }
    }
}

/// The sandbox launcher commands start through, or `None` when the user
/// turned the sandbox off (or the platform has none).
pub fn confined_launcher(
    root: &std::path::Path,
    sandbox: &SandboxChoice,
    grants: &[north_protocol::Capability],
) -> Option<Vec<std::ffi::OsString>> {
    if !sandbox.enabled || !cfg!(target_os = "linux") {
        tracing::warn!("the OS sandbox is off: commands run unconfined");
        return None;
    }
    match sandbox_launcher(root, grants, sandbox) {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::warn!(error = %e, "no sandbox launcher; commands run unconfined");
            None
        }
    }
}

/// The launcher that starts the shell inside `north sandbox` for `root`,
/// granting network sockets when a `net` capability is granted.
pub fn sandbox_launcher(
    root: &std::path::Path,
    grants: &[north_protocol::Capability],
    choice: &SandboxChoice,
) -> anyhow::Result<Vec<std::ffi::OsString>> {
    let exe =
        std::env::current_exe().context("cannot find the north binary to sandbox commands")?;
    let mut argv: Vec<std::ffi::OsString> =
        vec![exe.into(), "sandbox".into(), "--path".into(), root.into()];
    if grants.iter().any(|c| {
        matches!(
            c,
            north_protocol::Capability::Net | north_protocol::Capability::NetHost(_)
        )
    }) {
        argv.extend(["--grant".into(), "net".into()]);
    }
    for path in &choice.hide {
        argv.push("--hide".into());
        argv.push(path.into());
    }
    if choice.unix_sockets {
        argv.push("--unix-sockets".into());
    }
    argv.push("--".into());
    Ok(argv)
}

/// The launcher stdio MCP servers start through: the OS sandbox with the
/// network on (reaching a service is many servers' job), and the package
/// managers' caches writable so `npx`/`uvx` servers can install themselves.
pub fn mcp_launcher(root: &std::path::Path) -> Option<Vec<std::ffi::OsString>> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let mut argv: Vec<std::ffi::OsString> = vec![
        exe.into(),
        "sandbox".into(),
        "--path".into(),
        root.into(),
        "--grant".into(),
        "net".into(),
        // A server the user configured may run from the temp dir.
        "--shared-tmp".into(),
    ];
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".cache")));
    let mut writable: Vec<std::path::PathBuf> = Vec::new();
    writable.extend(cache);
    writable.extend(home.iter().map(|h| h.join(".npm")));
    for dir in writable.into_iter().filter(|d| d.is_dir()) {
        argv.push("--write".into());
        argv.push(dir.into());
    }
    argv.push("--".into());
    Some(argv)
}

/// The spawner hooks start through: the OS sandbox for the project (its
/// tree and the shared temp dir writable, so a hook's log or marker is
/// seen outside), the network only when `network` (the user's own config
/// said so); unconfined when the user turned the sandbox off.
pub fn hook_spawner(
    root: &std::path::Path,
    choice: &SandboxChoice,
    network: bool,
) -> north_tools::Spawner {
    if !choice.enabled || !cfg!(target_os = "linux") {
        return north_tools::Spawner::unconfined();
    }
    let grants = if network {
        vec![north_protocol::Capability::Net]
    } else {
        Vec::new()
    };
    match sandbox_launcher(root, &grants, choice) {
        Ok(mut argv) => {
            // Before the closing `--`.
            argv.insert(argv.len() - 1, "--shared-tmp".into());
            north_tools::Spawner::confined(argv)
        }
        Err(e) => {
            tracing::warn!(error = %e, "no sandbox launcher; hooks run unconfined");
            north_tools::Spawner::unconfined()
        }
    }
}
