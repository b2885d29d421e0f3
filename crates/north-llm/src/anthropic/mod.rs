//! The Anthropic Messages API backend: streaming, tool use, prompt caching
//! and extended thinking (thinking and redacted_thinking blocks decoded,
//! shown, and passed back unchanged in a tool loop).

#[cfg(feature = "http")]
mod backend;
mod decode;
mod encode;
mod response;

#[cfg(feature = "http")]
pub use backend::AnthropicBackend;
pub use decode::AnthropicDecoder;
pub use encode::{encode_request, thinking_budget};
pub use response::decode_response;

use crate::key::ApiKey;
use crate::transport::TransportConfig;

const P: &str = "anthropic";

/// The default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The default API base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The environment variable the key is read from.
pub const KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// The `anthropic-version` header value.
pub const API_VERSION: &str = "2023-06-01";

/// Settings for [`AnthropicBackend`].
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Base URL (without `/v1/messages`).
    pub base_url: String,
    /// The API key.
    pub api_key: Option<ApiKey>,
    /// Retries and timeouts.
    pub transport: TransportConfig,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key: None,
            transport: TransportConfig::default(),
        }
    }
}

impl AnthropicConfig {
    /// Defaults overridden by `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
    pub fn from_env() -> Self {
        AnthropicConfig {
            api_key: ApiKey::from_env("ANTHROPIC_API_KEY"),
            base_url: crate::key::env_setting("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            ..Default::default()
        }
    }
}
