//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! installed with Node 22 by `.ci/run` in `tests/interop/mcp-conformance`)
//! runs its client scenarios — initialization, tool calls, SSE resumption,
//! elicitation defaults and every OAuth flow of the 2025-06-18 and
//! 2025-11-25 specs, with the 2025-03-26 fallbacks — against the real
//! `north` binary (`client.sh`: `north mcp call` with a throwaway home and a
//! "browser" that follows the authorization redirects). Skips, saying why,
//! only where the packages are missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/mcp-conformance")
}

/// Runs suite `name`; its summary lines (one per scenario) and its exit.
fn run_suite(name: &str) -> Option<(String, bool)> {
    let dir = dir();
    let node = dir.join("node_modules/.bin/node");
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if !node.exists() || !suite.exists() {
        north_test_support::missing(
            "run `npm ci` in tests/interop/mcp-conformance first (.ci/run does) to install the suite and Node 22",
        );
        return None;
    }
    let client = dir.join("client.sh");
    let out = Command::new(&node)
        .arg(&suite)
        .args(["client", "--suite", name, "--timeout", "60000", "--command"])
        .arg(format!("exec {}", client.display()))
        .env("NORTH_BIN", env!("CARGO_BIN_EXE_north"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    Some((stdout, out.status.success()))
}

fn passed(summary: &str) -> Vec<&str> {
    summary
        .lines()
        .filter_map(|l| l.strip_prefix("✓ "))
        .filter_map(|l| l.split(':').next())
        .collect()
}

#[test]
fn every_core_client_scenario_passes() {
    let Some((summary, ok)) = run_suite("core") else {
        return;
    };
    assert!(ok, "{summary}");
    let passed = passed(&summary);
    for scenario in [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
    ] {
        assert!(
            passed.contains(&scenario),
            "{scenario} did not pass:\n{summary}"
        );
    }
    assert!(summary.contains(" 0 failed, 0 warnings"), "{summary}");
}

#[test]
fn the_2025_03_26_fallbacks_pass() {
    let Some((summary, ok)) = run_suite("backcompat") else {
        return;
    };
    assert!(ok, "{summary}");
    let passed = passed(&summary);
    assert!(
        passed.contains(&"auth/2025-03-26-oauth-metadata-backcompat"),
        "{summary}"
    );
    assert!(
        passed.contains(&"auth/2025-03-26-oauth-endpoint-fallback"),
        "{summary}"
    );
}
