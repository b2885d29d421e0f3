//! The mesh: contracts, policy and end-to-end runs on scripted backends.
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod mesh_common;

mod mesh_anthropic;
mod mesh_contracts;
mod mesh_e2e;
mod mesh_policy;
