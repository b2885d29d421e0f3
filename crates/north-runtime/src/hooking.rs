//! The user's hooks (a trusted project's, the plugins') bound to a
//! project and its sandbox, the one way every front end gets them: the agent's sessions,
//! and as a gate around the calls `north tool` and `north mcp serve` make.

use north_config::Config;
use north_tools::os_sandbox::ChildKind;

use crate::sandboxing::SandboxChoice;

/// The hooks of `config` bound to `root` and its sandbox: what every front
/// end runs them with. What the user's own hooks name in their home
/// directory (`~/bin/notify`) stays readable to hooks; what a project's
/// hooks name there does not.
pub(crate) fn hooks_for(
    root: &std::path::Path,
    config: &Config,
    sandbox: &SandboxChoice,
    grants: &[north_protocol::Capability],
) -> north_agent::hooks::Hooks {
    let mut choice = sandbox.clone();
    choice
        .allow_read
        .extend(crate::sandboxing::named_in_commands(
            config
                .hooks
                .defs()
                .iter()
                .filter(|d| matches!(d.origin, north_agent::hooks::HookOrigin::User(_)))
                .map(|d| d.command.as_str()),
        ));
    // A plugin's hooks read their own folder (`CLAUDE_PLUGIN_ROOT`).
    for def in config.hooks.defs() {
        if let Some(plugin) = def.origin.plugin_root()
            && !choice.allow_read.iter().any(|p| p == plugin)
        {
            choice.allow_read.push(plugin.to_path_buf());
        }
    }
    let hook = |network| choice.spawner(root, grants, ChildKind::Hook { network });
    north_agent::hooks::Hooks::new(
        config.hooks.clone(),
        root.to_path_buf(),
        hook(false),
        hook(true),
    )
}

/// The installed plugins `config` switches on, their hooks added to the
/// config's: what a session runs and what a command that opens none
/// (`north tool`, `north mcp serve`) runs around its calls.
pub(crate) fn with_plugins(config: &mut Config) -> north_plugin::Active {
    let plugins = north_plugin::Active::of_user(&config.enabled_plugins);
    for plugin in &plugins.plugins {
        config.hooks.extend(plugin.parts.hooks.clone());
    }
    plugins
}

/// The hooks of the user's config, a trusted project's and the plugins
/// switched on, for a command that opens no session; `None` when there
/// are none (or the configuration cannot be read).
pub(crate) fn loaded_hooks(
    root: &std::path::Path,
    trusted: bool,
    choice: &SandboxChoice,
    grants: &[north_protocol::Capability],
) -> Option<north_agent::hooks::Hooks> {
    let global = north_config::global_config_path();
    let mut config = north_config::Config::load(
        root,
        global.as_deref(),
        north_secrets::var,
        &north_config::Overrides::default(),
        trusted,
    )
    .ok()?;
    with_plugins(&mut config);
    if config.hooks.is_empty() {
        return None;
    }
    Some(hooks_for(root, &config, choice, grants))
}

/// The hooks of the user's config (a trusted project's, the plugins') as
/// a gate around the call; `None` when there are none.
pub fn hook_gate(
    root: &std::path::Path,
    trusted: bool,
    choice: &SandboxChoice,
    grants: &[north_protocol::Capability],
) -> Option<north_agent::hooks::HookGate> {
    let hooks = loaded_hooks(root, trusted, choice, grants)?;
    Some(north_agent::hooks::HookGate::new(
        std::sync::Arc::new(hooks),
        north_agent::hooks::HookSession {
            session_id: format!("north-{}", std::process::id()),
            // A single call has no transcript.
            transcript_path: std::path::PathBuf::new(),
            permission_mode: north_protocol::PermissionMode::Ask,
        },
    ))
}
