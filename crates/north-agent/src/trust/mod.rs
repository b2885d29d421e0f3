//! Workspace trust: which of a project's own files may change what North
//! does without asking.
//!
//! North runs in repositories its user did not write. A project's files may
//! always *narrow* what North does (a stricter `policy.json`, `allow_shell:
//! false`), but settings that *widen* it — the security keys of
//! `.north/project.json`, the rules of `.north/allowlist.json`, a mesh
//! `policy.json` allowing more than the default, servers in `.mcp.json` —
//! apply only once the user trusts the project. The decision is kept in the
//! user's config dir (`trusted.json`), keyed by the canonical project path and
//! a fingerprint of those settings, so a `git pull` that changes them asks
//! again. Where a provider's key is sent is never a project's choice: base
//! URLs in a project file are ignored, trusted or not.
//!
//! Main types: [`TrustStore`] (the user's decisions), [`TrustReport`] (a
//! project's state and what it asks for), [`ProjectTrust`] (what an agent is
//! told), [`AllowRulesView`] (the project's allow rules, for display).

mod named;
mod scan;

use scan::{Scan, scan};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use north_tools::allowlist::{AllowlistError, ProjectAllowlist};
use serde::{Deserialize, Serialize};

/// Keys of `.north/project.json` that widen what North does unasked.
/// (`lsp`: language servers are programs the project would have North
/// start.)
pub(crate) const PROJECT_SECURITY_KEYS: &[&str] = &["allow_shell", "approve_edits", "mode", "lsp"];

/// Keys of `.north/project.json` that choose where keys are sent: never
/// taken from a project.
pub(crate) const PROJECT_ENDPOINT_KEYS: &[&str] = &["anthropic_base_url", "openai_base_url"];

/// Where a project stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// Its files ask for nothing that needs trust.
    NothingToTrust,
    /// The user trusts it as it is.
    Trusted,
    /// The user has not trusted it.
    Untrusted,
    /// The user trusted it, but its security settings changed since.
    Changed,
}

/// A project's trust state and what its files ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrustReport {
    /// The canonical project root.
    pub root: PathBuf,
    /// The state.
    pub state: TrustState,
    /// Fingerprint of the security-relevant settings.
    pub fingerprint: String,
    /// What the project's files would enable, one line each.
    pub wants: Vec<String>,
    /// Settings a project can never make (endpoints that receive keys).
    pub never: Vec<String>,
}

impl TrustReport {
    /// Whether the project's widening settings apply.
    pub fn applies(&self) -> bool {
        matches!(self.state, TrustState::Trusted | TrustState::NothingToTrust)
    }

