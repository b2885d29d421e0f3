//! A command's [`ShellResult`] from its run, with the sandbox's denial
//! judged against the policy it ran under. The type itself is
//! `north_protocol`'s, so front ends read it without this crate.

pub use north_protocol::{DENIED_NOTE, Naming, REFUSED_NOTE, ShellResult};

use super::RunResult;
use super::denial::{SandboxDenial, sandbox_denial};
use crate::os_sandbox::SandboxPolicy;

/// The result of `run`, judged against the sandbox `policy` it ran under
/// (None: it ran unconfined, nothing to judge).
pub fn result_of(run: &RunResult, policy: Option<&SandboxPolicy>) -> ShellResult {
    let denial = policy.and_then(|p| sandbox_denial(run.exit_code, &run.stderr, p));
    // What went through North's proxy while it ran.
    let hosts = match policy.map(|p| &p.network) {
        Some(crate::os_sandbox::Network::Proxied(socket)) => {
            // The run's own span: it ended before now, so this is no
            // later than its start.
            let since = std::time::Instant::now()
                .checked_sub(run.duration)
                .unwrap_or_else(std::time::Instant::now);
            north_egress::reached_since(socket, since)
                .into_iter()
                .map(|r| north_protocol::HostReached {
                    host: r.host,
                    port: r.port,
                    allowed: r.allowed,
                })
                .collect()
        }
        _ => Vec::new(),
    };
    ShellResult {
        stdout: run.stdout.clone(),
        stderr: run.stderr.clone(),
        exit_code: run.exit_code,
        duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        timed_out: run.timed_out,
        truncated: run.truncated,
        notice: run.notice.clone(),
        sandbox_denied: denial
            .as_ref()
            .filter(|d| !matches!(d, SandboxDenial::Proxy { .. }))
            .map(ToString::to_string),
        // The proxy's refusal: a grant allows the host, not a run outside.
        // Only the proxy's own record counts as evidence (a command can
        // print anything).
        network_refused: refused_hosts(&hosts).map(|refused| match denial {
            Some(d @ SandboxDenial::Proxy { .. }) => format!("{d}; refused: {refused}"),
            _ => format!(
                "North's network proxy refused {refused}: no grant covers it; a `net:<host>` grant allows a host"
            ),
        }),
        hosts,
    }
}

/// The hosts the proxy refused, `host:port` joined; `None` when none.
fn refused_hosts(hosts: &[north_protocol::HostReached]) -> Option<String> {
    let refused: Vec<String> = hosts
        .iter()
        .filter(|h| !h.allowed)
        .map(|h| format!("{}:{}", h.host, h.port))
        .collect();
    (!refused.is_empty()).then(|| refused.join(", "))
}
