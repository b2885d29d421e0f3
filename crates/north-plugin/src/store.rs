//! The plugin store in North's data dir: plugins fetched into a staging
//! folder, reviewed, then moved to `store/NAME/HASH` and recorded;
//! marketplaces copied to `marketplaces/NAME`. Nothing fetched is run.

use std::path::{Path, PathBuf};

use crate::error::PluginError;
use crate::fetch::{clone, content_hash, copy_tree};
use crate::manifest::Manifest;
use crate::marketplace::{EntrySource, Listing};
use crate::registry::{InstalledPlugin, MarketplaceRecord, Origin, Registry};
use crate::source::{Request, Source};

/// A plugin fetched and read, waiting for the user's yes.
pub struct Staged {
    /// Removed on drop (with the files, unless accepted).
    tmp: tempfile::TempDir,
    /// The record it will have.
    pub record: InstalledPlugin,
    /// Its manifest.
    pub manifest: Manifest,
    /// The record it replaces (an update).
    pub previous: Option<InstalledPlugin>,
}

impl Staged {
    /// Its files.
    pub fn dir(&self) -> PathBuf {
        self.tmp.path().join("plugin")
    }

    /// Whether an update would change nothing.
    pub fn unchanged(&self) -> bool {
        self.previous
            .as_ref()
            .is_some_and(|p| p.hash == self.record.hash)
    }
}

/// The user's plugin store.
pub struct Store {
    dir: PathBuf,
    forge: String,
    /// What is installed.
    pub registry: Registry,
}

impl Store {
    /// The user's store, beside North's data dir (`…/share/north-plugins`):
    /// not in it, since North's data dir is hidden from every sandboxed
    /// child and a plugin's hooks and servers read their own folder.
    pub fn user() -> Result<Store, PluginError> {
        let data = north_config::data_dir().ok_or(PluginError::NoDataDir)?;
        let dir = data
            .parent()
            .map_or_else(|| data.join("plugins"), |p| p.join("north-plugins"));
        Store::open(dir, crate::source::forge())
    }

