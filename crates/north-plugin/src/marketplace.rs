//! A marketplace's listing, `.claude-plugin/marketplace.json`: its `name`
//! and `plugins`, each with a `source` — a folder inside the marketplace
//! (`"./plugins/x"`), a forge repository (`{"source": "github", "repo":
//! "o/r"}`), or a git URL (`{"source": "url" | "git-subdir", "url", "path",
//! "ref", "sha"}`). Sources that would run a program to fetch (`npm`,
//! `command`) are refused.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::PluginError;
use crate::manifest::{inside, read_json};

/// The listing's path inside a marketplace.
pub const LISTING: &str = ".claude-plugin/marketplace.json";

/// Where a listed plugin's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntrySource {
    /// A folder inside the marketplace.
    Inside(PathBuf),
    /// A git repository, at a revision, maybe in a folder of it.
    Git {
        /// Its URL.
        url: String,
        /// A branch, tag or commit (`sha` wins over `ref`).
        rev: Option<String>,
        /// The folder inside it.
        subdir: Option<PathBuf>,
    },
}

/// One listed plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where it is.
    pub source: EntrySource,
    /// The entry itself: with `"strict": false` it stands in for a
    /// missing manifest.
    pub raw: Value,
}

/// A marketplace's listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Its name.
    pub name: String,
    /// Its plugins (entries North cannot fetch are in `problems`).
    pub entries: Vec<Entry>,
    /// Entries not taken, a line each.
    pub problems: Vec<String>,
}

impl Listing {
    /// Reads the listing of the marketplace in `dir`; `OWNER/REPO`
    /// sources are fetched from `forge`.
    pub fn read(dir: &Path, forge: &str) -> Result<Listing, PluginError> {
        let path = dir.join(LISTING);
        let Some(value) = read_json(&path)? else {
            return Err(PluginError::NoMarketplace(dir.to_path_buf()));
        };
        let bad = |message: &str| PluginError::Manifest {
            path: path.clone(),
            message: message.to_string(),
        };
        let name = value
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`name` is missing (e.g. \"name\": \"team-tools\")"))?;
        if !crate::source::valid_name(name) {
            return Err(bad("`name` must be letters, digits, `-`, `_` or `.`"));
        }
        let plugins = value
            .get("plugins")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("`plugins` is missing: a list of {\"name\", \"source\"}"))?;
        let mut listing = Listing {
            name: name.to_string(),
            entries: Vec::new(),
            problems: Vec::new(),
        };
        for (i, raw) in plugins.iter().enumerate() {
            match entry(raw, forge) {
                Ok(e) => listing.entries.push(e),
                Err(why) => listing.problems.push(format!("plugins[{i}]: {why}")),
            }
        }
        Ok(listing)
    }

    /// The entry called `plugin`.
    pub fn get(&self, plugin: &str) -> Result<&Entry, PluginError> {
        self.entries
            .iter()
            .find(|e| e.name == plugin)
            .ok_or_else(|| PluginError::NotInMarketplace {
                plugin: plugin.to_string(),
                marketplace: self.name.clone(),
                listed: self
                    .entries
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

fn entry(raw: &Value, forge: &str) -> Result<Entry, String> {
    let name = raw
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| crate::source::valid_name(n))
        .ok_or("`name` is missing or not letters, digits, `-`, `_` or `.`")?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let source = match raw.get("source") {
        Some(Value::String(rel)) => EntrySource::Inside(
            inside(rel)
                .ok_or_else(|| format!("`{name}`: source `{rel}` leaves the marketplace"))?,
        ),
        Some(spec @ Value::Object(_)) => {
            let rev = text(spec, "sha")
                .or_else(|| text(spec, "ref"))
                .or_else(|| text(spec, "commit"));
            let subdir = match text(spec, "path") {
                Some(p) => {
                    Some(inside(&p).ok_or_else(|| format!("`{name}`: path `{p}` climbs out"))?)
                }
                None => None,
            };
            match text(spec, "source").as_deref() {
                Some("github") => {
                    let repo = text(spec, "repo")
                        .ok_or_else(|| format!("`{name}`: github source without `repo`"))?;
                    EntrySource::Git {
                        url: format!(
                            "{}/{}.git",
                            forge.trim_end_matches('/'),
                            repo.trim_end_matches(".git")
                        ),
                        rev,
                        subdir,
                    }
                }
                Some("url" | "git" | "git-subdir") => EntrySource::Git {
                    url: text(spec, "url")
                        .ok_or_else(|| format!("`{name}`: source without `url`"))?,
                    rev,
                    subdir,
                },
                Some(kind) => {
                    return Err(format!(
                        "`{name}`: source kind `{kind}` is not installed by North (it is fetched by running a program); install the plugin from its git repository"
                    ));
                }
                None => return Err(format!("`{name}`: source object without `source`")),
            }
        }
        _ => return Err(format!("`{name}`: `source` is missing")),
    };
    Ok(Entry {
        name: name.to_string(),
        description: text(raw, "description").unwrap_or_default(),
        source,
        raw: raw.clone(),
    })
}
