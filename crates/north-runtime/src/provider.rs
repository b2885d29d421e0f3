//! Choosing and building a model backend from the effective configuration,
//! and the model's limits: its context window (the user's setting, what a
//! local server reports, the catalogue, or a default) and output limit.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use north_config::{Config, Provider, ProviderApi};
use north_llm::catalog::{self, DEFAULT_CONTEXT_WINDOW};
use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, Backend, ModelLimits, OpenAiBackend, OpenAiConfig,
    ScriptedBackend,
};

use crate::RuntimeError;
use crate::endpoint::Endpoint;

/// How long a local server may take to say how large its context is.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(3);

/// What a front end shows while a local server is asked for its context
/// window (`Some` with what is asked, then `None`): the interactive
/// assistant says so on the line its first screen will take, so a slow
/// server never leaves the terminal blank. Called on the asking thread.
pub type WaitNotice = Box<dyn Fn(Option<&str>) + Send + Sync>;

static WAIT_NOTICE: std::sync::OnceLock<WaitNotice> = std::sync::OnceLock::new();

/// Sets what is told of a probe as it starts and ends (once a process;
/// later calls are ignored).
pub fn on_probe(notice: WaitNotice) {
    let _ = WAIT_NOTICE.set(notice);
}

/// `url` without a `user:password@` part, to show.
fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Tells the front end of a probe for as long as it lives.
struct Probing;

impl Probing {
    fn start(what: &str) -> Probing {
        if let Some(notice) = WAIT_NOTICE.get() {
            notice(Some(what));
        }
        Probing
    }
}

impl Drop for Probing {
    fn drop(&mut self) {
        if let Some(notice) = WAIT_NOTICE.get() {
            notice(None);
        }
    }
}

/// The scripted provider has no window of its own; it behaves like a large model.
const SCRIPTED_CONTEXT_WINDOW: u64 = 200_000;