    /// The store at `dir`, fetching `OWNER/REPO` from `forge`.
    pub fn open(dir: PathBuf, forge: String) -> Result<Store, PluginError> {
        let registry = Registry::load(&dir)?;
        clean_stale_staging(&dir);
        Ok(Store {
            dir,
            forge,
            registry,
        })
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The forge `OWNER/REPO` names.
    pub fn forge(&self) -> &str {
        &self.forge
    }

    /// Where an installed plugin's files are.
    pub fn plugin_dir(&self, p: &InstalledPlugin) -> PathBuf {
        self.dir
            .join("store")
            .join(&p.name)
            .join(&p.hash[..p.hash.len().min(16)])
    }

    /// Where an added marketplace's files are.
    pub fn marketplace_dir(&self, name: &str) -> PathBuf {
        self.dir.join("marketplaces").join(name)
    }

    /// The listing of marketplace `name`.
    pub fn listing(&self, name: &str) -> Result<Listing, PluginError> {
        if self.registry.marketplace(name).is_none() {
            return Err(PluginError::NoSuchMarketplace(name.to_string()));
        }
        Listing::read(&self.marketplace_dir(name), &self.forge)
    }

    /// The folder of an installed plugin after checking its files are the
    /// ones reviewed.
    pub fn verified(&self, p: &InstalledPlugin) -> Result<PathBuf, PluginError> {
        let dir = self.plugin_dir(p);
        match content_hash(&dir) {
            Ok(hash) if hash == p.hash => Ok(dir),
            _ => Err(PluginError::Tampered(p.name.clone())),
        }
    }

    /// An installed plugin's folder, checked against its review, and its
    /// manifest, named as recorded (a marketplace's entry may have named it).
    pub fn installed(&self, p: &InstalledPlugin) -> Result<(PathBuf, Manifest), PluginError> {
        let dir = self.verified(p)?;
        let recorded = serde_json::Value::Object(serde_json::Map::new());
        let manifest = Manifest::read(&dir, Some(&recorded), &p.name)?;
        Ok((
            dir,
            Manifest {
                name: p.name.clone(),
                ..manifest
            },
        ))
    }

    /// Fetches the plugin `req` names into a staging folder and reads it;
    /// nothing of it runs. A name already installed is refused.
    pub fn stage(&self, req: &Request) -> Result<Staged, PluginError> {
        let staged = self.fetch(req)?;
        if let Some(old) = self.registry.plugin(&staged.record.name) {
            return Err(PluginError::Installed {
                name: old.name.clone(),
                from: old.origin.to_string(),
            });
        }
        Ok(staged)
    }

    /// Fetches installed plugin `name` again from where it came (at `rev`,
    /// else at the revision it was installed from); the marketplace it
    /// came from is fetched again first.
    pub fn stage_update(&mut self, name: &str, rev: Option<String>) -> Result<Staged, PluginError> {
        let old = self
            .registry
            .plugin(name)
            .cloned()
            .ok_or_else(|| PluginError::NotInstalled(name.to_string()))?;
        let rev = rev.or_else(|| old.rev.clone());
        let source = match &old.origin {
            Origin::Folder { path } => Source::Folder(path.clone()),
            Origin::Git { url, .. } => Source::Git(url.clone()),
            Origin::Marketplace { marketplace, .. } => {
                self.update_marketplace(marketplace)?;
                Source::Marketplace {
                    plugin: old.name.clone(),
                    marketplace: marketplace.clone(),
                }
            }
        };
        let mut staged = self.fetch(&Request { source, rev })?;
        if staged.record.name != old.name {
            return Err(PluginError::Manifest {
                path: staged.dir().join(crate::manifest::MANIFEST),
                message: format!(
                    "the plugin is now called `{}`, not `{}`: remove it and install the new one",
                    staged.record.name, old.name
                ),
            });
        }
        staged.record.enabled = old.enabled;
        staged.previous = Some(old);
        Ok(staged)
    }

    /// Installs (or updates to) what was staged, after the user said yes.
    pub fn accept(&mut self, staged: Staged) -> Result<InstalledPlugin, PluginError> {
        // What is installed is what was shown: the staged files again.
        if content_hash(&staged.dir())? != staged.record.hash {
            return Err(PluginError::Tampered(staged.record.name.clone()));
        }
        let dest = self.plugin_dir(&staged.record);
        if !dest.exists() {
            let parent = dest.parent().unwrap_or(&self.dir);
            std::fs::create_dir_all(parent).map_err(PluginError::io("create", parent))?;
            std::fs::rename(staged.dir(), &dest).map_err(PluginError::io("move into", &dest))?;
        }
        let record = staged.record.clone();
        self.change(|registry| {
            registry.plugins.retain(|p| p.name != record.name);
            registry.plugins.push(record.clone());
            registry.plugins.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(())
        })?;
        if let Some(old) = &staged.previous
            && old.hash != record.hash
        {
            remove_all(&self.plugin_dir(old))?;
        }
        Ok(record)
    }

    /// Removes plugin `name` and its files.
    pub fn remove(&mut self, name: &str) -> Result<InstalledPlugin, PluginError> {
        let old = self.change(|registry| {
            let old = registry
                .plugin(name)
                .cloned()
                .ok_or_else(|| PluginError::NotInstalled(name.to_string()))?;
            registry.plugins.retain(|p| p.name != old.name);
            Ok(old)
        })?;
        let folder = self.dir.join("store").join(&old.name);
        remove_all(&folder)?;
        Ok(old)
    }

    /// Turns plugin `name` on or off where no project says otherwise.
    pub fn set_enabled(&mut self, name: &str, on: bool) -> Result<InstalledPlugin, PluginError> {
        self.change(|registry| {
            let Some(p) = registry
                .plugins
                .iter_mut()
                .find(|p| p.name == name || p.key() == name)
            else {
                return Err(PluginError::NotInstalled(name.to_string()));
            };
            p.enabled = on;
            Ok(p.clone())
        })
    }

    /// Adds the marketplace `req` names (a listing: nothing in it runs).
    pub fn add_marketplace(&mut self, req: &Request) -> Result<Listing, PluginError> {
        let (tmp, commit) = self.fetch_tree(&req.source, req.rev.as_deref(), None)?;
        let listing = Listing::read(&tmp.path().join("plugin"), &self.forge)?;
        if let Some(old) = self.registry.marketplace(&listing.name) {
            return Err(PluginError::MarketplaceExists {
                name: old.name.clone(),
                from: old.origin.to_string(),
            });
        }
        self.put_marketplace(
            tmp,
            MarketplaceRecord {
                name: listing.name.clone(),
                origin: Origin::of(&req.source),
                rev: req.rev.clone(),
                commit,
            },
        )?;
        Ok(listing)
    }

    /// Fetches marketplace `name` again.
    pub fn update_marketplace(&mut self, name: &str) -> Result<Listing, PluginError> {
        let old = self
            .registry
            .marketplace(name)
            .cloned()
            .ok_or_else(|| PluginError::NoSuchMarketplace(name.to_string()))?;
        let source = match &old.origin {
            Origin::Folder { path } => Source::Folder(path.clone()),
            Origin::Git { url, .. } => Source::Git(url.clone()),
            Origin::Marketplace { .. } => return Err(PluginError::NoSuchMarketplace(name.into())),
        };
        let (tmp, commit) = self.fetch_tree(&source, old.rev.as_deref(), None)?;
        let listing = Listing::read(&tmp.path().join("plugin"), &self.forge)?;
        self.put_marketplace(tmp, MarketplaceRecord { commit, ..old })?;
        Ok(listing)
    }

    /// Removes marketplace `name` (its installed plugins stay).
    pub fn remove_marketplace(&mut self, name: &str) -> Result<(), PluginError> {
        self.change(|registry| {
            if registry.marketplace(name).is_none() {
                return Err(PluginError::NoSuchMarketplace(name.to_string()));
            }
            registry.marketplaces.retain(|m| m.name != name);
            Ok(())
        })?;
        remove_all(&self.marketplace_dir(name))
    }

    fn put_marketplace(
        &mut self,
        tmp: tempfile::TempDir,
        record: MarketplaceRecord,
    ) -> Result<(), PluginError> {
        let dest = self.marketplace_dir(&record.name);
        remove_all(&dest)?;
        let parent = dest.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(PluginError::io("create", parent))?;
        std::fs::rename(tmp.path().join("plugin"), &dest)
            .map_err(PluginError::io("move into", &dest))?;
        self.change(|registry| {
            registry.marketplaces.retain(|m| m.name != record.name);
            registry.marketplaces.push(record);
            Ok(())
        })
    }

    /// Applies `edit` to the registry as it is on disk now, under the
    /// store's lock, and saves it: two runs at once (the CLI and the
    /// assistant) each keep the other's change.
    fn change<T>(
        &mut self,
        edit: impl FnOnce(&mut Registry) -> Result<T, PluginError>,
    ) -> Result<T, PluginError> {
        std::fs::create_dir_all(&self.dir).map_err(PluginError::io("create", &self.dir))?;
        let path = self.dir.join("registry.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(PluginError::io("open", &path))?;
        let started = std::time::Instant::now();
        while !north_tools::repo::try_lock_exclusive(&lock)
            .map_err(PluginError::io("lock", &path))?
        {
            if started.elapsed() > std::time::Duration::from_secs(30) {
                return Err(PluginError::Io {
                    what: "lock",
                    path,
                    source: std::io::Error::other("another North has held it for 30 s"),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        self.registry = Registry::load(&self.dir)?;
        let out = edit(&mut self.registry)?;
        self.registry.save(&self.dir)?;
        // The lock goes with the file.
        drop(lock);
        Ok(out)
    }

    /// Fetches the plugin `plugin` marketplace `marketplace` lists (at
    /// `rev` when given): its files, commit, origin and listing entry.
    fn fetch_listed(
        &self,
        plugin: &str,
        marketplace: &str,
        wanted: Option<&str>,
    ) -> Result<
        (
            tempfile::TempDir,
            Option<String>,
            Origin,
            crate::marketplace::Entry,
        ),
        PluginError,
    > {
        let record = self
            .registry
            .marketplace(marketplace)
            .ok_or_else(|| PluginError::NoSuchMarketplace(marketplace.to_string()))?;
        let listing = self.listing(marketplace)?;
        let entry = listing.get(plugin)?.clone();
        let (tmp, commit, from) = match &entry.source {
            EntrySource::Inside(rel) => {
                let root = self.marketplace_dir(marketplace);
                let (tmp, _) = self.fetch_tree(&Source::Folder(root), None, Some(rel))?;
                (
                    tmp,
                    record.commit.clone(),
                    format!("its folder {}", rel.display()),
                )
            }
            EntrySource::Git { url, rev, subdir } => {
                // A listing fetched from elsewhere may not point
                // at this machine's files (or a repository only
                // the user's keys reach through a path).
                let entry_origin = Origin::Git {
                    url: url.clone(),
                    subdir: None,
                };
                if entry_origin.is_local() && !record.origin.is_local() {
                    return Err(PluginError::Manifest {
                        path: self
                            .marketplace_dir(marketplace)
                            .join(crate::marketplace::LISTING),
                        message: format!(
                            "`{plugin}`: a marketplace fetched from {} may not point at this machine's files ({url})",
                            record.origin
                        ),
                    });
                }
                let rev = wanted.or(rev.as_deref());
                let (tmp, commit) =
                    self.fetch_tree(&Source::Git(url.clone()), rev, subdir.as_deref())?;
                let mut from = url.clone();
                if let Some(r) = rev {
                    from.push_str(&format!(" @{r}"));
                }
                if let Some(s) = subdir {
                    from.push_str(&format!(" folder {}", s.display()));
                }
                (tmp, commit, from)
            }
        };
        let origin = Origin::Marketplace {
            marketplace: marketplace.to_string(),
            from: Some(from),
        };
        Ok((tmp, commit, origin, entry))
    }

    /// Fetches a plugin and reads its manifest.
    fn fetch(&self, req: &Request) -> Result<Staged, PluginError> {
        let (tmp, commit, origin, entry, fallback) = match &req.source {
            Source::Marketplace {
                plugin,
                marketplace,
            } => {
                let (tmp, commit, origin, entry) =
                    self.fetch_listed(plugin, marketplace, req.rev.as_deref())?;
                (tmp, commit, origin, Some(entry), plugin.clone())
            }
            other => {
                let (tmp, commit) = self.fetch_tree(other, req.rev.as_deref(), None)?;
                (tmp, commit, Origin::of(other), None, fallback_name(other))
            }
        };
        let dir = tmp.path().join("plugin");
        let manifest_path = dir.join(crate::manifest::MANIFEST);
        if let Some(e) = &entry
            && !manifest_path.exists()
        {
            // A listing's entry stands in for a missing manifest (Claude
            // Code's `"strict": false`): kept as the manifest, so what was
            // reviewed and hashed is what loads.
            let parent = manifest_path.parent().unwrap_or(&dir);
            std::fs::create_dir_all(parent).map_err(PluginError::io("create", parent))?;
            let text = serde_json::to_vec_pretty(&e.raw).unwrap_or_default();
            std::fs::write(&manifest_path, text)
                .map_err(PluginError::io("write", &manifest_path))?;
        }
        let raw = entry.as_ref().map(|e| &e.raw);
        let mut manifest = Manifest::read(&dir, raw, &fallback)?;
        if let Some(e) = &entry {
            // Claude Code names a listed plugin by its entry.
            manifest.name = e.name.clone();
        }
        let hash = content_hash(&dir)?;
        Ok(Staged {
            record: InstalledPlugin {
                name: manifest.name.clone(),
                version: manifest.version.clone(),
                origin,
                rev: req.rev.clone(),
                commit,
                hash,
                enabled: true,
            },
            manifest,
            previous: None,
            tmp,
        })
    }

    /// Copies `source` (at `rev`; only `subdir` of it) to `plugin` in a
    /// new staging folder of the store; the commit when it is git's.
    fn fetch_tree(
        &self,
        source: &Source,
        rev: Option<&str>,
        subdir: Option<&Path>,
    ) -> Result<(tempfile::TempDir, Option<String>), PluginError> {
        std::fs::create_dir_all(&self.dir).map_err(PluginError::io("create", &self.dir))?;
        let tmp = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&self.dir)
            .map_err(PluginError::io("create a folder in", &self.dir))?;
        let (top, commit, _checkout) = match source {
            Source::Folder(path) => {
                if rev.is_some() {
                    return Err(PluginError::RevOnFolder(path.clone()));
                }
                if !path.is_dir() {
                    return Err(PluginError::Unreachable {
                        source_text: path.display().to_string(),
                        message: "no such folder".into(),
                    });
                }
                (path.clone(), None, None)
            }
            Source::Git(url) => {
                let checkout = clone(url, rev, tmp.path())?;
                (
                    checkout.tree.clone(),
                    Some(checkout.commit.clone()),
                    Some(checkout),
                )
            }
            Source::Marketplace { .. } => return Err(PluginError::BadSource(source.to_string())),
        };
        let from = match subdir {
            Some(rel) => {
                if north_tools::repo::linked_component(&top, rel).is_some() {
                    return Err(PluginError::LinkOut {
                        path: rel.to_path_buf(),
                        target: top.join(rel),
                    });
                }
                top.join(rel)
            }
            None => top,
        };
        if !from.is_dir() {
            return Err(PluginError::Unreachable {
                source_text: source.to_string(),
                message: format!(
                    "it has no folder {}",
                    subdir.unwrap_or(Path::new(".")).display()
                ),
            });
        }
        copy_tree(&from, &tmp.path().join("plugin"))?;
        Ok((tmp, commit))
    }
}

/// The name a plugin without a manifest name takes from its source.
fn fallback_name(source: &Source) -> String {
    let text = source.to_string();
    let last = text
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or_default();
    last.trim_end_matches(".git").to_string()
}

/// Removes staging folders a killed run left, a day old or more (a
/// younger one may be another run's, waiting for its yes).
fn clean_stale_staging(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        if stale && entry.file_name().to_string_lossy().starts_with(".staging-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes `dir` and everything in it, never following a link.
fn remove_all(dir: &Path) -> Result<(), PluginError> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(PluginError::Io {
            what: "remove",
            path: dir.to_path_buf(),
            source,
        }),
    }
}
