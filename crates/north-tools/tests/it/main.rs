//! The tool contract, the command policy, the shell and the built-in tools,
//! tested through `north-tools`' public interface.
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod tools_support;

mod describe;
mod net_http_get;
mod policy_files;
mod read_documents;
mod sandbox_escape;
mod shell_pty;
mod shell_tools;
mod tools_apply;
mod tools_edit;
mod tools_read;
mod tools_search;
