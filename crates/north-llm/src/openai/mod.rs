//! The OpenAI backend: the Responses API (OpenAI's own endpoint) and Chat
//! Completions (OpenAI and every compatible server: Ollama, llama.cpp's
//! server, vLLM, LM Studio).

#[cfg(feature = "http")]
mod backend;
mod chat;
mod decode;
pub mod responses;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[cfg(feature = "http")]
pub use backend::OpenAiBackend;
pub use chat::{decode_response, encode_request};
pub use decode::OpenAiDecoder;
pub use responses::ResponsesDecoder;

use crate::key::ApiKey;
use crate::transport::TransportConfig;

const P: &str = "openai";

/// The default model.
pub const DEFAULT_MODEL: &str = "gpt-5.2";
/// The default API base URL (including `/v1`).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable the key is read from.
pub const KEY_VAR: &str = "OPENAI_API_KEY";

/// Which OpenAI API a backend speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenAiApi {
    /// `/v1/responses`: reasoning carried across tool calls.
    Responses,
    /// `/v1/chat/completions`: what compatible servers speak.
    Chat,
}

impl OpenAiApi {
    /// The default for `base_url`: Responses for OpenAI's own endpoint,
    /// Chat Completions for any other server.
    pub fn default_for(base_url: &str) -> OpenAiApi {
        if is_official(base_url) {
            OpenAiApi::Responses
        } else {
            OpenAiApi::Chat
        }
    }

    /// The name as written in config files and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            OpenAiApi::Responses => "responses",
            OpenAiApi::Chat => "chat",
        }
    }
}

impl fmt::Display for OpenAiApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API name that is neither `responses` nor `chat`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown OpenAI API `{0}` (use responses or chat)")]
pub struct UnknownApi(pub String);

impl FromStr for OpenAiApi {
    type Err = UnknownApi;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "responses" => Ok(OpenAiApi::Responses),
            "chat" => Ok(OpenAiApi::Chat),
            other => Err(UnknownApi(other.to_string())),
        }
    }
}

/// Whether `base_url` is OpenAI's own endpoint.
pub fn is_official(base_url: &str) -> bool {
    base_url.contains("api.openai.com")
}

/// Settings for [`OpenAiBackend`].
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL including the version path, e.g. `http://localhost:11434/v1`.
    pub base_url: String,
    /// The API key; optional for local servers.
    pub api_key: Option<ApiKey>,
    /// Retries and timeouts.
    pub transport: TransportConfig,
    /// The API to speak (None: [`OpenAiApi::default_for`] the base URL).
    pub api: Option<OpenAiApi>,
    /// How the key is sent (a preset's; most use a bearer token).
    pub key_header: crate::KeyHeader,
    /// Headers sent with every request (a preset's or the user's).
    pub headers: Vec<(String, String)>,
    /// The variable the key comes from, named when the server refuses it.
    pub key_var: std::borrow::Cow<'static, str>,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key: None,
            transport: TransportConfig::default(),
            api: None,
            key_header: crate::KeyHeader::Bearer,
            headers: Vec::new(),
            key_var: KEY_VAR.into(),
        }
    }
}

impl OpenAiConfig {
    /// Defaults overridden by `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
    pub fn from_env() -> Self {
        OpenAiConfig {
            api_key: ApiKey::from_env(KEY_VAR),
            base_url: crate::key::env_setting("OPENAI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            ..Default::default()
        }
    }
}
