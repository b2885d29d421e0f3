//! The agent's turn loop, approvals, sessions and contracts, tested
//! through `north-agent`'s public interface against scripted backends.
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod support;

mod condense;
mod contracts;
mod contracts_state;
mod disclosure;
mod escalation;
mod models;
mod regression;
mod security;
mod session;
mod spec_north;
mod wire;
