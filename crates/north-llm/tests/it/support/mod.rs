//! Shared by the provider test files: both HTTP backends against an
//! in-process server, a fast transport, one request, and stream helpers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, Backend, LlmError, OpenAiBackend, OpenAiConfig,
    RetryPolicy, TransportConfig,
};
use north_protocol::{ChatRequest, Message, StreamDelta, ToolSpec};
use north_test_support::{Reply, after_event, anthropic, openai};
use serde_json::json;
use tokio_util::sync::CancellationToken;
pub const KEY: &str = "sk-test-NORTHFAKEKEY-0123456789";

#[derive(Clone, Copy, Debug)]
pub enum P {
    Anthropic,
    OpenAi,
}

pub const BOTH: [P; 2] = [P::Anthropic, P::OpenAi];

pub fn transport(idle_ms: u64, retries: u32) -> TransportConfig {
    TransportConfig {
        retry: RetryPolicy {
            max_retries: retries,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_retry_after: Duration::from_secs(5),
        },
        idle_timeout: Duration::from_millis(idle_ms),
        connect_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(10),
    }
}

impl P {
    pub fn backend_with(self, url: &str, t: TransportConfig) -> Box<dyn Backend> {
        match self {
            P::Anthropic => Box::new(
                AnthropicBackend::new(AnthropicConfig {
                    base_url: url.into(),
                    api_key: Some(ApiKey::new(KEY)),
                    transport: t,
                })
                .unwrap(),
            ),
            P::OpenAi => Box::new(
                OpenAiBackend::new(OpenAiConfig {
                    base_url: format!("{url}/v1"),
                    api_key: Some(ApiKey::new(KEY)),
                    transport: t,
                    api: None,
                    ..Default::default()
                })
                .unwrap(),
            ),
        }
    }

    pub fn backend(self, url: &str) -> Box<dyn Backend> {
        self.backend_with(url, transport(2_000, 3))
    }

    pub fn text(self, parts: &[&str]) -> Vec<u8> {
        match self {
            P::Anthropic => anthropic::text_stream(parts),
            P::OpenAi => openai::text_stream(parts),
        }
    }

    pub fn error(self, status: u16, ty: &str, msg: &str) -> Reply {
        match self {
            P::Anthropic => Reply::json(status, anthropic::error_body(ty, msg)),
            P::OpenAi => Reply::json(status, openai::error_body(ty, msg)),
        }
    }

    /// A stream with text, then a fault point right after the first text delta.
    pub fn text_then_more(self) -> (Vec<u8>, usize) {
        let body = self.text(&["Hello", " world", " and more"]);
        // Anthropic: start, block start, first delta = 3 events; OpenAI: role, first text = 2.
        let n = match self {
            P::Anthropic => 3,
            P::OpenAi => 2,
        };
        let cut = after_event(&body, n);
        (body, cut)
    }
}

pub fn request() -> ChatRequest {
    let mut r = ChatRequest::new("test-model", vec![Message::user("hi")]);
    r.system = Some("You are North.".into());
    r.tools.push(ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type":"object","properties":{"path":{"type":"string"}}}),
        approval: Default::default(),
    });
    r
}

pub async fn run(backend: &dyn Backend) -> (Vec<StreamDelta>, Option<LlmError>) {
    let mut s = backend.stream_chat(request(), CancellationToken::new());
    let mut out = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(d) => out.push(d),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

pub fn text_of(deltas: &[StreamDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
