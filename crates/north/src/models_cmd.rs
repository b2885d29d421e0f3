//! `north models [--provider P]`: the models a provider offers — its
//! `/models` list where it has one, with the catalogue's, the preset's
//! default and the ones your config lists.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use north_agent::config::{Config, Overrides, Provider, global_config_path};
use north_llm::catalog::{self, Family};

use crate::endpoint::Endpoint;

/// `north models` options.
#[derive(Debug, Clone, Args)]
pub struct ModelsArgs {
    /// The provider [default: the configured one].
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// Project root [default: the git root above the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// Runs `north models`.
pub fn main(args: ModelsArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = north_tools::repo::resolve_root(args.path.as_deref(), &cwd)?;
    let overrides = Overrides {
        provider: args.provider.clone(),
        ..Overrides::default()
    };
    // Listing widens nothing: the project's own settings count only where
    // they narrow.
    let config = Config::load(
        &root,
        global_config_path().as_deref(),
        north_secrets::var,
        &overrides,
        false,
    )?;
    let provider = config.provider.value.clone();
    let default = crate::provider::model_name(&config);
    let mut models: Vec<String> = Vec::new();
    let served = match config.provider_kind()? {
        Provider::Scripted => None,
        Provider::Anthropic => {
            models.extend(family(Family::Anthropic));
            None
        }
        Provider::OpenAi => {
            models.extend(family(Family::OpenAi));
            let cfg = crate::provider::openai_config(&config);
            Some(north_llm::OpenAiBackend::new(cfg)?)
        }
        Provider::Preset(_) | Provider::Custom => {
            let endpoint = Endpoint::of(&config)?
                .context("internal: a preset or custom provider without an endpoint")?;
            models.extend(endpoint.models.iter().cloned());
            // The catalogue's models of a preset (or of a preset a custom
            // entry overrides).
            if let Ok(Provider::Preset(preset)) = Provider::parse(&provider) {
                models.extend(family(Family::Preset(preset.name)));
            }
            models.extend(endpoint.default_model.clone());
            // An Anthropic-compatible server is listed from the config only.
            (endpoint.api != north_agent::config::ProviderApi::Anthropic)
                .then(|| {
                    let cfg = crate::provider::endpoint_openai_config(&endpoint, &config)?;
                    anyhow::Ok(north_llm::OpenAiBackend::new(cfg)?)
                })
                .transpose()?
        }
    };
    if let Some(backend) = served {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        match runtime.block_on(backend.models()) {
            Ok(ids) => models.extend(ids),
            Err(e) => eprintln!("north: could not list {provider}'s models: {e}"),
        }
    }
    models.sort();
    models.dedup();
    if models.is_empty() {
        println!("no models known for {provider}");
    }
    for m in models {
        let mark = if m == default { "  (default)" } else { "" };
        match catalog::lookup(&m) {
            Some(info) => println!("{m}{mark}  {}", about(info)),
            None => println!("{m}{mark}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What the catalogue says of a model: window, prices, what it takes.
fn about(info: &catalog::ModelInfo) -> String {
    let mut parts = vec![format!("{}k context", info.context_window / 1000)];
    if info.price.input > 0.0 || info.price.output > 0.0 {
        parts.push(format!(
            "${}/${} per Mtok in/out",
            info.price.input, info.price.output
        ));
    }
    if info.images {
        parts.push("images".into());
    }
    if info.reasoning {
        parts.push("reasoning".into());
    }
    format!("· {}", parts.join(" · "))
}

fn family(family: Family) -> impl Iterator<Item = String> {
    catalog::MODELS
        .iter()
        .filter(move |m| m.family == family)
        .map(|m| m.id.to_string())
}
