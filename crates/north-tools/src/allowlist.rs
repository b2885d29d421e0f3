//! North's per-project shell allowlist: `.north/allowlist.json`, exact
//! command strings the user chose to "Always execute" (spec §8), and command
//! prefixes (`"cargo test"` covers `cargo test -p x`, never `cargo test; rm x`).
//!
//! The file lives in the repository, so its rules apply only in a project the
//! user trusts; [`ProjectAllowlist::rules`] hands them to the command policy
//! ([`north_policy::ShellPolicy`]), which matches them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The project's allowlist of exact command strings.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectAllowlist {
    path: PathBuf,
    file: AllowlistFile,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
struct AllowlistFile {
    #[serde(rename = "allowedCommands", default)]
    allowed_commands: Vec<String>,
    #[serde(
        rename = "allowedPrefixes",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    allowed_prefixes: Vec<String>,
    /// External (MCP) tools that run without asking: `mcp__<server>` for
    /// all of a server's tools, `mcp__<server>__<tool>` for one.
    #[serde(
        rename = "allowedTools",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    allowed_tools: Vec<String>,
    /// Keys other tools or future versions put in the file survive a rewrite.
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// Which list a rule goes to.
#[derive(Debug, Clone, Copy)]
enum Rule {
    Exact,
    Prefix,
    Tool,
}

/// An allowlist that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AllowlistError {
    /// The file exists but could not be read.
    #[error("cannot read allowlist {path}: {source}")]
    Read {
        /// The allowlist file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not `{"allowedCommands": [strings]}`.
    #[error("malformed allowlist {path}: {source}")]
    Malformed {
        /// The allowlist file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The file could not be written.
    #[error("cannot write allowlist {path}: {source}")]
    Write {
        /// The allowlist file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An empty command cannot be allowed.
    #[error("cannot allow an empty command")]
    EmptyCommand,
}

impl ProjectAllowlist {
    /// Where the allowlist lives, relative to the project root.
    pub const RELATIVE_PATH: &'static str = ".north/allowlist.json";

    /// Loads `<root>/.north/allowlist.json`; a missing file is an empty list.
    pub fn load(root: &Path) -> Result<Self, AllowlistError> {
        Self::load_from(root.join(Self::RELATIVE_PATH))
    }

    /// Loads the allowlist at `path`; a missing file is an empty list.
    pub fn load_from(path: PathBuf) -> Result<Self, AllowlistError> {
        let file = read_file(&path)?;
        Ok(ProjectAllowlist { path, file })
    }

    /// The allowlist file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The allow rules of this list, for the command policy.
    pub fn rules(&self) -> north_policy::AllowRules {
        north_policy::AllowRules {
            exact: self.commands().to_vec(),
            prefixes: self.prefixes().to_vec(),
        }
    }

    /// The allowed commands, in the order they were added.
    pub fn commands(&self) -> &[String] {
        &self.file.allowed_commands
    }

    /// The allowed command prefixes, in the order they were added.
    pub fn prefixes(&self) -> &[String] {
        &self.file.allowed_prefixes
    }

    /// The external-tool rules (`mcp__<server>` or `mcp__<server>__<tool>`).
    pub fn tools(&self) -> &[String] {
        &self.file.allowed_tools
    }

    /// Whether a rule lets the external tool `name` run without asking: the
    /// exact name, or a rule `r` with `name` = `r__<rest>` (a whole server).
    pub fn allows_tool(&self, name: &str) -> bool {
        self.file.allowed_tools.iter().any(|rule| {
            let rule = rule.trim();
            !rule.is_empty()
                && (name == rule
                    || name
                        .strip_prefix(rule)
                        .is_some_and(|rest| rest.starts_with("__")))
        })
    }

    /// Whether `command` is one of the exact rules, ignoring surrounding
    /// whitespace on both sides (a trailing space must not defeat a rule).
    pub fn contains(&self, command: &str) -> bool {
        let command = command.trim();
        self.file
            .allowed_commands
            .iter()
            .any(|c| c.trim() == command)
    }

    /// Adds the exact rule `command` and persists the list atomically (temp
    /// file, fsync, rename). Entries added to the file by someone else since
    /// it was loaded are kept. Returns false when it was already allowed.
    pub fn add(&mut self, command: &str) -> Result<bool, AllowlistError> {
        self.add_rule(command, Rule::Exact)
    }

    /// Adds the prefix rule `prefix` (whole words: `cargo test` covers
    /// `cargo test -p x` but not `cargo testx`), persisted like [`Self::add`].
    pub fn add_prefix(&mut self, prefix: &str) -> Result<bool, AllowlistError> {
        self.add_rule(prefix, Rule::Prefix)
    }

    /// Allows the external (MCP) tool `name` (`mcp__server__tool`, or
    /// `mcp__server` for all of a server's tools), persisted like
    /// [`Self::add`].
    pub fn add_tool(&mut self, name: &str) -> Result<bool, AllowlistError> {
        self.add_rule(name, Rule::Tool)
    }

    fn add_rule(&mut self, rule: &str, kind: Rule) -> Result<bool, AllowlistError> {
        let rule = rule.trim();
        if rule.is_empty() {
            return Err(AllowlistError::EmptyCommand);
        }
        self.file = read_file(&self.path)?;
        let list = match kind {
            Rule::Prefix => &mut self.file.allowed_prefixes,
            Rule::Exact => &mut self.file.allowed_commands,
            Rule::Tool => &mut self.file.allowed_tools,
        };
        if list.iter().any(|c| c.trim() == rule) {
            return Ok(false);
        }
        list.push(rule.to_owned());
        let mut text = serde_json::to_string_pretty(&self.file).map_err(|source| {
            AllowlistError::Malformed {
                path: self.path.clone(),
                source,
            }
        })?;
        text.push('\n');
        let write_error = |source| AllowlistError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(write_error)?;
        }
        crate::repo::atomic_write(&self.path, text.as_bytes())
            .map_err(|e| write_error(std::io::Error::other(e.to_string())))?;
        Ok(true)
    }
}

fn read_file(path: &Path) -> Result<AllowlistFile, AllowlistError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|source| AllowlistError::Malformed {
            path: path.to_owned(),
            source,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(AllowlistFile::default()),
        Err(source) => Err(AllowlistError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}
