//! The egress proxy: the one way a sandboxed command with per-domain
//! network grants reaches the network.
//!
//! A command under `north-sandbox`'s `Network::Proxied` runs in a network
//! namespace of its own whose only way out is a bridge to this proxy's
//! Unix socket (see `north-sandbox`'s `netns`). The proxy speaks HTTP
//! `CONNECT` (what `https://` goes through) and plain HTTP in absolute
//! form, and for each request decides under the same rule as North's own
//! fetchers ([`north_policy::NetAccess`]) — SOCKS5 `CONNECT` too, on the
//! same port, for tools that speak only it:
//!
//! - a host is reached only under `net:<host>`, a wildcard `net:*.<domain>`
//!   or `net`;
//! - loopback, private, link-local and metadata addresses are refused
//!   unless a grant names the host exactly — also when a name resolves to
//!   one, and an IPv6 form carrying such an address counts as one;
//! - the name is resolved once, every address checked, and the connection
//!   made to an address that was checked (no second lookup to rebind);
//! - a refusal is an HTTP answer (`403`, and `X-North-Denied` with the
//!   reason and the grant that would allow it), so the command's own tool
//!   prints why;
//! - a host no grant covers may be put to a person ([`Asker`]): once, for
//!   as long as the proxy runs, or refused (and not asked again).
//!
//! Main types: [`Proxy`] (a running proxy on its own thread; stops when
//! dropped), [`Refusal`] (why [`decide`] or [`resolve`] refused a host).
//!
//! Module map, lowest first:
//! - `head`: a request's head — the request line and headers — parsed
//! - `decide`: the rule, and the resolution of a host to checked addresses
//! - `log`: the hosts each proxy reached or refused, for the command's result
//! - `socks`: SOCKS5 `CONNECT` on the same port (uses `head`)
//! - `serve`: the proxy's connections (uses `decide`, `head`, `log`, `socks`)
//!
//! This crate must not start processes or read configuration: the grants
//! are given to it.

mod decide;
mod head;
mod log;
mod serve;
mod socks;

pub use decide::{Refusal, decide, resolve};
pub use log::{Reached, reached_since};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use north_protocol::Capability;

/// Why a proxy did not start.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    /// Its directory, socket or thread could not be made.
    #[error("cannot start North's network proxy: {0}")]
    Start(#[from] std::io::Error),
}

/// What a proxy judges by: the grants (`net`, `net:<host>`,
/// `net:*.<domain>`), and the hosts no grant opens (the user's and the
/// project's `sandbox.network.deny`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// What is granted.
    pub grants: Vec<Capability>,
    /// Hosts or `*.<domain>` patterns refused whatever grants them.
    pub deny: Vec<String>,
}

/// Where a proxy reads its rules at each connection, so a grant given
/// during a session counts from the next one.
pub type Judge = Arc<dyn Fn() -> Rules + Send + Sync>;

/// A person's answer about a host no grant covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAnswer {
    /// This connection only.
    Once,
    /// Every connection to the host while the proxy runs.
    Session,
    /// As `Session`; the asker also keeps it for the project's next
    /// sessions.
    Project,
    /// Refused, and not asked again while the proxy runs.
    Deny,
}

/// Asks a person about a host and port no grant covers; `None` when
/// nobody can answer (a headless run), and the host is refused as the
/// rules say.
pub type Asker = Arc<
    dyn Fn(
            String,
            u16,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<HostAnswer>> + Send>>
        + Send
        + Sync,
>;

/// A running proxy: its socket in a private directory, its thread. Stops
/// and removes the socket when dropped.
pub struct Proxy {
    socket: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("socket", &self.socket)
            .finish()
    }
}

impl Proxy {
    /// Starts a proxy judging by the rules `judge` gives, asking `asker`
    /// about a host they do not cover, its socket in a new private
    /// directory under the system temp dir.
    pub fn start(judge: Judge, asker: Option<Asker>) -> Result<Proxy, EgressError> {
        let dir = tempfile::Builder::new().prefix("north-egress-").tempdir()?;
        let socket = dir.path().join("proxy.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket)?;
        listener.set_nonblocking(true)?;
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("north-egress".into())
            .spawn({
                let socket = socket.clone();
                move || serve::run(listener, socket, judge, asker, stopped)
            })?;
        Ok(Proxy {
            socket,
            stop: Some(stop),
            thread: Some(thread),
            _dir: dir,
        })
    }

    /// The socket the sandbox's bridge connects to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