    /// The one notice for a project whose settings are ignored, or `None`
    /// when nothing is ignored.
    pub fn notice(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.applies() && !self.wants.is_empty() {
            let why = match self.state {
                TrustState::Changed => "its security settings changed since you trusted it",
                _ => "it is not trusted",
            };
            parts.push(format!(
                "ignored this project's settings because {why}: {}. Review them, then run `north trust` (or pass --trust) to apply them",
                self.wants.join("; ")
            ));
        }
        if !self.never.is_empty() {
            parts.push(format!(
                "ignored {} in .north/project.json: endpoints that receive your API key come only from flags, the environment or your own config",
                self.never.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("\n"))
    }
}

/// Whether a project path is one whose content decides what North trusts
/// or runs (`.mcp.json`, `policy.json`, `.north/`, Claude Code's settings,
/// agents and skills): an edit to it is always shown to a person, in every
/// mode.
pub(crate) fn is_trust_file(rel: &str) -> bool {
    const FILES: &[&str] = &[
        ".mcp.json",
        "policy.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ];
    const DIRS: &[&str] = &[".north/", ".claude/agents/", ".claude/skills/", ".agents/"];
    let rel = rel.trim_start_matches("./");
    FILES.contains(&rel) || DIRS.iter().any(|d| rel.starts_with(d))
}

/// What an agent is told about the project it works in.
#[derive(Debug, Clone, Default)]
pub enum ProjectTrust {
    /// The project's own allow rules do not apply (an untrusted project, or
    /// a library user who did not opt in).
    #[default]
    Untrusted,
    /// The project's allow rules apply. `store`, when given, records the new
    /// fingerprint after North writes a rule on the user's behalf, so the
    /// user's own "Always" does not make the project ask for trust again.
    Trusted {
        /// The user's trust decisions.
        store: Option<TrustStore>,
    },
}

impl ProjectTrust {
    /// Whether the project's allow rules apply.
    pub fn applies(&self) -> bool {
        matches!(self, ProjectTrust::Trusted { .. })
    }

    /// Called after North wrote an allow rule on the user's decision: the
    /// project stays trusted only if nothing else it asks for changed.
    pub fn after_own_write(&self, root: &Path) {
        if let ProjectTrust::Trusted { store: Some(store) } = self {
            match store.trust_own_write(root) {
                Ok(true) => {}
                Ok(false) => tracing::warn!(
                    "the project's other security settings changed since it was trusted; it will be asked about again"
                ),
                Err(e) => tracing::warn!(error = %e, "cannot record trust after adding a rule"),
            }
        }
    }
}

/// A project's allow rules (`.north/allowlist.json`), as `/allowlist` shows
/// them. They apply only while the project is trusted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowRulesView {
    /// Commands that run without asking, exactly as written.
    pub commands: Vec<String>,
    /// Command families (`cargo test` covers `cargo test -p x`).
    pub prefixes: Vec<String>,
    /// External tools allowed without asking (`mcp__server[__tool]`).
    pub tools: Vec<String>,
}

impl AllowRulesView {
    /// Reads the project's allowlist under `root` (empty when it has none).
    pub fn load(root: &Path) -> Result<Self, AllowlistError> {
        let list = ProjectAllowlist::load(root)?;
        Ok(AllowRulesView {
            commands: list.commands().to_vec(),
            prefixes: list.prefixes().to_vec(),
            tools: list.tools().to_vec(),
        })
    }

    /// Whether there is no rule at all.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.prefixes.is_empty() && self.tools.is_empty()
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.commands.len() + self.prefixes.len() + self.tools.len()
    }
}

/// Why trust could not be read or recorded.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The project root does not exist.
    #[error("cannot resolve project {path}: {source}")]
    Root {
        /// The root given.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The trust file could not be read or written.
    #[error("cannot {action} {path}: {message}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The trust file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// One trusted project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedProject {
    /// Fingerprint of its security settings when the user trusted it.
    pub fingerprint: String,
    /// Fingerprint of all but the allowlist (empty in records made before
    /// it was kept).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub others: String,
    /// Unix time of the decision.
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    projects: BTreeMap<String, TrustedProject>,
}

/// The user's trust decisions, in `trusted.json` in the user's config dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// The user's store: `$XDG_CONFIG_HOME/north/trusted.json`.
    pub fn user() -> Option<Self> {
        north_config::global_config_path()
            .and_then(|p| p.parent().map(|d| d.join("trusted.json")))
            .map(TrustStore::at)
    }

    /// Where the decisions are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The project at `root`: its state and what it asks for.
    pub fn evaluate(&self, root: &Path) -> Result<TrustReport, TrustError> {
        let root = canonical(root)?;
        let scan = scan(&root);
        let recorded = self.read()?.projects.remove(&key(&root));
        let state = match recorded {
            _ if scan.wants.is_empty() => TrustState::NothingToTrust,
            Some(r) if r.fingerprint == scan.fingerprint => TrustState::Trusted,
            Some(_) => TrustState::Changed,
            None => TrustState::Untrusted,
        };
        Ok(TrustReport {
            root,
            state,
            fingerprint: scan.fingerprint,
            wants: scan.wants,
            never: scan.never,
        })
    }

