//! The TUI's state and views: keys, approvals, timeline and snapshots of
//! what a user sees, without a terminal.
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod ui;

mod approvals;
mod complete;
mod forms;
mod keys;
mod markdown;
mod modes;
mod snapshots;
mod timeline;
