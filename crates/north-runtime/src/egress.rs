//! The network proxy commands with per-domain grants reach the network
//! through: one per set of grants, started when a spawner first needs it
//! and stopped when North ends ([`stop_all`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use north_egress::{Proxy, Rules};
use north_protocol::Capability;

/// The proxies running, by the rules they judge by.
static PROXIES: Mutex<Vec<(Rules, Proxy)>> = Mutex::new(Vec::new());

/// The socket of the proxy for `rules` (started now when there is none);
/// `None` when it cannot start, and commands then have no network.
pub(crate) fn socket_for(mut rules: Rules) -> Option<PathBuf> {
    rules
        .grants
        .retain(|g| matches!(g, Capability::Net | Capability::NetHost(_)));
    rules.grants.sort_by_key(ToString::to_string);
    rules.grants.dedup();
    rules.deny.sort();
    rules.deny.dedup();
    let mut proxies = PROXIES.lock().ok()?;
    if let Some((_, proxy)) = proxies.iter().find(|(r, _)| *r == rules) {
        return Some(proxy.socket().to_path_buf());
    }
    let judged = rules.clone();
    let key = rules
        .grants
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>();
    match Proxy::start(Arc::new(move || judged.clone())) {
        Ok(proxy) => {
            let socket = proxy.socket().to_path_buf();
            tracing::info!(socket = %socket.display(), grants = ?key, "network proxy started");
            proxies.push((rules, proxy));
            Some(socket)
        }
        Err(e) => {
            tracing::warn!(error = %e, "no network proxy; commands have no network");
            None
        }
    }
}

/// Stops every proxy and removes its socket: when North ends.
pub fn stop_all() {
    if let Ok(mut proxies) = PROXIES.lock() {
        proxies.clear();
    }
}
