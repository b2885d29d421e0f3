//! The command policy, tested through `north-policy`'s public interface:
//! the shared corpus of command lines, 200-odd bypass attempts, a property
//! test that mixes work and escapes, and the orchestrator's decision table.
//!
//! One test binary for the crate (modules, not files, are the unit).

mod orchestrate_table;
mod policy_bypass;
mod policy_corpus;
mod policy_property;
