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
            },
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
            Origin::Marketplace { marketplace } => write!(f, "marketplace {marketplace}"),
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
            Origin::Marketplace { marketplace } => format!("{}@{marketplace}", self.name),
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
        match crate::manifest::read_json(&path) {
            Ok(None) => Ok(Registry::default()),
            Ok(Some(v)) => serde_json::from_value(v).map_err(|e| PluginError::Manifest {
                path,
                message: format!("not North's plugin registry: {e}"),
            }),
            Err(e) => Err(e),
        }
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
