//! The network proxy commands with per-domain grants reach the network
//! through: one per set of grants, started when a spawner first needs it
//! and stopped when North ends ([`stop_all`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use north_agent::{ApprovalRequest, Approver};
use north_egress::{HostAnswer, Proxy, Rules};
use north_protocol::{ApprovalDecision, Capability};

/// The proxies running, by the rules they judge by and their project.
static PROXIES: Mutex<Vec<((Rules, PathBuf), Proxy)>> = Mutex::new(Vec::new());

/// The socket of the proxy for `rules` in the project at `root` (started
/// now when there is none); `None` when it cannot start, and commands then
/// have no network.
pub(crate) fn socket_for(mut rules: Rules, root: &std::path::Path) -> Option<PathBuf> {
    rules
        .grants
        .retain(|g| matches!(g, Capability::Net | Capability::NetHost(_)));
    rules.grants.sort_by_key(ToString::to_string);
    rules.grants.dedup();
    rules.deny.sort();
    rules.deny.dedup();
    let mut proxies = PROXIES.lock().ok()?;
    let key = (rules, root.to_path_buf());
    if let Some((_, proxy)) = proxies.iter().find(|(k, _)| *k == key) {
        return Some(proxy.socket().to_path_buf());
    }
    let (judged, project) = key.clone();
    let names = judged
        .grants
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>();
    // What the user allowed "always for this project" counts from the
    // next connection, without a new proxy.
    let judge = Arc::new(move || {
        let mut rules = judged.clone();
        rules.grants.extend(
            crate::hosts::allowed(&project)
                .into_iter()
                .map(Capability::NetHost),
        );
        rules
    });
    match Proxy::start(judge, Some(asker(root))) {
        Ok(proxy) => {
            let socket = proxy.socket().to_path_buf();
            tracing::info!(socket = %socket.display(), grants = ?names, "network proxy started");
            proxies.push((key, proxy));
            Some(socket)
        }
        Err(e) => {
            tracing::warn!(error = %e, "no network proxy; commands have no network");
            None
        }
    }
}

/// Who answers for a person when a command connects to a host no grant
/// covers (the interactive assistant's approver); unset, nobody is asked.
static PERSON: OnceLock<Arc<dyn Approver>> = OnceLock::new();

/// Puts hosts no grant covers to `approver` (a front end a person answers
/// at), for every proxy of this process. Once; later calls are ignored.
pub fn ask_with(approver: Arc<dyn Approver>) {
    if approver.is_interactive() {
        let _ = PERSON.set(approver);
    }
}

/// The proxy's question, put to the approver when there is one; "always"
/// is kept for the project at `root`.
fn asker(root: &std::path::Path) -> north_egress::Asker {
    let root = root.to_path_buf();
    Arc::new(move |host: String, port: u16| {
        let root = root.clone();
        Box::pin(async move {
            let approver = PERSON.get()?.clone();
            let decision = approver
                .decide(
                    &format!("net:{host}"),
                    ApprovalRequest::Host { host: &host, port },
                )
                .await;
            Some(match decision {
                ApprovalDecision::RunOnce | ApprovalDecision::Accept => HostAnswer::Once,
                ApprovalDecision::Grant => HostAnswer::Session,
                ApprovalDecision::Always => {
                    crate::hosts::remember(&root, &host);
                    HostAnswer::Project
                }
                _ => HostAnswer::Deny,
            })
        })
    })
}

/// The hosts the user allowed "always" for the project at `root`.
pub fn remembered_hosts(root: &std::path::Path) -> Vec<String> {
    crate::hosts::allowed(root)
}

/// Stops every proxy and removes its socket: when North ends.
pub fn stop_all() {
    if let Ok(mut proxies) = PROXIES.lock() {
        proxies.clear();
    }
}
