//! The mesh's `policy.json`: which commands `bash` may run (by first word),
//! whether writes are enabled, and how large a file `read` may return.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::command::{self, CommandDenied, SimpleCommand};

/// The mesh policy (`policy.json`).
///
/// Commands are checked with [`command::check_allowed`]: every simple
/// command of the line must have an allowed first word, and shell syntax that
/// could run anything else is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeshPolicy {
    /// Programs `bash` may run, matched exactly against each command's first word.
    pub allowed_commands: Vec<String>,
    /// Whether `write` may change files.
    pub write_enabled: bool,
    /// The largest file, in bytes, `read` may return.
    pub max_file_size: u64,
    /// How long a `bash` command may run, in seconds (default 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// Characters of `bash` output kept (default 4,000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output: Option<usize>,
    /// CPU seconds a `bash` command may use (`ulimit -t`, default 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cpu_seconds: Option<u64>,
    /// Virtual memory a `bash` command may use, in bytes (`ulimit -v`,
    /// default 2 GiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory_bytes: Option<u64>,
    /// The disk quota of a `bash` command: the largest file it may write, in
    /// bytes (`ulimit -f`, default 1 GiB); a command writing past it is
    /// stopped by the kernel ("File size limit exceeded").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_disk_bytes: Option<u64>,
}

/// Default `bash` timeout in seconds.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 20;
/// Default `bash` output limit in characters.
pub(crate) const DEFAULT_MAX_OUTPUT: usize = 4000;
/// Default CPU-time quota of a `bash` command, in seconds.
pub(crate) const DEFAULT_CPU_SECONDS: u64 = 20;
/// Default virtual-memory quota of a `bash` command, in bytes (2 GiB).
pub(crate) const DEFAULT_MEMORY_BYTES: u64 = 2 << 30;
/// Default disk quota of a `bash` command (largest file written), in bytes (1 GiB).
pub(crate) const DEFAULT_DISK_BYTES: u64 = 1 << 30;

/// The three documented policy presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyPreset {
    /// Read-only analysis: `ls cat grep find`, no writes, 100 kB files.
    Conservative,
    /// The default: `ls cat pwd echo grep`, writes, 200 kB files.
    #[default]
    Balanced,
    /// Development: adds `find head tail git`, 1 MB files.
    Permissive,
}

impl FromStr for PolicyPreset {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "conservative" => Ok(PolicyPreset::Conservative),
            "balanced" => Ok(PolicyPreset::Balanced),
            "permissive" => Ok(PolicyPreset::Permissive),
            _ => Err(PolicyError::UnknownPreset(s.to_owned())),
        }
    }
}

/// Why the mesh policy refused an operation. The messages start with the
/// spec's wording so users can look them up in the troubleshooting guide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyDenial {
    /// `bash` command refused.
    #[error("Command denied by policy: {0}")]
    Command(CommandDenied),
    /// A `bash` command names a path outside the working directory.
    #[error("Command denied by policy: {0} (the working directory)")]
    Paths(super::command::PathEscape),
    /// A deny rule of the user's covers it (Claude Code's `deny`).
    #[error("Command denied by your rule `{0}`")]
    Rule(String),
    /// `write` while `write_enabled` is false.
    #[error("Write disabled by policy")]
    WriteDisabled,
    /// `read` of a file over `max_file_size`.
    #[error("File too large: {size} bytes exceeds max_file_size of {max} bytes")]
    FileTooLarge {
        /// The file's size.
        size: u64,
        /// The configured limit.
        max: u64,
    },
}

/// A `policy.json` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file exists but could not be read.
    #[error("cannot read policy file {path}: {source}")]
    Read {
        /// The policy file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a valid policy.
    #[error("malformed policy file {path}: {source}")]
    Malformed {
        /// The policy file.
        path: PathBuf,
        /// The parse error (names the unknown or mistyped field).
        source: serde_json::Error,
    },
    /// An unknown preset name.
    #[error("unknown policy preset `{0}` (expected conservative, balanced or permissive)")]
    UnknownPreset(String),
}

impl Default for MeshPolicy {
    fn default() -> Self {
        MeshPolicy::preset(PolicyPreset::Balanced)
    }
}

impl MeshPolicy {
    /// The preset's policy, exactly as documented.
    pub fn preset(preset: PolicyPreset) -> Self {
        let (commands, write_enabled, max_file_size): (&[&str], bool, u64) = match preset {
            PolicyPreset::Conservative => (&["ls", "cat", "grep", "find"], false, 100_000),
            PolicyPreset::Balanced => (&["ls", "cat", "pwd", "echo", "grep"], true, 200_000),
            PolicyPreset::Permissive => (
                &[
                    "ls", "cat", "pwd", "echo", "grep", "find", "head", "tail", "git",
                ],
                true,
                1_000_000,
            ),
        };
        MeshPolicy {
            allowed_commands: commands.iter().map(|c| (*c).to_owned()).collect(),
            write_enabled,
            max_file_size,
            timeout_seconds: None,
            max_output: None,
            max_cpu_seconds: None,
            max_memory_bytes: None,
            max_disk_bytes: None,
        }
    }

    /// Reads `path`; a missing file is the balanced default. Fields left out
    /// of the file take the balanced values; unknown fields are an error.
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let text = match crate::settings::read_settings(path) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(MeshPolicy::default()),
            Err(source) => {
                return Err(PolicyError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| PolicyError::Malformed {
            path: path.to_owned(),
            source,
        })
    }

