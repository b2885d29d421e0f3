//! Providers on the wire: each backend against a fake server that speaks
//! its exact protocol, and the faults a real server shows.
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod support;

mod decode;
mod discovery;
mod provider_faults;
mod providers;
mod regression;
mod responses;
mod scripted;
mod thinking;
