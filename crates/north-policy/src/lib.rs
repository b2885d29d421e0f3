//! North's command and network policy: whether a shell line, a tool call or
//! a host may be used, decided from the text and the project's paths alone.
//!
//! Main types: [`ShellPolicy`] (the one command policy every entry point
//! asks: allow, ask the user, or deny) and [`ApprovedCommand`], the only
//! value a shell command runs from, made by it alone; [`MeshPolicy`] (the
//! mesh's `policy.json` with its three presets); [`NetAccess`] (the `net` /
//! `net:<domain>` capability rules); [`orchestrate`] (approval → sandbox →
//! escalation as pure functions of a call's facts).
//!
//! This crate must not start processes, talk to the network, open a
//! database or depend on any crate that does: it is fuzzed on its own
//! (`fuzz/`), and what it decides is enforced by the kernel sandbox, not by
//! it. The only file system access is reading: where a path really goes
//! ([`paths`]), and settings files a repository may have planted
//! ([`read_settings`]: bounded, regular files only) such as the mesh's
//! `policy.json`.
//!
//! Module map, lowest first:
//! - `settings`: reading a settings file a repository may have planted
//!   (uses nothing above)
//! - `paths`: where a path lands once its symlinks are followed
//! - `command`: the shell-line parser, the per-program argument rules, the
//!   read-only command set and the path check (uses `paths`)
//! - `mesh`: the mesh's program allowlist and presets (uses `command`,
//!   `settings`)
//! - `shell`: [`ShellPolicy`], [`AllowRules`], [`LimitRules`], [`Verdict`] (uses `command`,
//!   `mesh`)
//! - `approved`: [`ApprovedCommand`] and [`Consent`] (uses `shell`)
//! - `orchestrate`: approval → sandbox → escalation (uses `approved`, `shell`)
//! - `net`: host rules for `net` capabilities (uses nothing above)
//! - `paths_rules`: the user's path rules for reads and edits (uses nothing above)

pub mod approved;
pub mod command;
pub mod mesh;
pub mod net;
pub mod orchestrate;
pub mod paths;
pub mod paths_rules;
pub mod settings;
pub mod shell;

pub use approved::{ApprovedBy, ApprovedCommand, Consent};
pub use command::{CommandDenied, Refusal, SimpleCommand, dangerous_substring};
pub use mesh::{MeshPolicy, PolicyDenial, PolicyError, PolicyPreset};
pub use net::{NetAccess, NetDenied, NetGrant};
pub use paths_rules::PathRules;
pub use settings::{SETTINGS_MAX, read_settings};
pub use shell::{
    AllowRules, AllowedBy, AskReason, LimitRules, ShellPolicy, Verdict, suggested_prefix,
};
