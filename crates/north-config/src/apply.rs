//! Applying one config file to the configuration: what a project file may
//! not set (endpoints, the sandbox, widening keys when untrusted, hooks
//! when untrusted) is recorded as ignored, never applied.

use std::path::PathBuf;

use super::file::{NetworkFile, SandboxFile};
use super::{Config, ConfigFile, IgnoredBecause, IgnoredSetting, Source};

impl Config {
    /// Applies a config file. A project file (`project = Some(trusted)`)
    /// never sets an endpoint, and sets a widening security key only when
    /// the project is trusted; what it may not set is recorded in `ignored`.
    pub(super) fn apply_file(
        &mut self,
        mut f: ConfigFile,
        src: impl Fn() -> Source,
        project: Option<bool>,
    ) {
        if let Some(trusted) = project {
            self.hold_back_from_project(&mut f, trusted, &src);
        }
        if let Some(block) = &f.hooks {
            self.add_hooks(block, src());
        }
        self.apply_front_end(&mut f, &src);
        if let Some(v) = f.provider {
            self.provider.set(v, src());
        }
        if let Some(providers) = f.providers {
            self.providers.extend(providers);
        }
        if let Some(v) = f.model {
            self.model.set(Some(v), src());
        }
        if let Some(v) = f.anthropic_base_url {
            self.anthropic_base_url.set(Some(v), src());
        }
        if let Some(v) = f.openai_base_url {
            self.openai_base_url.set(Some(v), src());
        }
        if let Some(v) = f.max_steps {
            self.max_steps.set(v, src());
        }
        if let Some(v) = f.approve_edits {
            self.approve_edits.set(v, src());
        }
        if let Some(v) = f.allow_shell {
            self.allow_shell.set(v, src());
        }
        if let Some(v) = f.tool_protocol {
            self.tool_protocol.set(v, src());
        }
        if let Some(v) = f.context_budget {
            self.context_budget.set(Some(v), src());
        }
        if let Some(v) = f.compact_at {
            self.compact_at.set(v, src());
        }
        if let Some(v) = f.openai_api {
            self.openai_api.set(Some(v), src());
        }
        if let Some(v) = f.context_window {
            self.context_window.set(Some(v), src());
        }
        // An allowlist only narrows `net`, so a project may always set it;
        // a later file narrows what an earlier one allowed.
        if let Some(v) = f.net_allowlist {
            let narrowed = match &self.net_allowlist.value {
                Some(prev) => v.into_iter().filter(|h| prev.contains(h)).collect(),
                None => v,
            };
            self.net_allowlist.set(Some(narrowed), src());
        }
        if let Some(v) = f.thinking {
            self.thinking.set(Some(v), src());
        }
        if let Some(v) = f.mode {
            self.mode.set(v, src());
        }
        if let Some(sandbox) = f.sandbox {
            self.apply_sandbox(sandbox, &src);
        }
    }

    /// The user's `sandbox` block (a project's never reaches here; see
    /// `hold_back_from_project`).
    fn apply_sandbox(&mut self, sandbox: SandboxFile, src: &impl Fn() -> Source) {
        if let Some(v) = sandbox.enabled {
            self.sandbox.set(v, src());
        }
        if let Some(v) = sandbox.unix_sockets {
            self.sandbox_unix_sockets.set(v, src());
        }
        if let Some(paths) = sandbox.deny_read {
            self.sandbox_deny_read.set(home_paths(&paths), src());
        }
        if let Some(paths) = sandbox.allow_read {
            self.sandbox_allow_read.set(home_paths(&paths), src());
        }
        if let Some(network) = sandbox.network {
            if let Some(allow) = network.allow {
                self.sandbox_network_allow.set(allow, src());
            }
            if let Some(v) = network.registries {
                self.sandbox_network_registries.set(v, src());
            }
            if let Some(deny) = network.deny {
                self.deny_hosts(deny, src());
            }
        }
    }

    /// Adds hosts commands never reach: every file's count.
    fn deny_hosts(&mut self, hosts: Vec<super::file::HostPattern>, source: Source) {
        let mut all = self.sandbox_network_deny.value.clone();
        for host in hosts {
            if !all.contains(&host) {
                all.push(host);
            }
        }
        self.sandbox_network_deny.set(all, source);
    }

    /// What shapes the front ends rather than the agent: web search, the
    /// status line, keys and notifications.
    fn apply_front_end(&mut self, f: &mut ConfigFile, src: &impl Fn() -> Source) {
        if let Some(w) = f.web_search.take() {
            if let Some(url) = w.searxng_url {
                self.web_search_url = Some(url);
            }
            if w.provider == Some(true) {
                self.web_search_provider = true;
            }
        }
        if let Some(v) = f.status_line.take() {
            self.status_line = Some(v);
        }
        if let Some(servers) = f.lsp.take() {
            self.lsp.extend(servers);
        }
        if let Some(plugins) = f.enabled_plugins.take() {
            self.enabled_plugins.extend(plugins);
        }
        if let Some(v) = f.keybindings.take() {
            self.keybindings.extend(v);
        }
        if let Some(v) = f.notifications.take() {
            self.notifications.set(v, src());
        }
        if let Some(v) = f.claude_permissions.take() {
            self.claude_user_permissions.set(v, src());
        }
        if let Some(v) = f.theme.take() {
            self.theme.set(v, src());
        }
    }

