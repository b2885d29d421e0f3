//! Context discovery: asking an OpenAI- or Anthropic-compatible server how
//! large its context window is, so North never overflows a small local model.
//!
//! Each server kind answers in its own shape, parsed by a pure function:
//!
//! | server | request | field |
//! |---|---|---|
//! | llama.cpp | `GET /props` | `default_generation_settings.n_ctx` |
//! | vLLM (and llama.cpp) | `GET /v1/models` | `data[].max_model_len` (`data[].meta.n_ctx`) |
//! | Ollama | `POST /api/show {"model"}` | `num_ctx` in `parameters`, else Ollama's default 4,096 |
//!
//! The three probes go out together (one round trip, not three) and are
//! short (a few seconds) and never retried: a server that does not answer
//! leaves the window to the catalogue or the configured default.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::key::ApiKey;
use crate::transport::USER_AGENT;

/// Ollama's context size when a model sets no `num_ctx`: it truncates
/// longer prompts silently, so this is the safe assumption.
pub const OLLAMA_DEFAULT_NUM_CTX: u64 = 4_096;

/// Which server answered, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoverySource {
    /// llama.cpp's `/props`.
    LlamaCppProps,
    /// `/v1/models` (`max_model_len` from vLLM, `meta.n_ctx` from llama.cpp).
    ModelsList,
    /// Ollama's `/api/show`; `num_ctx_set` when the model sets `num_ctx`.
    OllamaShow {
        /// Whether the model's parameters set `num_ctx`.
        num_ctx_set: bool,
    },
}

impl fmt::Display for DiscoverySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiscoverySource::LlamaCppProps => "server (llama.cpp /props)",
            DiscoverySource::ModelsList => "server (/v1/models)",
            DiscoverySource::OllamaShow { num_ctx_set: true } => {
                "server (Ollama /api/show num_ctx)"
            }
            DiscoverySource::OllamaShow { num_ctx_set: false } => {
                "server (Ollama /api/show; no num_ctx, Ollama's default)"
            }
        })
    }
}

/// A context window a server reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Discovered {
    /// Tokens of input and output together.
    pub context_window: u64,
    /// Where it came from.
    pub source: DiscoverySource,
}

fn positive(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64).filter(|n| *n > 0)
}

/// llama.cpp `/props`: `default_generation_settings.n_ctx` (older builds: a
/// top-level `n_ctx`).
pub fn parse_llama_props(v: &Value) -> Option<u64> {
    positive(v.pointer("/default_generation_settings/n_ctx")).or_else(|| positive(v.get("n_ctx")))
}

/// `/v1/models`: the entry for `model` (else the only or first one with a
/// size): vLLM's `max_model_len`, llama.cpp's `meta.n_ctx`.
pub fn parse_models_list(v: &Value, model: &str) -> Option<u64> {
    let data = v.get("data")?.as_array()?;
    let size = |m: &Value| {
        positive(m.get("max_model_len"))
            .or_else(|| positive(m.pointer("/meta/n_ctx")))
            .or_else(|| positive(m.get("context_length")))
    };
    let named = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model));
    match named {
        Some(m) => size(m),
        None => data.iter().find_map(size),
    }
}

/// Ollama `/api/show`: `num_ctx` from the model's `parameters`, else
/// Ollama's default (never the model's trained length, which Ollama does
/// not use unless told). Returns the size and whether `num_ctx` was set.
pub fn parse_ollama_show(v: &Value) -> Option<(u64, bool)> {
    // Only an Ollama answer has `model_info` or `parameters`.
    if v.get("model_info").is_none() && v.get("parameters").is_none() {
        return None;
    }
    let num_ctx = v
        .get("parameters")
        .and_then(Value::as_str)
        .into_iter()
        .flat_map(str::lines)
        .find_map(|line| {
            let mut parts = line.split_whitespace();
            (parts.next() == Some("num_ctx"))
                .then(|| parts.next().and_then(|n| n.parse::<u64>().ok()))
                .flatten()
        })
        .filter(|n| *n > 0);
    let trained = v
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|info| {
            info.iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, n)| n.as_u64())
        });
    Some(match num_ctx {
        Some(n) => (n, true),
        None => (
            trained.map_or(OLLAMA_DEFAULT_NUM_CTX, |t| t.min(OLLAMA_DEFAULT_NUM_CTX)),
            false,
        ),
    })
}

#[cfg(feature = "http")]
/// The server root: `base_url` without a trailing `/v1`.
fn root(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

#[cfg(feature = "http")]
async fn fetch(key: Option<&ApiKey>, request: reqwest::RequestBuilder) -> Option<Value> {
    let request = match key {
        Some(k) => request.bearer_auth(k.expose()),
        None => request,
    };
    let resp = request.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    serde_json::from_slice(&resp.bytes().await.ok()?).ok()
}

#[cfg(feature = "http")]
/// Asks the server at `base_url` (an OpenAI `/v1` base or an Anthropic
/// base) for the context window of `model`: llama.cpp's answer first,
/// then `/v1/models`, then Ollama's. `None` when no probe answers within `timeout`.
pub async fn discover_context_window(
    base_url: &str,
    model: &str,
    key: Option<&ApiKey>,
    timeout: Duration,
) -> Option<Discovered> {
    // Never followed: a redirect would carry the key to another host.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(USER_AGENT)
        .connect_timeout(timeout)
        .timeout(timeout)
        .build()
        .ok()?;
    let root = root(base_url);
    let show = client
        .post(format!("{root}/api/show"))
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(json!({ "model": model }).to_string());
    let (props, models, show) = tokio::join!(
        fetch(key, client.get(format!("{root}/props"))),
        fetch(key, client.get(format!("{root}/v1/models"))),
        fetch(key, show),
    );
    // In order of trust: llama.cpp's own answer, the models list, Ollama.
    if let Some(n) = props.as_ref().and_then(parse_llama_props) {
        return Some(Discovered {
            context_window: n,
            source: DiscoverySource::LlamaCppProps,
        });
    }
    if let Some(n) = models.and_then(|v| parse_models_list(&v, model)) {
        return Some(Discovered {
            context_window: n,
            source: DiscoverySource::ModelsList,
        });
    }
    let (n, num_ctx_set) = show.as_ref().and_then(parse_ollama_show)?;
    Some(Discovered {
        context_window: n,
        source: DiscoverySource::OllamaShow { num_ctx_set },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_drop_the_version_path() {
        assert_eq!(root("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080");
        assert_eq!(root("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }

    #[test]
    fn ollama_without_num_ctx_assumes_its_default() {
        let v = json!({"parameters": "stop \"<|im_end|>\"", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(parse_ollama_show(&v), Some((4_096, false)));
        let v = json!({"parameters": "num_ctx 16384\nstop x", "model_info": {}});
        assert_eq!(parse_ollama_show(&v), Some((16_384, true)));
        assert_eq!(
            parse_ollama_show(&json!({"error": "model not found"})),
            None
        );
    }
}
