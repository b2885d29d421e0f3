//! How a headless run stops: Ctrl+C, SIGTERM and SIGHUP all cancel the
//! turn, so the session ends the ordinary way (background jobs killed,
//! SessionEnd hooks run, the checkpoint written) whichever of them arrives.
//! A second signal is not needed: every child also dies with North.

use tokio_util::sync::CancellationToken;

/// Cancels `cancel` at the first Ctrl+C, SIGTERM or SIGHUP.
pub fn cancel_on_stop(cancel: CancellationToken) {
    tokio::spawn(async move {
        stopped().await;
        cancel.cancel();
    });
}

#[cfg(unix)]
async fn stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let hup = signal(SignalKind::hangup());
    match (term, hup) {
        (Ok(mut term), Ok(mut hup)) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn stopped() {
    let _ = tokio::signal::ctrl_c().await;
}
