//! North's tools and the policy that keeps them safe.
//!
//! Main types: [`Tool`] (a declarative [`ToolSpec`](north_protocol::ToolSpec)
//! plus `call`), [`ToolContext`] (the sandbox root, granted capabilities and
//! shared services a call may use) and [`Registry`] (lists specs for the model,
//! dispatches calls by name).
//!
//! This crate must not talk to a model, render UI, or write a file outside an
//! explicit, reviewed apply step: write tools return proposals.

pub mod net;
pub mod policy;
pub mod shell;
mod tool;

pub use tool::{Registry, Tool, ToolContext};
