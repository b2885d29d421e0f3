//! The one HTTP transport both providers use: retries with backoff and
//! jitter, `retry-after`, idle timeouts, cancellation, and the streaming
//! driver that never retries once output has reached the caller.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use north_protocol::StreamDelta;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::DeltaStream;
use crate::accumulate::ResponseBuilder;
use crate::decode::{DecodeFailure, StreamDecoder, excerpt};
use crate::error::LlmError;
use crate::key::ApiKey;
use crate::sse::SseParser;

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

/// Timeouts and retries for one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct TransportConfig {
    /// Retry policy.
    pub retry: RetryPolicy,
    /// A stream with no bytes for this long fails.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Whole-request timeout for non-streaming calls.
    pub request_timeout: Duration,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(90),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(600),
        }
    }
}

/// One prepared HTTP POST.
#[derive(Debug, Clone)]
pub(crate) struct HttpCall {
    pub url: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl HttpCall {
    pub(crate) fn json(url: String, body: &Value) -> Self {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        HttpCall {
            url,
            headers,
            // Serializing a Value cannot fail.
            body: serde_json::to_vec(body).unwrap_or_default(),
        }
    }

    pub(crate) fn header(mut self, name: &'static str, value: &str) -> Result<Self, String> {
        let v = HeaderValue::from_str(value)
            .map_err(|_| format!("header `{name}` has characters HTTP does not allow"))?;
        self.headers.insert(HeaderName::from_static(name), v);
        Ok(self)
    }

    pub(crate) fn secret_header(self, name: &'static str, value: &str) -> Result<Self, String> {
        let mut call = self.header(name, value)?;
        if let Some(v) = call.headers.get_mut(name) {
            v.set_sensitive(true);
        }
        Ok(call)
    }
}

/// Shared HTTP machinery of a provider.
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    pub cfg: TransportConfig,
    pub provider: &'static str,
    key: Option<ApiKey>,
}

fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

fn is_retryable_stream_error(error_type: &str) -> bool {
    matches!(
        error_type,
        "overloaded_error" | "api_error" | "rate_limit_error" | "server_error" | "timeout_error"
    )
}

/// Parses `retry-after-ms` or `retry-after` (seconds).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|s| s.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    get("retry-after")
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}

/// Extracts `(type, message)` from an Anthropic- or OpenAI-shaped error body.
pub(crate) fn error_from_body(body: &str) -> (Option<String>, String) {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        let text = body.trim();
        return (
            None,
            if text.is_empty() {
                "(empty body)".to_string()
            } else {
                excerpt(text)
            },
        );
    };
    match v.get("error") {
        Some(Value::Object(e)) => (
            e.get("type")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| e.get("code").and_then(Value::as_str).map(str::to_string)),
            e.get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| excerpt(body)),
        ),
        Some(Value::String(s)) => (None, s.clone()),
        _ => (
            None,
            v.get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| excerpt(body)),
        ),
    }
}

/// A reqwest error with its causes, without the URL.
fn describe(err: reqwest::Error) -> String {
    let err = err.without_url();
    let mut msg = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        let text = s.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = s.source();
    }
    msg
}

async fn send_all(
    tx: &mpsc::Sender<Result<StreamDelta, LlmError>>,
    deltas: impl IntoIterator<Item = StreamDelta>,
) -> bool {
    for d in deltas {
        if tx.send(Ok(d)).await.is_err() {
            return false;
        }
    }
    true
}

fn is_content(d: &StreamDelta) -> bool {
    matches!(
        d,
        StreamDelta::Text { .. }
            | StreamDelta::ToolCallStart { .. }
            | StreamDelta::ToolCallArgs { .. }
            | StreamDelta::ToolCallEnd { .. }
    )
}

/// Outcome of trying one HTTP attempt's body.
enum StreamEnd {
    Complete,
    Failed { error: LlmError, retryable: bool },
    ReceiverGone,
}

