//! Why a plugin could not be fetched, read, installed or loaded: each
//! error says what failed and what to do.

use std::path::PathBuf;

/// A plugin operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The folder has no `.claude-plugin/plugin.json`.
    #[error(
        "no plugin manifest at {0}: a Claude Code plugin has `.claude-plugin/plugin.json` with at least a \"name\""
    )]
    NoManifest(PathBuf),
    /// The manifest (or a file it names) is not what Claude Code writes.
    #[error("{path}: {message}")]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong, and what to write instead.
        message: String,
    },
    /// The folder has no `.claude-plugin/marketplace.json`.
    #[error(
        "no marketplace manifest at {0}: a marketplace has `.claude-plugin/marketplace.json` listing its plugins"
    )]
    NoMarketplace(PathBuf),
    /// SOURCE is none of the forms North takes.
    #[error(
        "cannot tell what `{0}` is: give a git URL, OWNER/REPO, a local folder, or NAME@MARKETPLACE (after `north plugin marketplace add`)"
    )]
    BadSource(String),
    /// git could not reach the source.
    #[error("cannot fetch {source_text}: {message}")]
    Unreachable {
        /// The source as given.
        source_text: String,
        /// What git said.
        message: String,
    },
    /// The revision is not in the source.
    #[error(
        "revision `{rev}` does not exist in {source_text} (give a branch, a tag or a commit it has)"
    )]
    NoRevision {
        /// The revision asked for.
        rev: String,
        /// The source.
        source_text: String,
    },
    /// `@REV` on a folder that is not a git repository.
    #[error("{0} is a folder, not a git repository: it has no revisions (drop `@REV`)")]
    RevOnFolder(PathBuf),
    /// A link that leads out of the plugin's folder.
    #[error(
        "{path} is a link to {target}, outside the plugin's folder: North installs no plugin whose files lead out of it"
    )]
    LinkOut {
        /// The link, inside the plugin.
        path: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// A device, fifo or socket in the plugin.
    #[error("{0} is not a regular file, folder or link: North does not install it")]
    Special(PathBuf),
    /// More files or bytes than a plugin has any need of.
    #[error(
        "the plugin at {path} is too large ({what}); North installs plugins of at most {limit}"
    )]
    TooLarge {
        /// The folder.
        path: PathBuf,
        /// What was counted.
        what: String,
        /// The limit.
        limit: String,
    },
    /// A plugin of that name is already installed.
    #[error(
        "plugin `{name}` is already installed (from {from}): `north plugin update {name}` fetches it again, or `north plugin remove {name}` first"
    )]
    Installed {
        /// Its name.
        name: String,
        /// Where the installed one came from.
        from: String,
    },
    /// No plugin of that name is installed.
    #[error("no plugin `{0}` is installed (`north plugin list` shows them)")]
    NotInstalled(String),
    /// No marketplace of that name was added.
    #[error(
        "no marketplace `{0}` was added (`north plugin marketplace list` shows them; `north plugin marketplace add SOURCE` adds one)"
    )]
    NoSuchMarketplace(String),
    /// The marketplace does not list the plugin.
    #[error("marketplace `{marketplace}` lists no plugin `{plugin}`; it lists: {listed}")]
    NotInMarketplace {
        /// The plugin asked for.
        plugin: String,
        /// The marketplace.
        marketplace: String,
        /// What it lists.
        listed: String,
    },
    /// A marketplace of that name was added already.
    #[error(
        "marketplace `{name}` is already added (from {from}): `north plugin marketplace update {name}` fetches it again"
    )]
    MarketplaceExists {
        /// Its name.
        name: String,
        /// Where it came from.
        from: String,
    },
    /// The installed files are not what was reviewed.
    #[error(
        "plugin `{0}` changed on disk since it was reviewed, so it is not loaded: `north plugin update {0}` shows and re-installs it"
    )]
    Tampered(String),
    /// git could not be started or ran past its time.
    #[error("cannot run git: {0}")]
    Git(String),
    /// No data directory for the plugin store.
    #[error("no data directory for installed plugins (set HOME or XDG_DATA_HOME)")]
    NoDataDir,
    /// A file could not be read or written.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// What North was doing.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl PluginError {
    /// An I/O error while doing `what` to `path`.
    pub(crate) fn io(
        what: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> PluginError {
        let path = path.to_path_buf();
        move |source| PluginError::Io { what, path, source }
    }
}
