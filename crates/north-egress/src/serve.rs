//! The proxy's connections: each one's head read, judged, and either
//! refused with an answer that says why or carried to the host.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::decide::{Refusal, decide, resolve};
use crate::head::{self, HeadError, Target};
use crate::{Asker, HostAnswer, Judge, Rules};
use north_policy::NetGrant;

/// How long a client may take to send its request's head.
const HEAD_WAIT: Duration = Duration::from_secs(30);
/// How long a question waits for its answer.
const ANSWER_WAIT: Duration = Duration::from_secs(300);
/// How many connections one proxy carries at once.
const MAX_CONNECTIONS: usize = 256;
/// How many hosts a person may refuse before the proxy stops asking.
const QUESTIONS_AFTER_REFUSALS: usize = 5;
/// How long connecting to a host may take.
const CONNECT_WAIT: Duration = Duration::from_secs(30);

/// What the proxy's connections share: the rules, who to ask, and what
/// was answered.
struct Shared {
    /// The proxy's socket: the key of its connection log.
    socket: std::path::PathBuf,
    judge: Judge,
    asker: Option<Asker>,
    /// Hosts a person allowed or refused while the proxy runs.
    answered: std::sync::Mutex<Answered>,
    /// One question at a time: a second connection to the same new host
    /// waits for the first's answer instead of asking again.
    asking: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Answered {
    allowed: Vec<String>,
    refused: Vec<String>,
}

impl Shared {
    /// The hosts a person allowed while the proxy runs.
    fn allowed(&self) -> Vec<String> {
        self.answered
            .lock()
            .map(|a| a.allowed.clone())
            .unwrap_or_default()
    }

    fn refused(&self, host: &str) -> bool {
        self.answered
            .lock()
            .is_ok_and(|a| a.refused.iter().any(|h| h == host))
    }
}

/// Serves `listener` until `stop` fires (or its sender is dropped).
pub(crate) fn run(
    listener: std::os::unix::net::UnixListener,
    socket: std::path::PathBuf,
    judge: Judge,
    asker: Option<Asker>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let shared = std::sync::Arc::new(Shared {
        socket,
        judge,
        asker,
        answered: std::sync::Mutex::new(Answered::default()),
        asking: tokio::sync::Mutex::new(()),
    });
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        tracing::error!("the network proxy's runtime did not start");
        return;
    };
    runtime.block_on(async move {
        let Ok(listener) = UnixListener::from_std(listener) else {
            tracing::error!("the network proxy's socket could not be served");
            return;
        };
        let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        loop {
            tokio::select! {
                _ = &mut stop => break,
                accepted = listener.accept() => {
                    let Ok((conn, _)) = accepted else {
                        // Out of descriptors, say: not a busy loop.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    // Past the ceiling, a connection waits for one to end.
                    let Ok(permit) = slots.clone().acquire_owned().await else { break };
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        connection(conn, &shared).await;
                        drop(permit);
                    });
                }
            }
        }
    });
}

async fn connection(mut conn: UnixStream, shared: &Shared) {
    let mut first = [0u8; 1];
    match tokio::time::timeout(HEAD_WAIT, conn.read_exact(&mut first)).await {
        Ok(Ok(_)) if first[0] == crate::socks::VERSION => return socks(conn, shared).await,
        Ok(Ok(_)) => {}
        _ => return,
    }
    let read = read_head(&mut conn, first.to_vec());
    let (bytes, end) = match tokio::time::timeout(HEAD_WAIT, read).await {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => {
            let _ = answer(&mut conn, 400, "Bad Request", &e.to_string()).await;
            return;
        }
        Err(_) => return,
    };
    let target = match head::parse(&bytes[..end]).and_then(|h| Ok((head::target(&h)?, h))) {
        Ok(t) => t,
        Err(e) => {
            let _ = answer(&mut conn, 400, "Bad Request", &e.to_string()).await;
            return;
        }
    };
    let (target, request) = target;
    let upstream = match reach_or_ask(shared, &target).await {
        Ok(upstream) => upstream,
        Err(refusal) => {
            tracing::info!(host = %refusal.host, reason = %refusal.reason, "proxy refused a connection");
            crate::log::record(&shared.socket, &refusal.host, target.port(), false);
            let _ = answer(&mut conn, 403, "Forbidden", &refusal.reason).await;
            return;
        }
    };
    crate::log::record(
        &shared.socket,
        &north_policy::net::normalize_host(target.host()),
        target.port(),
        true,
    );
    tracing::info!(
        host = target.host(),
        port = target.port(),
        "proxy connected"
    );
    let mut upstream = upstream;
    let rest = &bytes[end..];
    let sent = match &target {
        Target::Tunnel { .. } => conn
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .and(upstream.write_all(rest).await),
        Target::Http { host, port, path } => {
            let authority = match (host.contains(':'), *port) {
                (true, 80) => format!("[{host}]"),
                (true, p) => format!("[{host}]:{p}"),
                (false, 80) => host.clone(),
                (false, p) => format!("{host}:{p}"),
            };
            let mut out = head::forwarded(&request, path, &authority);
            out.extend_from_slice(rest);
            upstream.write_all(&out).await
        }
    };
    if sent.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
    }
}