    /// Whether the user trusted the project `report` describes as its
    /// files are now — also one that asks for nothing (`north trust` on
    /// it): what North would start there by itself (a language server
    /// found on `PATH`) needs the user's word, not only an empty settings
    /// scan. Uses the report's own scan.
    pub fn chosen(&self, report: &TrustReport) -> bool {
        self.read()
            .ok()
            .and_then(|mut f| f.projects.remove(&key(&report.root)))
            .is_some_and(|r| r.fingerprint == report.fingerprint)
    }

    /// Trusts the project at `root` as its files are now.
    pub fn trust(&self, root: &Path) -> Result<TrustReport, TrustError> {
        let root = canonical(root)?;
        let scan = scan(&root);
        let mut file = self.read()?;
        record(&mut file, &root, &scan);
        self.write(&file)?;
        Ok(TrustReport {
            root,
            state: if scan.wants.is_empty() {
                TrustState::NothingToTrust
            } else {
                TrustState::Trusted
            },
            fingerprint: scan.fingerprint,
            wants: scan.wants,
            never: scan.never,
        })
    }

    /// After North wrote an allow rule on the user's word ("Always"): keeps
    /// the project trusted with its new allowlist — but only if nothing
    /// else the user trusted changed meanwhile (a `.mcp.json` the model
    /// rewrote is not laundered by an unrelated "Always"). Returns whether
    /// the decision was recorded.
    pub(crate) fn trust_own_write(&self, root: &Path) -> Result<bool, TrustError> {
        let root = canonical(root)?;
        let scan = scan(&root);
        let mut file = self.read()?;
        let unchanged = match file.projects.get(&key(&root)) {
            Some(r) => !r.others.is_empty() && r.others == scan.others,
            // Nothing needed trust before: only the rule just written may.
            None => !scan.others_want,
        };
        if !unchanged {
            return Ok(false);
        }
        record(&mut file, &root, &scan);
        self.write(&file)?;
        Ok(true)
    }

    /// Forgets the decision for `root`; returns whether there was one.
    pub fn revoke(&self, root: &Path) -> Result<bool, TrustError> {
        let root = canonical(root)?;
        let mut file = self.read()?;
        let had = file.projects.remove(&key(&root)).is_some();
        if had {
            self.write(&file)?;
        }
        Ok(had)
    }

    /// Every trusted project, by path.
    pub fn list(&self) -> Result<Vec<(String, TrustedProject)>, TrustError> {
        Ok(self.read()?.projects.into_iter().collect())
    }

    fn read(&self) -> Result<TrustFile, TrustError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) if text.trim().is_empty() => Ok(TrustFile::default()),
            Ok(text) => serde_json::from_str(&text).map_err(|e| TrustError::Io {
                action: "read",
                path: self.path.clone(),
                message: format!("malformed JSON ({e}); fix or delete the file"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(e) => Err(TrustError::Io {
                action: "read",
                path: self.path.clone(),
                message: e.to_string(),
            }),
        }
    }

    fn write(&self, file: &TrustFile) -> Result<(), TrustError> {
        let io = |e: String| TrustError::Io {
            action: "write",
            path: self.path.clone(),
            message: e,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
        }
        let mut text = serde_json::to_string_pretty(file).map_err(|e| io(e.to_string()))?;
        text.push('\n');
        north_tools::repo::atomic_write(&self.path, text.as_bytes()).map_err(|e| io(e.to_string()))
    }
}

fn canonical(root: &Path) -> Result<PathBuf, TrustError> {
    root.canonicalize().map_err(|source| TrustError::Root {
        path: root.to_path_buf(),
        source,
    })
}

fn key(root: &Path) -> String {
    root.display().to_string()
}

/// Records the decision to trust `root` as `scan` saw it.
fn record(file: &mut TrustFile, root: &Path, scan: &Scan) {
    file.projects.insert(
        key(root),
        TrustedProject {
            fingerprint: scan.fingerprint.clone(),
            others: scan.others.clone(),
            trusted_at: crate::store::now_ts() as u64,
        },
    );
}

#[cfg(test)]
mod tests;
