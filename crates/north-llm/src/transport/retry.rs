//! When to retry: the backoff policy, which statuses and stream errors are
//! worth another attempt, and how long a server asks us to wait.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "http")]
use reqwest::header::HeaderMap;

/// A retry about to be made, for a front end to show while it waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The retry's number (1 for the first retry).
    pub retry: u32,
    /// Retries allowed in all.
    pub max: u32,
    /// How long North waits before it.
    pub delay: Duration,
    /// What failed (a status or a connection error, keys scrubbed).
    pub reason: String,
}

/// Who is told about retries: set for the span of a future with
/// [`observe_retries`].
pub type RetryObserver = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

tokio::task_local! {
    static OBSERVER: RetryObserver;
}

/// Runs `fut`; every retry a model request inside it makes is first told
/// to `observer` (a front end shows "retrying 2/4 in 4 s").
pub async fn observe_retries<F: Future>(observer: RetryObserver, fut: F) -> F::Output {
    OBSERVER.scope(observer, fut).await
}

/// The current task's observer, to carry into a task it spawns.
pub(crate) fn current() -> Option<RetryObserver> {
    OBSERVER.try_with(Arc::clone).ok()
}

/// Tells the observer of the current task, if any.
pub(crate) fn report(notice: &RetryNotice) {
    let _ = OBSERVER.try_with(|o| o(notice));
}

/// When and how often to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// First backoff delay; doubles per attempt.
    pub base_delay: Duration,
    /// Largest backoff delay.
    pub max_delay: Duration,
    /// Largest `retry-after` honoured; a longer one fails at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The jittered exponential delay before retry number `retry` (1-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self.base_delay.saturating_mul(
            1u32.checked_shl(retry.saturating_sub(1))
                .unwrap_or(u32::MAX),
        );
        let capped = exp.min(self.max_delay);
        // "Equal jitter": half fixed, half random, so clients spread out but
        // never retry immediately.
        capped.mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

pub(crate) fn is_retryable_stream_error(error_type: &str) -> bool {
    matches!(
        error_type,
        "overloaded_error"
            | "api_error"
            | "rate_limit_error"
            | "rate_limit_exceeded"
            | "server_error"
            | "timeout_error"
    )
}

/// Parses `retry-after-ms` or `retry-after` (seconds).
#[cfg(feature = "http")]
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|s| s.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    get("retry-after")
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}
