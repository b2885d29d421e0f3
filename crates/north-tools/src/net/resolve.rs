//! One resolution per hop: the address North checked is the address it
//! connects to.
//!
//! Before each request (the first URL and every redirect) the fetcher
//! resolves the host itself, refuses it when any answer is loopback,
//! private or a metadata address and no grant names the host, and pins
//! the answers it checked. The HTTP client resolves names only through
//! [`Pins`], which hands back those pinned answers, so a second lookup at
//! connect time (DNS rebinding) never happens. Names that were not pinned
//! — a proxy the user configured — resolve normally.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use north_policy::net::is_private_ip;

/// Most hosts kept pinned; past this the map starts over.
const MAX_PINS: usize = 256;

/// The checked answers per host name, shared with the HTTP client.
#[derive(Debug, Default, Clone)]
pub(crate) struct Pins {
    map: Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>,
}

/// Why a host cannot be fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PinError {
    /// Some answer is not a public address.
    Private,
    /// The name does not resolve.
    Lookup(String),
}

impl Pins {
    /// Resolves `host`, refuses it when an answer is not public unless
    /// `private_allowed`, and pins the answers for the connection. IP
    /// literals are not resolved (the caller judged them already).
    pub(crate) async fn check(
        &self,
        host: &str,
        port: u16,
        private_allowed: bool,
    ) -> Result<(), PinError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if bare.parse::<std::net::IpAddr>().is_ok() {
            return Ok(());
        }
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| PinError::Lookup(e.to_string()))?
            .collect();
        if addrs.is_empty() {
            return Err(PinError::Lookup("no address".to_owned()));
        }
        if !private_allowed && addrs.iter().any(|a| is_private_ip(a.ip())) {
            return Err(PinError::Private);
        }
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_PINS {
            map.clear();
        }
        map.insert(bare.to_ascii_lowercase(), addrs);
        Ok(())
    }
}

impl Resolve for Pins {
    fn resolve(&self, name: Name) -> Resolving {
        let pinned = self
            .map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&name.as_str().to_ascii_lowercase())
            .cloned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = match pinned {
                Some(addrs) => addrs,
                None => tokio::net::lookup_host((name.as_str(), 0))
                    .await
                    .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?
                    .collect(),
            };
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_unless_allowed() {
        let pins = Pins::default();
        assert_eq!(
            pins.check("localhost", 80, false).await,
            Err(PinError::Private)
        );
        pins.check("localhost", 80, true).await.unwrap();
        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<SocketAddr> = pins.resolve(name).await.unwrap().collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
