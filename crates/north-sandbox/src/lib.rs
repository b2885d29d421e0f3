//! The one way North starts a child process, and the confinement it runs
//! in.
//!
//! Main types: [`Spawner`] (every child — shell, background job, hook, MCP
//! server, North's own git, desktop helpers — is built here: key-free
//! environment, a session of its own, a parent-death signal, and the
//! sandbox launcher when confined), [`os_sandbox::SandboxPolicy`] (the
//! typed policy every confined child runs under, derived per
//! [`os_sandbox::ChildKind`] from [`os_sandbox::SandboxSettings`] and
//! turned into launcher flags in one place) and [`os_sandbox::enter`] /
//! [`os_sandbox::supervise`] (what `north sandbox` does: Landlock, seccomp,
//! namespaces, the home allow-list, and the supervisor that keeps planted
//! git configuration away from the user's git).
//!
//! This crate must not depend on North's agent, tools or network crates,
//! talk to a model, or decide whether a command may run (that is the
//! command policy's job): it only starts and confines.
//!
//! Module map, lowest first:
//! - `os_sandbox`: the policy type and the OS sandbox a child runs in
//! - `spawn`: the spawner (uses `os_sandbox`)

pub mod os_sandbox;
pub mod spawn;

pub use spawn::Spawner;

/// The project's state directory (`.north`): where set-aside git entries
/// go, and what the sandbox holds read-only.
pub const STATE_DIR: &str = ".north";
