//! The custom slash commands a session offers: the project's, the user's
//! config dir's and the active plugins', none shadowing a front end's own.

use std::path::Path;

use north_agent::commands::CustomCommand;

use crate::project::Project;

/// The custom slash commands of `root` and of the user's config dir (the
/// user's win over an untrusted project's), then the plugins'; `builtin`
/// names the front end's own commands, which none may take.
pub fn custom_commands(
    root: &Path,
    project_trusted: bool,
    plugins: &north_plugin::Active,
    builtin: &[&str],
) -> Vec<CustomCommand> {
    let config_dir = north_config::global_config_path()
        .and_then(|p| p.parent().map(std::path::Path::to_path_buf));
    let mut all =
        north_agent::commands::load(root, config_dir.as_deref(), builtin, project_trusted);
    for plugin in &plugins.plugins {
        north_agent::commands::add_commands(&mut all, plugin.parts.commands.clone(), builtin);
    }
    all
}

impl Project {
    /// This project's custom slash commands (its trust and plugins
    /// applied); `builtin` as for [`custom_commands`].
    pub fn custom_commands(&self, builtin: &[&str]) -> Vec<CustomCommand> {
        custom_commands(&self.root, self.trust.applies(), &self.plugins, builtin)
    }
}
