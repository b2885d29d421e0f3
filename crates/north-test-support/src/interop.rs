//! Finding Node.js and the npm packages `.ci/run` installs for the MCP
//! interop tests (`tests/interop/mcp`).

use std::path::{Path, PathBuf};

/// `node` and the MCP interop `node_modules`, or `None` after printing why
/// the calling test is skipped.
pub fn mcp() -> Option<(PathBuf, PathBuf)> {
    let dir = interop_dir();
    let modules = dir.join("node_modules").canonicalize().ok();
    let node = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("node"))
            .find(|p| p.is_file())
    });
    match (node, modules) {
        (Some(node), Some(modules)) => Some((node, modules)),
        (None, _) => {
            crate::missing(
                "Node.js (`node`) is not on PATH; install Node.js 20+ to run the MCP interop tests",
            );
            None
        }
        (_, None) => {
            crate::missing(
                "tests/interop/mcp/node_modules is missing; run `npm ci` in tests/interop/mcp (`.ci/run` does)",
            );
            None
        }
    }
}

/// `tests/interop/mcp` in this repository (its scripts live there).
pub fn interop_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/mcp");
    dir.canonicalize().unwrap_or(dir)
}

/// The entry script of `@modelcontextprotocol/<package>` in `modules`.
pub fn package_entry(modules: &Path, package: &str) -> String {
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
