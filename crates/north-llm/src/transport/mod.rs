//! The one HTTP transport every provider uses: retries with backoff and
//! jitter, `retry-after`, idle timeouts, cancellation, a `User-Agent` on
//! every request, and the streaming driver that never retries once output
//! has reached the caller.
//!
//! - `retry.rs`: the backoff policy and what is worth retrying;
//! - `describe.rs`: error bodies, reqwest errors and URLs in words;
//! - `stream.rs`: the streaming driver.

#[cfg(feature = "http")]
mod describe;
mod retry;
#[cfg(feature = "http")]
mod stream;

use std::time::Duration;

#[cfg(feature = "http")]
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
#[cfg(feature = "http")]
use serde_json::Value;
#[cfg(feature = "http")]
use tokio_util::sync::CancellationToken;

pub use retry::{RetryNotice, RetryObserver, RetryPolicy, observe_retries};

#[cfg(feature = "http")]
pub(crate) use describe::printable_url;
#[cfg(feature = "http")]
use describe::{describe, error_from_body};
#[cfg(feature = "http")]
use retry::{is_retryable_status, retry_after};

#[cfg(feature = "http")]
use crate::decode::excerpt;
#[cfg(feature = "http")]
use crate::error::LlmError;
#[cfg(feature = "http")]
use crate::key::ApiKey;

/// The `User-Agent` every request carries.
pub const USER_AGENT: &str = concat!("north/", env!("CARGO_PKG_VERSION"));

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
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
pub(crate) struct HttpCall {
    pub provider: &'static str,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

#[cfg(feature = "http")]
impl HttpCall {
    /// A POST of `body` as JSON.
    pub(crate) fn json(provider: &'static str, url: String, body: &Value) -> Self {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        HttpCall {
            provider,
            url,
            headers,
            // Serializing a Value cannot fail.
            body: serde_json::to_vec(body).unwrap_or_default(),
        }
    }

    pub(crate) fn header(mut self, name: &'static str, value: &str) -> Result<Self, LlmError> {
        let v = HeaderValue::from_str(value).map_err(|_| LlmError::Config {
            provider: self.provider,
            message: format!("header `{name}` has characters HTTP does not allow"),
        })?;
        self.headers.insert(HeaderName::from_static(name), v);
        Ok(self)
    }

    pub(crate) fn secret_header(self, name: &'static str, value: &str) -> Result<Self, LlmError> {
        let mut call = self.header(name, value)?;
        if let Some(v) = call.headers.get_mut(name) {
            v.set_sensitive(true);
        }
        Ok(call)
    }
}

/// Shared HTTP machinery of a provider.
#[cfg(feature = "http")]
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    pub cfg: TransportConfig,
    pub provider: &'static str,
    key: Option<ApiKey>,
    /// The environment variable the key comes from, named in a 401's hint.
    key_var: std::borrow::Cow<'static, str>,
}

#[cfg(feature = "http")]
impl Transport {
    pub(crate) fn new(
        provider: &'static str,
        cfg: TransportConfig,
        key: Option<ApiKey>,
        key_var: impl Into<std::borrow::Cow<'static, str>>,
    ) -> Result<Self, LlmError> {
        // Redirects are never followed: reqwest keeps custom credential
        // headers (`x-api-key`) across hosts, and a redirect is the
        // server's request to send the key somewhere else.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(cfg.connect_timeout)
            .user_agent(USER_AGENT)
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
            key_var: key_var.into(),
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

    /// What to tell the user about an HTTP error status, beyond the
    /// server's own message.
    fn hint(&self, status: u16) -> Option<String> {
        match (status, &self.key) {
            (401, Some(_)) => Some(format!(
                "the key in {} was rejected; check that it is valid for this server",
                self.key_var
            )),
            (401, None) => Some(format!("no key was sent; set {}", self.key_var)),
            (403, Some(_)) => Some(format!(
                "the key in {} is not allowed to do this (model or endpoint access)",
                self.key_var
            )),
            (404, _) => Some("check the base URL and the model name".to_string()),
            _ => None,
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
                Ok(resp) if resp.status().is_success() => {
                    tracing::info!(
                        provider = self.provider,
                        // The provider's request id is what its support asks for.
                        request_id = request_id(&resp).as_deref().unwrap_or("-"),
                        status = resp.status().as_u16(),
                        attempt = *attempts,
                        "model response started"
                    );
                    return Ok(resp);
                }
                Ok(resp) if resp.status().is_redirection() => {
                    return Err(self.redirect_refused(&resp, call));
                }
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    if can_retry && is_retryable_status(status) {
                        let delay =
                            retry_after(resp.headers()).unwrap_or_else(|| retry.backoff(*attempts));
                        if delay <= retry.max_retry_after {
                            tracing::info!(
                                provider = self.provider,
                                status,
                                attempt = *attempts,
                                delay_ms = delay.as_millis() as u64,
                                "retrying after HTTP error"
                            );
                            self.wait_to_retry(*attempts, delay, format!("HTTP {status}"), cancel)
                                .await?;
                            continue;
                        }
                    }
                    return Err(self.api_error(resp, *attempts, cancel).await);
                }
                Err(e) => {
                    let message = self.scrub(&describe(e));
                    if can_retry {
                        let delay = retry.backoff(*attempts);
                        tracing::info!(provider = self.provider, attempt = *attempts, error = %message, "retrying after connection error");
                        self.wait_to_retry(*attempts, delay, message, cancel)
                            .await?;
                        continue;
                    }
                    return Err(LlmError::Connection {
                        provider: self.provider,
                        url: printable_url(&call.url),
                        message,
                        attempts: *attempts,
                    });
                }
            }
        }
    }

    /// Says a retry is coming (to whoever observes retries) and waits for
    /// it; a cancel while waiting ends the request.
    async fn wait_to_retry(
        &self,
        attempt: u32,
        delay: Duration,
        reason: String,
        cancel: &CancellationToken,
    ) -> Result<(), LlmError> {
        retry::report(&RetryNotice {
            retry: attempt,
            max: self.cfg.retry.max_retries,
            delay,
            reason,
        });
        if self.sleep_or_cancel(delay, cancel).await {
            Ok(())
        } else {
            Err(LlmError::Cancelled {
                partial: Default::default(),
            })
        }
    }

    /// A redirect is never followed (a key must not go where the user did
    /// not send it): the error says where it pointed.
    fn redirect_refused(&self, resp: &reqwest::Response, call: &HttpCall) -> LlmError {
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map_or_else(|| "(none)".to_owned(), |l| self.scrub(l));
        LlmError::RedirectRefused {
            provider: self.provider,
            url: printable_url(&call.url),
            status: resp.status().as_u16(),
            location,
        }
    }

    /// The provider's error, from its body (read unless cancelled).
    async fn api_error(
        &self,
        resp: reqwest::Response,
        attempts: u32,
        cancel: &CancellationToken,
    ) -> LlmError {
        let status = resp.status().as_u16();
        let request_id = request_id(&resp);
        let body = tokio::select! {
            _ = cancel.cancelled() => String::new(),
            b = resp.text() => b.unwrap_or_default(),
        };
        let (error_type, message) = error_from_body(&body);
        LlmError::Api {
            provider: self.provider,
            status,
            error_type,
            message: self.scrub(&message),
            request_id,
            attempts,
            hint: self.hint(status),
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
                        url: printable_url(&call.url),
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
}

/// The provider's id for a response (`request-id` or `x-request-id`).
#[cfg(feature = "http")]
fn request_id(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get("request-id")
        .or_else(|| resp.headers().get("x-request-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}