    /// Takes out of a project file what it may not set (endpoints, the
    /// sandbox; widening keys and hooks unless `trusted`), recording each.
    fn hold_back_from_project(
        &mut self,
        f: &mut ConfigFile,
        trusted: bool,
        src: &impl Fn() -> Source,
    ) {
        if let Some(sandbox) = f.sandbox.take() {
            // A project may keep its commands from hosts (narrowing),
            // never open any or loosen the rest.
            let deny = sandbox.network.as_ref().and_then(|n| n.deny.clone());
            let widening = SandboxFile {
                network: sandbox
                    .network
                    .map(|n| NetworkFile { deny: None, ..n })
                    .filter(|n| *n != NetworkFile::default()),
                ..sandbox
            };
            if let Some(deny) = deny {
                self.deny_hosts(deny, src());
            }
            if widening != SandboxFile::default() {
                self.ignore("sandbox", IgnoredBecause::SandboxFromProject);
            }
        }
        // Where queries go is the user's choice, like where keys go.
        if f.web_search.take().is_some() {
            self.ignore("web_search", IgnoredBecause::EndpointFromProject);
        }
        if f.anthropic_base_url.take().is_some() {
            self.ignore("anthropic_base_url", IgnoredBecause::EndpointFromProject);
        }
        if f.openai_base_url.take().is_some() {
            self.ignore("openai_base_url", IgnoredBecause::EndpointFromProject);
        }
        // A project may name a provider, never say where it is, which
        // headers it gets or which variable's key it is sent.
        if f.providers.take().is_some() {
            self.ignore("providers", IgnoredBecause::EndpointFromProject);
        }
        // It runs on every screen update, unasked: the user's alone.
        if f.status_line.take().is_some() {
            self.ignore("statusLine", IgnoredBecause::UserOnly);
        }
        // Whose rules apply is the user's choice.
        if f.claude_permissions.take().is_some() {
            self.ignore("claude_permissions", IgnoredBecause::UserOnly);
        }
        // A hook is code: a project's run only once it is trusted.
        if !trusted && f.hooks.take().is_some() {
            self.ignore("hooks", IgnoredBecause::Untrusted);
        }
        // So is a language server North would start.
        if !trusted && f.lsp.take().is_some() {
            self.ignore("lsp", IgnoredBecause::Untrusted);
        }
        // And a plugin it switches on.
        if !trusted && f.enabled_plugins.take().is_some() {
            self.ignore("enabledPlugins", IgnoredBecause::Untrusted);
        }
        // `false` narrows and always applies; `true` widens.
        if !trusted && f.approve_edits == Some(true) {
            f.approve_edits = None;
            self.ignore("approve_edits", IgnoredBecause::Untrusted);
        }
        if !trusted && f.allow_shell == Some(true) {
            f.allow_shell = None;
            self.ignore("allow_shell", IgnoredBecause::Untrusted);
        }
        // A project may choose `plan` or `ask` for itself, never raise
        // its own mode unless the user trusts it.
        if !trusted && f.mode.is_some_and(north_protocol::PermissionMode::widens) {
            f.mode = None;
            self.ignore("mode", IgnoredBecause::Untrusted);
        }
    }

    /// Adds a file's hooks (checked when the file was read).
    fn add_hooks(&mut self, block: &serde_json::Value, src: Source) {
        let origin = match src {
            Source::Project(_) => {
                crate::hooks::HookOrigin::Project(PathBuf::from(".north/project.json"))
            }
            Source::Global(p) => crate::hooks::HookOrigin::User(p),
            other => crate::hooks::HookOrigin::User(PathBuf::from(other.to_string())),
        };
        // Checked when the file was read; a failure here cannot happen.
        if let Ok(set) = crate::hooks::HookSet::parse(block, origin, true) {
            self.hooks.extend(set);
        }
    }

    pub(super) fn ignore(&mut self, key: &'static str, because: IgnoredBecause) {
        self.ignored.push(IgnoredSetting { key, because });
    }
}

/// Paths from a config list, `~/` meaning the home directory (dropped when
/// there is none).
fn home_paths(paths: &[String]) -> Vec<std::path::PathBuf> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    paths
        .iter()
        .filter_map(|p| match (p.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => Some(h.join(rest)),
            (Some(_), None) => None,
            (None, _) => Some(std::path::PathBuf::from(p)),
        })
        .collect()
}
