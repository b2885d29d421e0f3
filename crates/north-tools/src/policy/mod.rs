//! Command and network policy.
//!
//! - [`ProjectAllowlist`]: North's per-project allowlist of exact command
//!   strings in `.north/allowlist.json` (spec §8).
//! - [`MeshPolicy`]: the mesh's `policy.json` (first-word command allowlist,
//!   `write_enabled`, `max_file_size`) with its three presets.
//! - [`command`]: the shell-command parser that makes a first-word allowlist
//!   impossible to bypass with shell syntax, and the path check that keeps a
//!   command's arguments inside the project.
//! - [`ShellPolicy`]: the one command policy every entry point asks
//!   (allow, ask the user, or deny); [`ApprovedCommand`], the only value
//!   a shell command runs from, is made by it alone.
//! - [`NetAccess`]: the `net` / `net:<domain>` capability rules for `http.get`.

pub mod allowlist;
pub mod approved;
pub mod command;
pub mod mesh;
pub mod net;
pub mod orchestrate;
pub mod shell;

pub use allowlist::{AllowlistError, ProjectAllowlist};
pub use approved::{ApprovedBy, ApprovedCommand, Consent};
pub use command::{CommandDenied, Refusal, SimpleCommand, dangerous_substring};
pub use mesh::{MeshPolicy, PolicyDenial, PolicyError, PolicyPreset};
pub use net::{NetAccess, NetDenied, NetGrant};
pub use shell::{AllowRules, AllowedBy, AskReason, ShellPolicy, Verdict, suggested_prefix};
