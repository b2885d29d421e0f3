//! Finding Node.js and the npm packages `.ci/run` installs.

#![allow(dead_code)]

use std::path::PathBuf;

/// `node` and the interop `node_modules`, or `None` after printing why the
/// test is skipped.
pub fn interop() -> Option<(PathBuf, PathBuf)> {
    let modules = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/mcp/node_modules")
        .canonicalize()
        .ok();
    let node = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("node"))
            .find(|p| p.is_file())
    });
    match (node, modules) {
        (Some(node), Some(modules)) => Some((node, modules)),
        (None, _) => {
            eprintln!(
                "SKIPPED: Node.js (`node`) is not on PATH; install Node.js 20+ to run the MCP interop tests"
            );
            None
        }
        (_, None) => {
            eprintln!(
                "SKIPPED: tests/interop/mcp/node_modules is missing; run `npm ci` in tests/interop/mcp (`.ci/run` does)"
            );
            None
        }
    }
}

/// The entry script of an npm package in `modules`.
pub fn package_entry(modules: &std::path::Path, package: &str) -> String {
    modules
        .join("@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .display()
        .to_string()
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(38111)
}
