//! North's tools: the tool contract, the registry and the built-in tools.
//!
//! Main types: [`Tool`] (a declarative [`ToolSpec`](north_protocol::ToolSpec)
//! plus `call`), [`ToolContext`] (the sandbox root, granted capabilities and
//! services a call may use, [`services::Shell`] and [`services::Web`]), [`Registry`] (lists specs for the model,
//! dispatches calls by name), [`Sandbox`] (every path resolves inside the
//! project root) and the edit pipeline's [`edit::Proposal`] (diffs for review)
//! with [`edit::apply`] (atomic across files, crash safe). The registries
//! [`north_tools`], [`contracts_tools`] and [`mesh_tools`] are the tool sets.
//!
//! This crate must not talk to a model, render UI, or write a file outside an
//! explicit, reviewed apply step: write tools return proposals.
//!
//! The spawner and the OS sandbox live in `north-sandbox` (re-exported here
//! as [`Spawner`], `spawn` and `os_sandbox`); whether a command or a host
//! may be used is `north-policy`'s to decide.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `args`: tool arguments
//! - `describe`: how a call and its result read to a person
//! - `media`: images for the model, scaled down to the providers' limits
//! - `owner`: marks that prove this user's North wrote a piece of state
//! - `repo`: the repo layer
//! - `sandbox`: the sandbox
//! - `edit`: the edit pipeline (spec §7) (uses `repo`, `sandbox`)
//! - `allowlist`: the project's `.north/allowlist.json` (uses `repo`)
//! - `net`: `http.get` with capability gating and a SQLite TTL cache (runtime-contracts §4) (uses `args`, `describe`; `north-policy`)
//! - `git`: North's own git, with the repository's config neutralised (uses `north-sandbox`'s spawner)
//! - `shell`: the project's persistent PTY shell (spec §3.1.6, §6.4) (uses `args`, `describe`; `north-policy`, `north-sandbox`'s spawner and git guard)
//! - `snapshot`: snapshots of a working tree, for undo (uses `edit`, `repo`)
//! - `services`: the shell and the web as traits a tool call reaches through its context (uses `net`, `shell`; `north-policy`, `north-sandbox`'s spawner)
//! - `tool`: the Tool contract, the per-call context, and the registry (uses `args`, `describe`, `edit`, `net`, `sandbox`, `services`, `shell`)
//! - `tools`: the built-in tools and the registries (profiles) that group them (uses `args`, `describe`, `edit`, `git`, `media`, `net`, `repo`, `sandbox`, `shell`, `tool`; `north-policy`)

pub mod allowlist;
pub mod args;
pub mod describe;
pub mod edit;
pub mod git;
pub mod media;
pub mod net;
pub mod owner;
pub mod repo;
pub mod sandbox;
pub mod services;
pub mod shell;
pub mod snapshot;
mod tool;
pub mod tools;

pub use north_sandbox::{Spawner, os_sandbox, spawn};
pub use sandbox::Sandbox;
pub use tool::{CallGate, FileWriter, Registry, Tool, ToolContext, ToolSource, WriteTool};
pub use tools::{all_tools, contracts_tools, mesh_tools, north_tools};
