//! The network proxy commands with per-domain grants reach the network
//! through: one per set of grants, started when a spawner first needs it
//! and stopped when North ends ([`stop_all`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use north_egress::Proxy;
use north_protocol::Capability;

/// The proxies running, by the network grants they judge by.
static PROXIES: Mutex<Vec<(Vec<String>, Proxy)>> = Mutex::new(Vec::new());

/// The socket of the proxy for `grants` (started now when there is none);
/// `None` when it cannot start, and commands then have no network.
pub(crate) fn socket_for(grants: &[Capability]) -> Option<PathBuf> {
    let mut key: Vec<String> = grants
        .iter()
        .filter(|g| matches!(g, Capability::Net | Capability::NetHost(_)))
        .map(ToString::to_string)
        .collect();
    key.sort();
    let mut proxies = PROXIES.lock().ok()?;
    if let Some((_, proxy)) = proxies.iter().find(|(k, _)| *k == key) {
        return Some(proxy.socket().to_path_buf());
    }
    let judged: Vec<Capability> = grants.to_vec();
    match Proxy::start(Arc::new(move || judged.clone())) {
        Ok(proxy) => {
            let socket = proxy.socket().to_path_buf();
            tracing::info!(socket = %socket.display(), grants = ?key, "network proxy started");
            proxies.push((key, proxy));
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