/// A SOCKS5 connection: the request read, judged as a tunnel is, and
/// carried.
async fn socks(mut conn: UnixStream, shared: &Shared) {
    let target = match tokio::time::timeout(HEAD_WAIT, crate::socks::request(&mut conn)).await {
        Ok(Ok(target)) => target,
        Ok(Err(crate::socks::SocksError::Unsupported(code))) => {
            let _ = crate::socks::reply(&mut conn, code).await;
            return;
        }
        Ok(Err(crate::socks::SocksError::Io)) | Err(_) => return,
    };
    let host = north_policy::net::normalize_host(target.host());
    match reach_or_ask(shared, &target).await {
        Ok(mut upstream) => {
            crate::log::record(&shared.socket, &host, target.port(), true);
            if crate::socks::reply(&mut conn, 0).await.is_ok() {
                let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
            }
        }
        Err(refusal) => {
            tracing::info!(host = %refusal.host, reason = %refusal.reason, "proxy refused a SOCKS connection");
            crate::log::record(&shared.socket, &host, target.port(), false);
            let _ = crate::socks::reply(&mut conn, 2).await;
        }
    }
}

/// Reads until the head is complete (`bytes` already read): the bytes
/// read, and where the head ends in them.
async fn read_head(
    conn: &mut UnixStream,
    mut bytes: Vec<u8>,
) -> Result<(Vec<u8>, usize), HeadError> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = head::end(&bytes) {
            return Ok((bytes, end));
        }
        if bytes.len() > head::MAX_HEAD {
            return Err(HeadError::Malformed);
        }
        match conn.read(&mut buf).await {
            Ok(0) | Err(_) => return Err(HeadError::Malformed),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
}

/// Reaches the target under the rules; a host they do not cover is put
/// to a person, when one can answer.
async fn reach_or_ask(shared: &Shared, target: &Target) -> Result<TcpStream, Refusal> {
    let host = north_policy::net::normalize_host(target.host());
    let refused_by_person = || Refusal {
        host: host.clone(),
        reason: format!(
            "North's sandbox proxy refused it: {host} was denied at North's prompt for this session"
        ),
        askable: false,
    };
    if shared.refused(&host) {
        return Err(refused_by_person());
    }
    let rules = (shared.judge)();
    let refusal = match reach(&rules, &shared.allowed(), target).await {
        Err(refusal) if refusal.askable => refusal,
        reached => return reached,
    };
    let Some(asker) = &shared.asker else {
        return Err(refusal);
    };
    let _turn = shared.asking.lock().await;
    // Answered while this connection waited its turn; and a command that
    // tries host after host would keep a person answering: after a few
    // refusals, the rest are refused without a question.
    if shared.refused(&host) {
        return Err(refused_by_person());
    }
    if let Ok(stream) = reach(&rules, &shared.allowed(), target).await {
        return Ok(stream);
    }
    if shared
        .answered
        .lock()
        .is_ok_and(|a| a.refused.len() >= QUESTIONS_AFTER_REFUSALS)
    {
        return Err(refusal);
    }
    // Unanswered, the question lapses and the host is refused.
    let asked = tokio::time::timeout(ANSWER_WAIT, asker(host.clone(), target.port())).await;
    let Ok(Some(answer)) = asked else {
        return Err(refusal);
    };
    match answer {
        HostAnswer::Deny => {
            if let Ok(mut a) = shared.answered.lock() {
                a.refused.push(host.clone());
            }
            return Err(refused_by_person());
        }
        HostAnswer::Session | HostAnswer::Project => {
            if let Ok(mut a) = shared.answered.lock() {
                a.allowed.push(host.clone());
            }
        }
        HostAnswer::Once => {}
    }
    let mut allowed = shared.allowed();
    allowed.push(host.clone());
    reach(&rules, &allowed, target).await
}

/// Judges the target, resolves it to checked addresses and connects to
/// the first that answers.
/// A host a person allowed at the question (`asked`) is reached only at
/// public addresses — unless it is an address, which they saw: the
/// question shows a name, not where it resolves.
async fn reach(rules: &Rules, asked: &[String], target: &Target) -> Result<TcpStream, Refusal> {
    let host = north_policy::net::normalize_host(target.host());
    let grant = match decide(rules, &host) {
        Ok(grant) => grant,
        Err(refusal) if refusal.askable && asked.contains(&host) => {
            if host.parse::<std::net::IpAddr>().is_ok() {
                NetGrant::Domain(host.clone())
            } else {
                NetGrant::Wildcard(format!("asked:{host}"))
            }
        }
        Err(refusal) => return Err(refusal),
    };
    let addrs = resolve(target.host(), target.port(), &grant).await?;
    let mut last = None;
    for addr in addrs {
        match tokio::time::timeout(CONNECT_WAIT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = Some(e.to_string()),
            Err(_) => last = Some("timed out".into()),
        }
    }
    Err(Refusal {
        host: target.host().to_string(),
        reason: format!(
            "North's sandbox proxy could not connect to {}:{}: {}",
            target.host(),
            target.port(),
            last.unwrap_or_default()
        ),
        askable: false,
    })
}

/// An answer from the proxy itself, its reason also in `X-North-Denied`.
async fn answer(
    conn: &mut UnixStream,
    status: u16,
    text: &str,
    reason: &str,
) -> std::io::Result<()> {
    let header: String = reason.chars().filter(|c| !c.is_control()).collect();
    let body = format!("{header}\n");
    let out = format!(
        "HTTP/1.1 {status} {text}\r\nX-North-Denied: {header}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(out.as_bytes()).await?;
    conn.shutdown().await
}
