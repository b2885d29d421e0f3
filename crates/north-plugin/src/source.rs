//! What `north plugin install SOURCE[@REV]` names: a git URL, `OWNER/REPO`
//! on the default forge, a local folder (a git repository in it is pinned
//! to its commit), or `NAME@MARKETPLACE`.

use std::path::{Path, PathBuf};

use crate::error::PluginError;

/// The forge `OWNER/REPO` is fetched from unless `NORTH_PLUGIN_FORGE`
/// names another (a base URL, `file:///…` for a local mirror).
pub const DEFAULT_FORGE: &str = "https://github.com";

/// Where a plugin or a marketplace comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A folder on this machine that is not a git repository (pinned by
    /// its content hash only).
    Folder(PathBuf),
    /// A git repository: a URL, or a local repository's path.
    Git(String),
    /// A plugin a marketplace lists.
    Marketplace {
        /// The plugin's name.
        plugin: String,
        /// The marketplace's name.
        marketplace: String,
    },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Folder(p) => write!(f, "{}", p.display()),
            Source::Git(url) => f.write_str(url),
            Source::Marketplace {
                plugin,
                marketplace,
            } => write!(f, "{plugin}@{marketplace}"),
        }
    }
}

/// A source and the revision asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Where from.
    pub source: Source,
    /// A branch, tag or commit (`None`: the default branch's head).
    pub rev: Option<String>,
}

impl Request {
    /// Reads `text` (`SOURCE[@REV]`), with relative folders taken from
    /// `cwd` and `OWNER/REPO` on `forge`.
    pub fn parse(text: &str, cwd: &Path, forge: &str) -> Result<Request, PluginError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(PluginError::BadSource(text.into()));
        }
        // The whole text as a folder first: a folder may hold an `@`.
        if let Some(source) = local(text, cwd).filter(exists) {
            return Ok(Request { source, rev: None });
        }
        let (base, rev) = split_rev(text);
        if is_url(base) {
            return Ok(Request {
                source: Source::Git(base.to_string()),
                rev,
            });
        }
        if let Some(source) = local(base, cwd) {
            if let (Source::Folder(p), Some(_)) = (&source, &rev) {
                return Err(PluginError::RevOnFolder(p.clone()));
            }
            return Ok(Request { source, rev });
        }
        if !base.contains('/')
            && let Some(marketplace) = rev
        {
            if !valid_name(base) || !valid_name(&marketplace) {
                return Err(PluginError::BadSource(text.into()));
            }
            return Ok(Request {
                source: Source::Marketplace {
                    plugin: base.to_string(),
                    marketplace,
                },
                rev: None,
            });
        }
        if let Some((owner, repo)) = base.split_once('/')
            && forge_part(owner)
            && forge_part(repo)
        {
            let repo = repo.strip_suffix(".git").unwrap_or(repo);
            return Ok(Request {
                source: Source::Git(format!(
                    "{}/{owner}/{repo}.git",
                    forge.trim_end_matches('/')
                )),
                rev,
            });
        }
        Err(PluginError::BadSource(text.into()))
    }
}

/// The forge `OWNER/REPO` names: `NORTH_PLUGIN_FORGE`, else the default.
pub fn forge() -> String {
    std::env::var("NORTH_PLUGIN_FORGE")
        .ok()
        .filter(|f| !f.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_FORGE.to_string())
}

/// Whether `name` can name a plugin or a marketplace: letters, digits,
/// `-`, `_` and `.` (Claude Code's are kebab-case), at most 64.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn forge_part(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with('.')
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `…@REV` when the `@` comes after the last `/` (so `git@host:o/r.git`
/// and `https://user@host/o/r` keep theirs).
fn split_rev(text: &str) -> (&str, Option<String>) {
    match (text.rfind('@'), text.rfind('/')) {
        (Some(at), slash) if at > 0 && slash.is_none_or(|s| at > s) && at + 1 < text.len() => {
            let rev = &text[at + 1..];
            if rev.contains(':') {
                (text, None)
            } else {
                (&text[..at], Some(rev.to_string()))
            }
        }
        _ => (text, None),
    }
}

fn exists(source: &Source) -> bool {
    match source {
        Source::Folder(p) => p.is_dir(),
        _ => true,
    }
}

fn is_url(text: &str) -> bool {
    text.contains("://") || (text.starts_with("git@") && text.contains(':'))
}

/// A folder `text` names (`/…`, `./…`, `../…` from `cwd`, or `~/…`): a git
/// repository's path is fetched with git, so it is pinned to a commit.
fn local(text: &str, cwd: &Path) -> Option<Source> {
    // Only a path written as one: `owner/repo` in a repository that holds
    // a folder of that name still means the forge.
    if !(text.starts_with(['/', '~'])
        || text.starts_with("./")
        || text.starts_with("../")
        || text == "."
        || text == "..")
    {
        return None;
    }
    let path = match text.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => cwd.join(text),
    };
    if !path.is_dir() {
        // A folder that does not exist: the fetch's error names it.
        return Some(Source::Folder(path));
    }
    let path = path.canonicalize().unwrap_or(path);
    if path.join(".git").exists() {
        Some(Source::Git(path.display().to_string()))
    } else {
        Some(Source::Folder(path))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Request {
        Request::parse(text, Path::new("/nonexistent-cwd"), "https://forge.test").unwrap()
    }

    #[test]
    fn each_form_of_source_reads_with_its_revision() {
        assert_eq!(
            parse("acme/tools@v1.2"),
            Request {
                source: Source::Git("https://forge.test/acme/tools.git".into()),
                rev: Some("v1.2".into())
            }
        );
        assert_eq!(
            parse("git@host.test:acme/tools.git").source,
            Source::Git("git@host.test:acme/tools.git".into())
        );
        assert_eq!(
            parse("git@host.test:acme/tools.git@abc123").rev,
            Some("abc123".into())
        );
        assert_eq!(parse("https://me@host.test/acme/tools").rev, None);
        assert_eq!(
            parse("formatter@team"),
            Request {
                source: Source::Marketplace {
                    plugin: "formatter".into(),
                    marketplace: "team".into()
                },
                rev: None
            }
        );
        assert!(matches!(parse("./missing").source, Source::Folder(_)));
        // A folder in the current directory named like a repository does
        // not shadow the forge: only a path written as one is a folder.
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join("acme/tools")).unwrap();
        let req = Request::parse("acme/tools", cwd.path(), "https://forge.test").unwrap();
        assert_eq!(
            req.source,
            Source::Git("https://forge.test/acme/tools.git".into())
        );
        let req = Request::parse("./acme/tools", cwd.path(), "https://forge.test").unwrap();
        assert!(matches!(req.source, Source::Folder(_)));
        for bad in ["", "just-a-word", "a b/c", "x@"] {
            assert!(
                Request::parse(bad, Path::new("/nonexistent-cwd"), "https://f").is_err(),
                "{bad}"
            );
        }
    }
}
