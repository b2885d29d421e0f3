//! What is installed: `registry.json` in the plugin store, the one record
//! of each plugin's source, pinned commit and content hash, and of each
//! marketplace added. Written atomically; a record's folder is derived
//! from its name and hash, never read from the file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::PluginError;
use crate::source::Source;

/// Where a plugin or marketplace came from, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// A folder that is not a git repository.
    Folder {
        /// Its path.
        path: PathBuf,
    },
    /// A git repository.
    Git {
        /// Its URL or path.
        url: String,
        /// The folder inside it that is the plugin (`None`: its top).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subdir: Option<String>,
    },
    /// A plugin a marketplace lists.
    Marketplace {
        /// The marketplace's name.
        marketplace: String,
        /// Where its entry pointed (a folder of it, or a git URL).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
}

impl Origin {
    /// The origin of a plain source.
    pub fn of(source: &Source) -> Origin {
        match source {
            Source::Folder(path) => Origin::Folder { path: path.clone() },
            Source::Git(url) => Origin::Git {
                url: url.clone(),
                subdir: None,
            },
            Source::Marketplace { marketplace, .. } => Origin::Marketplace {
                marketplace: marketplace.clone(),
                from: None,
            },
        }
    }

    /// Whether it is this machine's files (a folder, a local repository).
    pub fn is_local(&self) -> bool {
        match self {
            Origin::Folder { .. } => true,
            Origin::Git { url, .. } => {
                url.starts_with("file:") || !(url.contains("://") || url.starts_with("git@"))
            }
            Origin::Marketplace { .. } => false,
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Folder { path } => write!(f, "{}", path.display()),
            Origin::Git { url, subdir: None } => f.write_str(url),
            Origin::Git {
                url,
                subdir: Some(s),
            } => write!(f, "{url} ({s})"),
            Origin::Marketplace {
                marketplace,
                from: None,
            } => write!(f, "marketplace {marketplace}"),
            Origin::Marketplace {
                marketplace,
                from: Some(from),
            } => write!(f, "marketplace {marketplace} ({from})"),
        }
    }
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    /// Its name.
    pub name: String,
    /// Its version, when its manifest gives one.
    #[serde(default)]
    pub version: Option<String>,
    /// Where it came from.
    pub origin: Origin,
    /// The revision asked for (`None`: the default branch).
    #[serde(default)]
    pub rev: Option<String>,
    /// The commit its files are from (`None`: a plain folder).
    #[serde(default)]
    pub commit: Option<String>,
    /// The SHA-256 of its files, as reviewed.
    pub hash: String,
    /// Whether it is on where no project setting says otherwise.
    pub enabled: bool,
}

impl InstalledPlugin {
    /// `NAME@MARKETPLACE` (Claude Code's key in `enabledPlugins`), or the
    /// name alone.
    pub fn key(&self) -> String {
        match &self.origin {
            Origin::Marketplace { marketplace, .. } => format!("{}@{marketplace}", self.name),
            _ => self.name.clone(),
        }
    }

    /// The commit or hash it is pinned to, short.
    pub fn pin(&self) -> String {
        match &self.commit {
            Some(c) => format!("commit {}", &c[..c.len().min(12)]),
            None => format!("content {}", &self.hash[..self.hash.len().min(12)]),
        }
    }
}

/// One marketplace added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarketplaceRecord {
    /// Its name (from its `marketplace.json`).
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// The revision asked for.
    #[serde(default)]
    pub rev: Option<String>,
    /// The commit its listing is from.
    #[serde(default)]
    pub commit: Option<String>,
}

/// The store's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    /// Installed plugins, by name.
    #[serde(default)]
    pub plugins: Vec<InstalledPlugin>,
    /// Marketplaces added, by name.
    #[serde(default)]
    pub marketplaces: Vec<MarketplaceRecord>,
}

impl Registry {
    /// The file in the store `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("registry.json")
    }

    /// Reads the registry of `dir` (empty when there is none).
    pub fn load(dir: &Path) -> Result<Registry, PluginError> {
        let path = Registry::path(dir);
        let registry: Registry = match crate::manifest::read_json(&path)? {
            None => return Ok(Registry::default()),
            Some(v) => serde_json::from_value(v).map_err(|e| PluginError::Manifest {
                path: path.clone(),
                message: format!("not North's plugin registry: {e}"),
            })?,
        };
        // Names and hashes become paths in the store: a record North did not
        // write is refused whole rather than followed.
        let hex = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        let bad_plugin = registry.plugins.iter().find(|p| {
            !crate::source::valid_name(&p.name)
                || !hex(&p.hash, 64)
                || p.commit
                    .as_deref()
                    .is_some_and(|c| !hex(c, 40) && !hex(c, 64))
        });
        let bad_market = registry
            .marketplaces
            .iter()
            .find(|m| !crate::source::valid_name(&m.name));
        if let Some(name) = bad_plugin
            .map(|p| p.name.as_str())
            .or(bad_market.map(|m| m.name.as_str()))
        {
            return Err(PluginError::Manifest {
                path,
                message: format!(
                    "entry `{}` is not one North wrote (a name or hash it would not use); remove the file to start again",
                    name.escape_debug()
                ),
            });
        }
        Ok(registry)
    }

    /// Writes it to `dir` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), PluginError> {
        let path = Registry::path(dir);
        std::fs::create_dir_all(dir).map_err(PluginError::io("create", dir))?;
        let text = serde_json::to_vec_pretty(self).unwrap_or_default();
        north_tools::repo::atomic_write(&path, &text).map_err(|e| PluginError::Io {
            what: "write",
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    }

    /// The plugin called `name` (or `NAME@MARKETPLACE`).
    pub fn plugin(&self, name: &str) -> Option<&InstalledPlugin> {
        self.plugins
            .iter()
            .find(|p| p.name == name || p.key() == name)
    }

    /// The marketplace called `name`.
    pub fn marketplace(&self, name: &str) -> Option<&MarketplaceRecord> {
        self.marketplaces.iter().find(|m| m.name == name)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_record_north_would_not_write_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let good = serde_json::json!({"plugins": [{"name": "fmt", "origin": {"kind": "folder", "path": "/x"},
            "hash": "a".repeat(64), "enabled": true}]});
        std::fs::write(Registry::path(dir.path()), good.to_string()).unwrap();
        assert_eq!(Registry::load(dir.path()).unwrap().plugins.len(), 1);
        for (name, hash) in [
            ("../../victim", "a".repeat(64)),
            ("fmt", "/../..".into()),
            ("fmt", "é".repeat(32)),
        ] {
            let bad = serde_json::json!({"plugins": [{"name": name, "origin": {"kind": "folder", "path": "/x"},
                "hash": hash, "enabled": true}]});
            std::fs::write(Registry::path(dir.path()), bad.to_string()).unwrap();
            let e = Registry::load(dir.path()).unwrap_err().to_string();
            assert!(e.contains("is not one North wrote"), "{e}");
        }
    }

    #[test]
    fn local_origins_are_this_machines_files() {
        let git = |url: &str| Origin::Git {
            url: url.into(),
            subdir: None,
        };
        assert!(git("/srv/repo").is_local());
        assert!(git("file:///srv/repo").is_local());
        assert!(git("../repo").is_local());
        assert!(!git("https://host/o/r.git").is_local());
        assert!(!git("git@host:o/r.git").is_local());
    }
}
