//! Errors from model backends.

use std::time::Duration;

use north_protocol::Usage;
use thiserror::Error;

/// What a stream had delivered when it failed: the caller already saw it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartialOutput {
    /// Assistant text streamed so far.
    pub text: String,
    /// Usage reported so far.
    pub usage: Usage,
    /// Names of tool calls that had started.
    pub tool_calls_started: Vec<String>,
}

impl PartialOutput {
    fn describe(&self) -> String {
        if self.text.is_empty() && self.tool_calls_started.is_empty() {
            String::new()
        } else {
            format!(
                " (after {} chars of text and {} tool call(s))",
                self.text.chars().count(),
                self.tool_calls_started.len()
            )
        }
    }
}

/// Why a complete (non-streaming) response could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResponseError {
    /// A field the protocol requires is absent.
    #[error("response has no {field}: {excerpt}")]
    Missing {
        /// The field, e.g. "`content` array".
        field: &'static str,
        /// The start of the response body.
        excerpt: String,
    },
    /// The response says that generating it failed.
    #[error("the response failed: {error_type}: {message}")]
    Failed {
        /// The provider's error code or type.
        error_type: String,
        /// The provider's message.
        message: String,
    },
}

impl ResponseError {
    pub(crate) fn missing(field: &'static str, body: &serde_json::Value) -> Self {
        ResponseError::Missing {
            field,
            excerpt: crate::decode::excerpt(&body.to_string()),
        }
    }

    /// The backend error for this failure, secrets scrubbed by `scrub`.
    pub(crate) fn into_llm(
        self,
        provider: &'static str,
        scrub: impl Fn(&str) -> String,
    ) -> LlmError {
        LlmError::Decode {
            provider,
            message: scrub(&self.to_string()),
            partial: Default::default(),
        }
    }
}

/// A backend failure. Messages never contain an API key.
#[derive(Debug, Error)]
pub enum LlmError {
    /// No API key is configured for a provider that needs one.
    #[error(
        "{provider}: no API key; set {env_var} (or use --provider scripted --script FILE to run without a model)"
    )]
    MissingKey {
        /// Provider name.
        provider: &'static str,
        /// The environment variable to set.
        env_var: &'static str,
    },
    /// Bad configuration (e.g. an unparsable base URL).
    #[error("{provider}: invalid configuration: {message}")]
    Config {
        /// Provider name.
        provider: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The provider answered with an HTTP error (after any retries).
    #[error("{provider}: HTTP {status}{}: {message}{}{}", error_type.as_deref().map(|t| format!(" {t}")).unwrap_or_default(), hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default(), attempts_note(*attempts))]
    Api {
        /// Provider name.
        provider: &'static str,
        /// HTTP status.
        status: u16,
        /// Provider error type (e.g. `overloaded_error`, `invalid_request_error`).
        error_type: Option<String>,
        /// Provider error message.
        message: String,
        /// Provider request id, if given.
        request_id: Option<String>,
        /// How many attempts were made.
        attempts: u32,
        /// What the user can check, e.g. which key variable was rejected.
        hint: Option<String>,
    },
    /// The server answered with a redirect. North never follows one with
    /// credentials: the key would go to whatever host the answer names.
    #[error(
        "{provider}: the server at {url} redirected (HTTP {status}) to {location}; North does not follow redirects with your API key — set the base URL to the final address if you trust it"
    )]
    RedirectRefused {
        /// Provider name.
        provider: &'static str,
        /// The URL asked (without credentials or query).
        url: String,
        /// The HTTP status (301, 302, 303, 307, 308).
        status: u16,
        /// Where the server pointed (`(none)` without a `Location`).
        location: String,
    },
    /// The connection failed before a response arrived (after any retries).
    #[error("{provider}: cannot reach {url}: {message}{}", attempts_note(*attempts))]
    Connection {
        /// Provider name.
        provider: &'static str,
        /// The URL tried (without credentials or query).
        url: String,
        /// What failed.
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// The stream broke after output had reached the caller; not retried.
    #[error("{provider}: stream interrupted: {message}{}", partial.describe())]
    StreamInterrupted {
        /// Provider name.
        provider: &'static str,
        /// What happened.
        message: String,
        /// What had been delivered.
        partial: Box<PartialOutput>,
    },
    /// The provider sent an `error` event inside the stream.
    #[error("{provider}: provider error {error_type}: {message}{}", partial.describe())]
    StreamError {
        /// Provider name.
        provider: &'static str,
        /// Provider error type, e.g. `overloaded_error`.
        error_type: String,
        /// Provider error message.
        message: String,
        /// What had been delivered.
        partial: Box<PartialOutput>,
    },
    /// No bytes arrived for the idle timeout.
    #[error("{provider}: no data for {}s (idle timeout){}", idle.as_secs_f32(), partial.describe())]
    IdleTimeout {
        /// Provider name.
        provider: &'static str,
        /// The timeout that elapsed.
        idle: Duration,
        /// What had been delivered.
        partial: Box<PartialOutput>,
    },
    /// The provider sent something that is not valid for its protocol.
    #[error("{provider}: malformed response: {message}{}", partial.describe())]
    Decode {
        /// Provider name.
        provider: &'static str,
        /// What was wrong, with the offending data (truncated).
        message: String,
        /// What had been delivered.
        partial: Box<PartialOutput>,
    },
    /// The caller cancelled.
    #[error("cancelled{}", partial.describe())]
    Cancelled {
        /// What had been delivered.
        partial: Box<PartialOutput>,
    },
    /// The scripted backend has no turn left, or its script is invalid.
    #[error("scripted backend: {0}")]
    Script(String),
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

impl LlmError {
    /// The partial output carried by a stream-phase error.
    pub fn partial(&self) -> Option<&PartialOutput> {
        match self {
            LlmError::StreamInterrupted { partial, .. }
            | LlmError::StreamError { partial, .. }
            | LlmError::IdleTimeout { partial, .. }
            | LlmError::Decode { partial, .. }
            | LlmError::Cancelled { partial } => Some(partial.as_ref()),
            _ => None,
        }
    }

    /// Whether this is a cancellation by the caller.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, LlmError::Cancelled { .. })
    }

    pub(crate) fn set_partial(&mut self, p: PartialOutput) {
        match self {
            LlmError::StreamInterrupted { partial, .. }
            | LlmError::StreamError { partial, .. }
            | LlmError::IdleTimeout { partial, .. }
            | LlmError::Decode { partial, .. }
            | LlmError::Cancelled { partial } => **partial = p,
            _ => {}
        }
    }
}