/// The model the user asked for on the command line (or an editor's
/// connection): what overrides the configuration's provider and model.
#[derive(Debug, Clone, Default)]
pub struct ModelChoice {
    /// `--provider`.
    pub provider: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--openai-api`.
    pub openai_api: Option<north_llm::OpenAiApi>,
    /// `--thinking`.
    pub thinking: Option<north_protocol::ReasoningEffort>,
    /// `--script`: the scripted provider's script.
    pub script: Option<PathBuf>,
    /// `--record-requests`: where the scripted provider records requests.
    pub record_requests: Option<PathBuf>,
}

/// A backend ready to use, with the provider and model it answers as.
pub struct Selected {
    /// The backend.
    pub backend: Arc<dyn Backend>,
    /// Provider name.
    pub provider: String,
    /// Model name (an alias resolved to the model's id).
    pub model: String,
    /// The model's context window and output limit.
    pub limits: ModelLimits,
}

fn key(var: &str) -> Option<ApiKey> {
    ApiKey::from_env(var)
}

/// The model the configuration names for its provider, aliases resolved.
pub fn model_name(config: &Config) -> String {
    let endpoint_default = Endpoint::of(config)
        .ok()
        .flatten()
        .and_then(|e| e.default_model);
    let default_model = match config.provider_kind() {
        Ok(Provider::OpenAi) => north_llm::openai::DEFAULT_MODEL,
        Ok(Provider::Scripted) => "scripted",
        Ok(Provider::Preset(_) | Provider::Custom) => endpoint_default.as_deref().unwrap_or(""),
        // An unknown provider is refused by `select`; the name is not used.
        Ok(Provider::Anthropic) | Err(_) => north_llm::anthropic::DEFAULT_MODEL,
    };
    let name = config.model.value.as_deref().unwrap_or(default_model);
    catalog::resolve_alias(name).to_string()
}

/// Asks the server at `base_url` for its context window; only servers that
/// are not the providers' own endpoints are asked (those are catalogued).
/// Runs on a thread of its own so it works inside or outside a runtime.
fn discover(base_url: &str, model: &str, key: Option<&ApiKey>) -> Option<north_llm::Discovered> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(north_llm::discover_context_window(
                base_url,
                model,
                key,
                DISCOVERY_TIMEOUT,
            ))
        })
        .join()
        .ok()
        .flatten()
    })
}

/// Whether a local server's reported window may come from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A window reported within the hour is used without asking (sessions).
    Cached,
    /// The server is asked now (`north config`).
    Fresh,
}

/// The context window and output limit of `model` under `config`: the
/// user's `context_window`, else the catalogue's for a model it knows, else
/// what a local server reports (servers other than the providers' own
/// endpoints; remembered for the hour), else a default.
pub fn model_limits(config: &Config, model: &str, probe: Probe) -> ModelLimits {
    let configured = config.context_window.value;
    let Ok(provider) = config.provider_kind() else {
        return ModelLimits::resolve(model, configured, None, DEFAULT_CONTEXT_WINDOW);
    };
    let endpoint = Endpoint::of(config).ok().flatten();
    let (base, key, fallback) = match provider {
        // A hosted preset is not probed (its key goes only to its API); a
        // local one, or a server the user described, may be.
        Provider::Preset(_) | Provider::Custom => (
            endpoint
                .as_ref()
                .filter(|e| e.local)
                .map(|e| e.base_url.as_str()),
            endpoint.as_ref().and_then(|e| e.key().ok().flatten()),
            DEFAULT_CONTEXT_WINDOW,
        ),
        Provider::OpenAi => (
            config
                .openai_base_url
                .value
                .as_deref()
                .filter(|u| !north_llm::openai::is_official(u)),
            key(north_llm::openai::KEY_VAR),
            DEFAULT_CONTEXT_WINDOW,
        ),
        Provider::Scripted => (None, None, SCRIPTED_CONTEXT_WINDOW),
        // An Anthropic key is not sent anywhere but to the Messages API.
        Provider::Anthropic => (
            config
                .anthropic_base_url
                .value
                .as_deref()
                .filter(|u| !u.contains("api.anthropic.com")),
            None,
            DEFAULT_CONTEXT_WINDOW,
        ),
    };
    // A catalogued model's window is known: nothing is asked on the way
    // to the first token.
    let discovered = match (configured, base) {
        (None, Some(url)) if catalog::lookup(model).is_none() => {
            let cached = (probe == Probe::Cached)
                .then(|| crate::windows::cached(url, model))
                .flatten();
            cached.or_else(|| {
                let probing = Probing::start(&format!(
                    "asking {} for the context window of {model} (up to {} s)",
                    without_userinfo(url),
                    DISCOVERY_TIMEOUT.as_secs()
                ));
                let found = discover(url, model, key.as_ref());
                drop(probing);
                if let Some(d) = found {
                    crate::windows::remember(url, model, d);
                }
                found
            })
        }
        _ => None,
    };
    let limits = ModelLimits::resolve(model, configured, discovered, fallback);
    tracing::info!(
        model,
        context_window = limits.context_window,
        max_output_tokens = limits.max_output_tokens,
        source = %limits.source,
        "model limits"
    );
    limits
}

/// Builds the backend the configuration names.
pub fn select(config: &Config, choice: &ModelChoice) -> Result<Selected, RuntimeError> {
    let provider = config.provider.value.as_str();
    let model = model_name(config);
    let backend: Arc<dyn Backend> = match config.provider_kind()? {
        Provider::Preset(_) | Provider::Custom => {
            // A preset or one of the user's providers always has one.
            let endpoint = Endpoint::of(config)?
                .ok_or_else(|| RuntimeError::NoBaseUrl(provider.to_string()))?;
            if model.is_empty() {
                return Err(RuntimeError::NoDefaultModel(provider.to_string()));
            }
            endpoint_backend(&endpoint, config)?
        }
        Provider::OpenAi => Arc::new(OpenAiBackend::new(openai_config(config))?),
        Provider::Scripted => {
            let path = choice.script.as_ref().ok_or(RuntimeError::NoScript)?;
            let mut b = ScriptedBackend::from_file(path)?;
            if let Some(rec) = &choice.record_requests {
                b = b.record_to(rec)?;
            }
            Arc::new(b)
        }
        Provider::Anthropic => {
            let mut cfg = AnthropicConfig {
                api_key: key(north_llm::anthropic::KEY_VAR),
                ..Default::default()
            };
            if let Some(url) = &config.anthropic_base_url.value {
                cfg.base_url = url.clone();
            }
            Arc::new(AnthropicBackend::new(cfg)?)
        }
    };
    // After the backend, so a configuration error is reported before any probe.
    let limits = model_limits(config, &model, Probe::Cached);
    Ok(Selected {
        backend,
        provider: provider.to_string(),
        model,
        limits,
    })
}

/// The OpenAI client's configuration for North's own `openai` provider.
pub fn openai_config(config: &Config) -> OpenAiConfig {
    let mut cfg = OpenAiConfig {
        api_key: key(north_llm::openai::KEY_VAR),
        api: config.openai_api.value,
        ..Default::default()
    };
    if let Some(url) = &config.openai_base_url.value {
        cfg.base_url = url.clone();
    }
    cfg
}

/// The OpenAI client's configuration for a preset or one of the user's
/// providers (one that speaks an OpenAI API).
pub fn endpoint_openai_config(
    endpoint: &Endpoint,
    config: &Config,
) -> Result<OpenAiConfig, RuntimeError> {
    Ok(OpenAiConfig {
        base_url: endpoint.base_url.clone(),
        api_key: endpoint.key()?,
        api: Some(match endpoint.api {
            ProviderApi::Responses => north_llm::OpenAiApi::Responses,
            _ => config
                .openai_api
                .value
                .unwrap_or(north_llm::OpenAiApi::Chat),
        }),
        key_header: endpoint.key_header,
        headers: endpoint.headers.clone(),
        key_var: endpoint
            .key_var
            .clone()
            .map_or(north_llm::openai::KEY_VAR.into(), Into::into),
        ..Default::default()
    })
}

/// The backend for a preset or one of the user's providers.
pub(crate) fn endpoint_backend(
    endpoint: &Endpoint,
    config: &Config,
) -> Result<Arc<dyn Backend>, RuntimeError> {
    Ok(match endpoint.api {
        ProviderApi::Anthropic => Arc::new(AnthropicBackend::new(AnthropicConfig {
            api_key: endpoint.key()?,
            base_url: endpoint.base_url.clone(),
            ..Default::default()
        })?),
        _ => Arc::new(OpenAiBackend::new(endpoint_openai_config(
            endpoint, config,
        )?)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_address_drops_its_credentials() {
        assert_eq!(
            without_userinfo("http://user:secret@127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080/v1"
        );
        assert_eq!(
            without_userinfo("http://127.0.0.1:8080/a@b"),
            "http://127.0.0.1:8080/a@b"
        );
        assert_eq!(without_userinfo("not a url"), "not a url");
    }
}
