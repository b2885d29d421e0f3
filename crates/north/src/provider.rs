//! Choosing and building a model backend from the effective configuration.

use std::sync::Arc;

use anyhow::Context;
use north_agent::config::Config;
use north_llm::{
    AnthropicBackend, AnthropicConfig, ApiKey, Backend, OpenAiBackend, OpenAiConfig,
    ScriptedBackend,
};

use crate::cli::ModelArgs;

/// A backend ready to use, with the provider and model it answers as.
pub struct Selected {
    /// The backend.
    pub backend: Arc<dyn Backend>,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
}

fn key(var: &str) -> Option<ApiKey> {
    ApiKey::from_env(var)
}

/// Builds the backend the configuration names.
pub fn select(config: &Config, args: &ModelArgs) -> anyhow::Result<Selected> {
    let provider = config.provider.value.as_str();
    let (backend, default_model): (Arc<dyn Backend>, &str) = match provider {
        "openai" => {
            let mut cfg = OpenAiConfig {
                api_key: key("OPENAI_API_KEY"),
                ..Default::default()
            };
            if let Some(url) = &config.openai_base_url.value {
                cfg.base_url = url.clone();
            }
            (
                Arc::new(OpenAiBackend::new(cfg)?),
                north_llm::openai::DEFAULT_MODEL,
            )
        }
        "scripted" => {
            let path = args
                .script
                .as_ref()
                .context("the scripted provider needs --script FILE")?;
            let mut b = ScriptedBackend::from_file(path)?;
            if let Some(rec) = &args.record_requests {
                b = b.record_to(rec)?;
            }
            (Arc::new(b), "scripted")
        }
        _ => {
            let mut cfg = AnthropicConfig {
                api_key: key("ANTHROPIC_API_KEY"),
                ..Default::default()
            };
            if let Some(url) = &config.anthropic_base_url.value {
                cfg.base_url = url.clone();
            }
            (
                Arc::new(AnthropicBackend::new(cfg)?),
                north_llm::anthropic::DEFAULT_MODEL,
            )
        }
    };
    Ok(Selected {
        backend,
        provider: provider.to_string(),
        model: config
            .model
            .value
            .clone()
            .unwrap_or_else(|| default_model.to_string()),
    })
}
