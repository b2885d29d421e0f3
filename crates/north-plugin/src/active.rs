//! The plugins a session loads: those installed and switched on — by the
//! user, or by a trusted project's `enabledPlugins` — whose files are
//! still the ones reviewed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::parts::Parts;
use crate::store::Store;

/// One plugin a session loads.
#[derive(Debug, Clone)]
pub struct ActivePlugin {
    /// Its name.
    pub name: String,
    /// Its folder (`CLAUDE_PLUGIN_ROOT`).
    pub root: PathBuf,
    /// What it adds.
    pub parts: Parts,
}

/// The plugins a session loads, and what the user should hear about the
/// others.
#[derive(Debug, Clone, Default)]
pub struct Active {
    /// The plugins loaded.
    pub plugins: Vec<ActivePlugin>,
    /// Plugins not loaded, and problems in loaded ones, a line each.
    pub notices: Vec<String>,
    /// Every installed plugin's record, loaded or not (for `/plugin`).
    pub installed: Vec<crate::registry::InstalledPlugin>,
}

impl Active {
    /// The plugins of `store` switched on by `settings` (`NAME` or
    /// `NAME@MARKETPLACE` → on or off; the effective configuration), else
    /// by their own switch.
    pub fn load(store: &Store, settings: &BTreeMap<String, bool>) -> Active {
        let mut active = Active {
            installed: store.registry.plugins.clone(),
            ..Active::default()
        };
        for p in &store.registry.plugins {
            let on = settings
                .get(&p.key())
                .or_else(|| settings.get(&p.name))
                .copied()
                .unwrap_or(p.enabled);
            if !on {
                continue;
            }
            let (root, manifest) = match store.installed(p) {
                Ok(found) => found,
                Err(e) => {
                    active.notices.push(e.to_string());
                    continue;
                }
            };
            let mut parts = Parts::read(&root, &manifest);
            // Two plugins' servers can reduce to one name (`a.b` and
            // `a-b`): the first keeps it, the other is said.
            parts.servers.retain(|s| {
                let taken = active.plugins.iter().find(|other| {
                    other.parts.servers.iter().any(|o| o.name == s.name)
                });
                if let Some(other) = taken {
                    active.notices.push(format!(
                        "plugin {}: MCP server `{}` has the name of one of plugin {}'s; not started",
                        p.name, s.name, other.name
                    ));
                }
                taken.is_none()
            });
            active.notices.extend(
                parts
                    .problems
                    .iter()
                    .map(|why| format!("plugin {}: {why}", p.name)),
            );
            active.plugins.push(ActivePlugin {
                name: p.name.clone(),
                root,
                parts,
            });
        }
        for (key, on) in settings {
            let name = key.split('@').next().unwrap_or(key);
            if *on && store.registry.plugin(key).is_none() && store.registry.plugin(name).is_none()
            {
                active.notices.push(format!(
                    "plugin `{key}` is switched on here but not installed: `north plugin install {key}` shows it and asks"
                ));
            }
        }
        active
    }

    /// The user's store, loaded for `settings`; an unreadable store is a
    /// notice, not a failure.
    pub fn of_user(settings: &BTreeMap<String, bool>) -> Active {
        match Store::user() {
            Ok(store) => Active::load(&store, settings),
            Err(e) => Active {
                notices: vec![format!("plugins not loaded: {e}")],
                ..Active::default()
            },
        }
    }

    /// The plugins' folders (readable to their hooks and servers).
    pub fn roots(&self) -> Vec<PathBuf> {
        self.plugins.iter().map(|p| p.root.clone()).collect()
    }
}
