//! Choosing and building a model backend from flags and environment.

use std::sync::Arc;

use anyhow::Context;
use north_llm::{
    AnthropicBackend, AnthropicConfig, Backend, OpenAiBackend, OpenAiConfig, ScriptedBackend,
};

use crate::cli::{ExecArgs, ProviderName};

/// A backend ready to use, with the provider and model it answers as.
pub struct Selected {
    /// The backend.
    pub backend: Arc<dyn Backend>,
    /// Provider name.
    pub provider: ProviderName,
    /// Model name.
    pub model: String,
}

/// Builds the backend `args` ask for.
pub fn select(args: &ExecArgs) -> anyhow::Result<Selected> {
    let provider = args.provider.unwrap_or(if args.script.is_some() {
        ProviderName::Scripted
    } else {
        ProviderName::Anthropic
    });
    let (backend, default_model): (Arc<dyn Backend>, &str) = match provider {
        ProviderName::Anthropic => (
            Arc::new(AnthropicBackend::new(AnthropicConfig::from_env())?),
            north_llm::anthropic::DEFAULT_MODEL,
        ),
        ProviderName::Openai => (
            Arc::new(OpenAiBackend::new(OpenAiConfig::from_env())?),
            north_llm::openai::DEFAULT_MODEL,
        ),
        ProviderName::Scripted => {
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
    };
    Ok(Selected {
        backend,
        provider,
        model: args
            .model
            .clone()
            .unwrap_or_else(|| default_model.to_string()),
    })
}