impl Transport {
    pub(crate) fn new(
        provider: &'static str,
        cfg: TransportConfig,
        key: Option<ApiKey>,
    ) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(cfg.connect_timeout)
            .build()
            .map_err(|e| LlmError::Config {
                provider,
                message: format!("cannot build HTTP client: {}", describe(e)),
            })?;
        Ok(Transport {
            client,
            cfg,
            provider,
            key,
        })
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(k) => k.scrub(text),
            None => text.to_string(),
        }
    }

    async fn sleep_or_cancel(&self, d: Duration, cancel: &CancellationToken) -> bool {
        tokio::select! {
            _ = cancel.cancelled() => false,
            _ = tokio::time::sleep(d) => true,
        }
    }

    /// Sends `call` until a 2xx arrives, retrying what is retryable.
    /// `attempts` counts HTTP attempts across the whole logical request.
    pub(crate) async fn send(
        &self,
        call: &HttpCall,
        cancel: &CancellationToken,
        attempts: &mut u32,
    ) -> Result<reqwest::Response, LlmError> {
        let retry = &self.cfg.retry;
        loop {
            *attempts += 1;
            let request = self
                .client
                .post(&call.url)
                .headers(call.headers.clone())
                .body(call.body.clone());
            let sent = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled { partial: Default::default() }),
                r = request.send() => r,
            };
            let can_retry = *attempts <= retry.max_retries;
            match sent {
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let wait = retry_after(resp.headers());
                    let request_id = resp
                        .headers()
                        .get("request-id")
                        .or_else(|| resp.headers().get("x-request-id"))
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    if can_retry && is_retryable_status(status) {
                        let delay = wait.unwrap_or_else(|| retry.backoff(*attempts));
                        if delay <= retry.max_retry_after {
                            tracing::info!(
                                provider = self.provider,
                                status,
                                attempt = *attempts,
                                delay_ms = delay.as_millis() as u64,
                                "retrying after HTTP error"
                            );
                            if !self.sleep_or_cancel(delay, cancel).await {
                                return Err(LlmError::Cancelled {
                                    partial: Default::default(),
                                });
                            }
                            continue;
                        }
                    }
                    let body = tokio::select! {
                        _ = cancel.cancelled() => String::new(),
                        b = resp.text() => b.unwrap_or_default(),
                    };
                    let (error_type, message) = error_from_body(&body);
                    return Err(LlmError::Api {
                        provider: self.provider,
                        status,
                        error_type,
                        message: self.scrub(&message),
                        request_id,
                        attempts: *attempts,
                    });
                }
                Err(e) => {
                    let message = self.scrub(&describe(e));
                    if can_retry {
                        let delay = retry.backoff(*attempts);
                        tracing::info!(provider = self.provider, attempt = *attempts, error = %message, "retrying after connection error");
                        if !self.sleep_or_cancel(delay, cancel).await {
                            return Err(LlmError::Cancelled {
                                partial: Default::default(),
                            });
                        }
                        continue;
                    }
                    return Err(LlmError::Connection {
                        provider: self.provider,
                        message,
                        attempts: *attempts,
                    });
                }
            }
        }
    }

    /// Sends a non-streaming request and returns the parsed JSON body.
    pub(crate) async fn send_json(
        &self,
        call: &HttpCall,
        cancel: &CancellationToken,
    ) -> Result<Value, LlmError> {
        let mut attempts = 0;
        loop {
            let resp = self.send(call, cancel, &mut attempts).await?;
            let body = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled { partial: Default::default() }),
                b = tokio::time::timeout(self.cfg.request_timeout, resp.bytes()) => b,
            };
            match body {
                Ok(Ok(bytes)) => {
                    return serde_json::from_slice(&bytes).map_err(|e| LlmError::Decode {
                        provider: self.provider,
                        message: format!(
                            "response is not JSON ({e}): {}",
                            self.scrub(&excerpt(&String::from_utf8_lossy(&bytes)))
                        ),
                        partial: Default::default(),
                    });
                }
                Ok(Err(e)) if attempts <= self.cfg.retry.max_retries => {
                    tracing::info!(provider = self.provider, error = %describe(e), "retrying after body read error");
                    if !self
                        .sleep_or_cancel(self.cfg.retry.backoff(attempts), cancel)
                        .await
                    {
                        return Err(LlmError::Cancelled {
                            partial: Default::default(),
                        });
                    }
                }
                Ok(Err(e)) => {
                    return Err(LlmError::Connection {
                        provider: self.provider,
                        message: self.scrub(&describe(e)),
                        attempts,
                    });
                }
                Err(_) => {
                    return Err(LlmError::IdleTimeout {
                        provider: self.provider,
                        idle: self.cfg.request_timeout,
                        partial: Default::default(),
                    });
                }
            }
        }
    }

    /// Starts a streaming request; deltas arrive on the returned stream.
    pub(crate) fn stream<D, F>(
        self: Arc<Self>,
        call: HttpCall,
        make_decoder: F,
        cancel: CancellationToken,
    ) -> DeltaStream
    where
        D: StreamDecoder + 'static,
        F: Fn() -> D + Send + 'static,
    {
        let (tx, mut rx) = mpsc::channel::<Result<StreamDelta, LlmError>>(64);
        tokio::spawn(async move {
            self.drive(call, make_decoder, cancel, tx).await;
        });
        Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }

    async fn drive<D, F>(
        &self,
        call: HttpCall,
        make_decoder: F,
        cancel: CancellationToken,
        tx: mpsc::Sender<Result<StreamDelta, LlmError>>,
    ) where
        D: StreamDecoder,
        F: Fn() -> D,
    {
        let mut attempts = 0;
        loop {
            let resp = match self.send(&call, &cancel, &mut attempts).await {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            let mut builder = ResponseBuilder::new();
            let end = self
                .read_body(resp, make_decoder(), &cancel, &tx, &mut builder)
                .await;
            match end {
                StreamEnd::Complete | StreamEnd::ReceiverGone => return,
                StreamEnd::Failed { error, retryable }
                    if retryable
                        && !builder.has_content()
                        && attempts <= self.cfg.retry.max_retries =>
                {
                    let delay = self.cfg.retry.backoff(attempts);
                    tracing::info!(provider = self.provider, attempt = attempts, error = %error, "retrying stream that failed before any output");
                    if !self.sleep_or_cancel(delay, &cancel).await {
                        let _ = tx
                            .send(Err(LlmError::Cancelled {
                                partial: Default::default(),
                            }))
                            .await;
                        return;
                    }
                }
                StreamEnd::Failed { mut error, .. } => {
                    error.set_partial(builder.partial());
                    let _ = tx.send(Err(error)).await;
                    return;
                }
            }
        }
    }

    /// Flushes held metadata and the decoder's closing deltas.
    async fn complete<D: StreamDecoder>(
        &self,
        decoder: &mut D,
        held: Vec<StreamDelta>,
        builder: &mut ResponseBuilder,
        tx: &mpsc::Sender<Result<StreamDelta, LlmError>>,
    ) -> StreamEnd {
        let fin = decoder.finish();
        for d in &fin {
            builder.push(d);
        }
        let stats = decoder.stats();
        if stats.unknown_events + stats.unknown_fields > 0 {
            tracing::info!(
                provider = self.provider,
                unknown_events = stats.unknown_events,
                unknown_fields = stats.unknown_fields,
                "stream had unknown events or fields"
            );
        }
        if send_all(tx, held.into_iter().chain(fin)).await {
            StreamEnd::Complete
        } else {
            StreamEnd::ReceiverGone
        }
    }

    async fn read_body<D: StreamDecoder>(
        &self,
        resp: reqwest::Response,
        mut decoder: D,
        cancel: &CancellationToken,
        tx: &mpsc::Sender<Result<StreamDelta, LlmError>>,
        builder: &mut ResponseBuilder,
    ) -> StreamEnd {
        let provider = self.provider;
        let mut body = resp.bytes_stream();
        let mut parser = SseParser::new();
        // Metadata (start, usage) is held back until the first content delta,
        // so a retried attempt never shows the caller a duplicate start.
        let mut held: Vec<StreamDelta> = Vec::new();
        let mut saw_stop = false;
        let fail = |error: LlmError, retryable: bool| StreamEnd::Failed { error, retryable };
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return fail(LlmError::Cancelled { partial: Default::default() }, false),
                n = tokio::time::timeout(self.cfg.idle_timeout, body.next()) => n,
            };
            let chunk = match next {
                Err(_) => {
                    return fail(
                        LlmError::IdleTimeout {
                            provider,
                            idle: self.cfg.idle_timeout,
                            partial: Default::default(),
                        },
                        true,
                    );
                }
                Ok(None) => {
                    if decoder.is_done() || saw_stop {
                        return self.complete(&mut decoder, held, builder, tx).await;
                    }
                    return fail(
                        LlmError::StreamInterrupted {
                            provider,
                            message: "the stream ended before the response was complete".into(),
                            partial: Default::default(),
                        },
                        true,
                    );
                }
                Ok(Some(Err(e))) => {
                    return fail(
                        LlmError::StreamInterrupted {
                            provider,
                            message: self.scrub(&describe(e)),
                            partial: Default::default(),
                        },
                        true,
                    );
                }
                Ok(Some(Ok(bytes))) => bytes,
            };
            for event in parser.feed(&chunk) {
                let deltas = match decoder.decode(&event) {
                    Ok(ds) => ds,
                    Err(DecodeFailure::Malformed(message)) => {
                        return fail(
                            LlmError::Decode {
                                provider,
                                message: self.scrub(&message),
                                partial: Default::default(),
                            },
                            false,
                        );
                    }
                    Err(DecodeFailure::Provider {
                        error_type,
                        message,
                    }) => {
                        let retryable = is_retryable_stream_error(&error_type);
                        return fail(
                            LlmError::StreamError {
                                provider,
                                error_type,
                                message: self.scrub(&message),
                                partial: Default::default(),
                            },
                            retryable,
                        );
                    }
                };
                for d in deltas {
                    saw_stop |= matches!(d, StreamDelta::Stop { .. });
                    builder.push(&d);
                    if is_content(&d) || builder.has_content() {
                        held.push(d);
                        if !send_all(tx, held.drain(..)).await {
                            return StreamEnd::ReceiverGone;
                        }
                    } else {
                        held.push(d);
                    }
                }
            }
            if decoder.is_done() {
                return self.complete(&mut decoder, held, builder, tx).await;
            }
        }
    }
}
