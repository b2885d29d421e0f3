//! Picking a real model provider from the process environment.

use std::sync::Arc;

use north_llm::{AnthropicBackend, AnthropicConfig, Backend, OpenAiBackend, OpenAiConfig};

use crate::env::Configuration;

/// A backend and configuration from the environment variables: OpenAI
/// (`gpt-5.2`) when `OPENAI_API_KEY` is set, else Anthropic (its default
/// model) when `ANTHROPIC_API_KEY` is set, else `None`. `NORTH_NATURAL_MODEL`
/// overrides the model name.
pub fn backend_from_env() -> Option<(Arc<dyn Backend>, Configuration)> {
    let set = |name: &str| north_llm::env_setting(name).is_some();
    let (backend, model): (Arc<dyn Backend>, &str) = if set("OPENAI_API_KEY") {
        (
            Arc::new(OpenAiBackend::new(OpenAiConfig::from_env()).ok()?),
            north_llm::openai::DEFAULT_MODEL,
        )
    } else if set("ANTHROPIC_API_KEY") {
        (
            Arc::new(AnthropicBackend::new(AnthropicConfig::from_env()).ok()?),
            north_llm::anthropic::DEFAULT_MODEL,
        )
    } else {
        return None;
    };
    let model = north_llm::env_setting("NORTH_NATURAL_MODEL").unwrap_or_else(|| model.to_owned());
    Some((backend, Configuration::with_model(model)))
}
