//! North's end-to-end tests: the `north` binary driven through its
//! command line, a PTY, tmux and real peers (ACP, MCP, llama-server).
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod acp_client;
mod common;
mod emulator;
mod tty;

mod acp;
mod acp_interop;
mod acp_sessions;
mod agents;
mod architecture;
mod background;
mod boundaries;
mod claude_permissions;
mod commands;
mod concurrency;
mod confinement;
mod confinement_fetch;
mod crash;
mod egress;
mod exec;
mod hooks;
mod hostile_state;
mod images;
mod instructions;
mod llama;
mod lsp;
mod mcp;
mod mcp_conformance;
mod mcp_oauth;
mod mcp_serve_hooks;
mod mesh_cli;
mod mesh_contracts;
mod mesh_parity;
mod modes;
mod newcomer;
mod offered;
mod os_sandbox;
mod plugins;
mod policy_corpus;
mod presets;
mod regression;
mod resume;
mod sandbox_denial;
mod sandbox_everywhere;
mod security_root;
mod serve;
mod sessions_import;
mod snapshot_watcher;
mod spec_gaps;
mod spec_north;
mod terminal;
mod terminal_cursor;
mod terminal_input;
mod terminal_links;
mod tool_apply_crash;
mod tool_cmd;
mod trust;
mod trust_scope;
mod tui_commands;
mod tui_e2e;
mod tui_forms;
mod tui_modes;
mod tui_pace;
mod tui_undo;
mod undo;
mod web;
mod worktrees;
