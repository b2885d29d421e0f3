//! North's tools and the policy that keeps them safe.
//!
//! Main types: [`Tool`] (a declarative [`ToolSpec`](north_protocol::ToolSpec)
//! plus `call`), [`ToolContext`] (the sandbox root, granted capabilities and
//! shared services a call may use), [`Registry`] (lists specs for the model,
//! dispatches calls by name), [`Sandbox`] (every path resolves inside the
//! project root) and the edit pipeline's [`edit::Proposal`] (diffs for review)
//! with [`edit::apply`] (atomic across files, crash safe). The registries
//! [`north_tools`], [`contracts_tools`] and [`mesh_tools`] are the tool sets.
//!
//! This crate must not talk to a model, render UI, or write a file outside an
//! explicit, reviewed apply step: write tools return proposals.

pub mod args;
pub mod edit;
pub mod net;
pub mod os_sandbox;
pub mod policy;
pub mod repo;
pub mod sandbox;
pub mod shell;
pub mod snapshot;
mod tool;
pub mod tools;

pub use sandbox::Sandbox;
pub use tool::{FileWriter, Registry, Tool, ToolContext, ToolSource, WriteTool};
pub use tools::{all_tools, contracts_tools, mesh_tools, north_tools};