    /// The policy of the project at `root` (its `policy.json`, else the
    /// balanced default) as it may apply: as written in a project the user
    /// trusts, otherwise only where it narrows the default.
    pub fn load_project(root: &Path, trusted: bool) -> Result<Self, PolicyError> {
        let written = MeshPolicy::load(&root.join("policy.json"))?;
        Ok(if trusted {
            written
        } else {
            MeshPolicy::default().narrowed_by(&written)
        })
    }

    /// This policy narrowed by `other`: only what both allow. A project's
    /// `policy.json` the user has not trusted may restrict the mesh but never
    /// widen it beyond the user's own policy (workspace trust).
    pub fn narrowed_by(&self, other: &MeshPolicy) -> MeshPolicy {
        let min = |a: Option<u64>, b: Option<u64>, default: u64| {
            Some(a.unwrap_or(default).min(b.unwrap_or(default)))
        };
        MeshPolicy {
            allowed_commands: self
                .allowed_commands
                .iter()
                .filter(|c| other.allowed_commands.contains(c))
                .cloned()
                .collect(),
            write_enabled: self.write_enabled && other.write_enabled,
            max_file_size: self.max_file_size.min(other.max_file_size),
            timeout_seconds: min(
                self.timeout_seconds,
                other.timeout_seconds,
                DEFAULT_TIMEOUT_SECONDS,
            ),
            max_output: Some(self.output_chars().min(other.output_chars())),
            max_cpu_seconds: min(
                self.max_cpu_seconds,
                other.max_cpu_seconds,
                DEFAULT_CPU_SECONDS,
            ),
            max_memory_bytes: min(
                self.max_memory_bytes,
                other.max_memory_bytes,
                DEFAULT_MEMORY_BYTES,
            ),
            max_disk_bytes: min(
                self.max_disk_bytes,
                other.max_disk_bytes,
                DEFAULT_DISK_BYTES,
            ),
        }
    }

    /// What this policy allows that `base` does not (for telling the user
    /// what an untrusted `policy.json` asked for).
    pub fn widenings_over(&self, base: &MeshPolicy) -> Vec<String> {
        let mut out: Vec<String> = self
            .allowed_commands
            .iter()
            .filter(|c| !base.allowed_commands.contains(c))
            .map(|c| format!("allowed_commands += {c}"))
            .collect();
        if self.write_enabled && !base.write_enabled {
            out.push("write_enabled = true".into());
        }
        if self.max_file_size > base.max_file_size {
            out.push(format!("max_file_size = {}", self.max_file_size));
        }
        let more = |a: Option<u64>, b: Option<u64>, d: u64| a.unwrap_or(d) > b.unwrap_or(d);
        if more(
            self.timeout_seconds,
            base.timeout_seconds,
            DEFAULT_TIMEOUT_SECONDS,
        ) {
            out.push(format!("timeout_seconds = {}", self.timeout().as_secs()));
        }
        if self.output_chars() > base.output_chars() {
            out.push(format!("max_output = {}", self.output_chars()));
        }
        if more(
            self.max_cpu_seconds,
            base.max_cpu_seconds,
            DEFAULT_CPU_SECONDS,
        ) {
            out.push(format!("max_cpu_seconds = {}", self.cpu_seconds()));
        }
        if more(
            self.max_memory_bytes,
            base.max_memory_bytes,
            DEFAULT_MEMORY_BYTES,
        ) {
            out.push(format!("max_memory_bytes = {}", self.memory_bytes()));
        }
        if more(self.max_disk_bytes, base.max_disk_bytes, DEFAULT_DISK_BYTES) {
            out.push(format!("max_disk_bytes = {}", self.disk_bytes()));
        }
        out
    }

    /// The `bash` timeout (`timeout_seconds`, default 20 s).
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))
    }

    /// Characters of `bash` output kept (`max_output`, default 4,000).
    pub fn output_chars(&self) -> usize {
        self.max_output.unwrap_or(DEFAULT_MAX_OUTPUT)
    }

    /// The CPU-time quota in seconds (`max_cpu_seconds`, default 20).
    pub fn cpu_seconds(&self) -> u64 {
        self.max_cpu_seconds.unwrap_or(DEFAULT_CPU_SECONDS)
    }

    /// The virtual-memory quota in bytes (`max_memory_bytes`, default 2 GiB).
    pub fn memory_bytes(&self) -> u64 {
        self.max_memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES)
    }

    /// The disk quota in bytes: the largest file a `bash` command may write
    /// (`max_disk_bytes`, default 1 GiB).
    pub fn disk_bytes(&self) -> u64 {
        self.max_disk_bytes.unwrap_or(DEFAULT_DISK_BYTES)
    }

    /// Checks a `bash` command line: every simple command must start with an
    /// allowed program, and nothing in it may run anything else.
    pub fn check_command(&self, command: &str) -> Result<Vec<SimpleCommand>, PolicyDenial> {
        command::check_allowed(command, &self.allowed_commands).map_err(PolicyDenial::Command)
    }

    /// Checks that writes are enabled.
    pub fn check_write(&self) -> Result<(), PolicyDenial> {
        if self.write_enabled {
            Ok(())
        } else {
            Err(PolicyDenial::WriteDisabled)
        }
    }

    /// Checks a file size against `max_file_size`.
    pub fn check_file_size(&self, size: u64) -> Result<(), PolicyDenial> {
        if size > self.max_file_size {
            Err(PolicyDenial::FileTooLarge {
                size,
                max: self.max_file_size,
            })
        } else {
            Ok(())
        }
    }
}
