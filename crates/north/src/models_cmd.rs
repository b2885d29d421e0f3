//! `north models [--provider P]`: the models a provider offers — its
//! `/models` list where it has one, with the catalogue's, the preset's
//! default and the ones your config lists.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use north_config::{Config, Overrides, Provider, global_config_path};
use north_llm::catalog::{self, Family};

use north_runtime::Endpoint;

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
    let default = north_runtime::provider::model_name(&config);
    let (mut models, served) = known_models(&config)?;
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

/// The models North knows for the configured provider without asking it
/// (the catalogue's, the config's, the default), and the client that can
/// ask it for its `/models` list (None: a provider without one).
fn known_models(
    config: &Config,
) -> anyhow::Result<(Vec<String>, Option<north_llm::OpenAiBackend>)> {
    let provider = config.provider.value.clone();
    let mut models: Vec<String> = Vec::new();
    let served = match config.provider_kind()? {
        Provider::Scripted => None,
        Provider::Anthropic => {
            models.extend(family(Family::Anthropic));
            None
        }
        Provider::OpenAi => {
            models.extend(family(Family::OpenAi));
            let cfg = north_runtime::provider::openai_config(config);
            Some(north_llm::OpenAiBackend::new(cfg)?)
        }
        Provider::Preset(_) | Provider::Custom => {
            let endpoint = Endpoint::of(config)?
                .context("internal: a preset or custom provider without an endpoint")?;
            models.extend(endpoint.models.iter().cloned());
            // The catalogue's models of a preset (or of a preset a custom
            // entry overrides).
            if let Ok(Provider::Preset(preset)) = Provider::parse(&provider) {
                models.extend(family(Family::Preset(preset.name)));
            }
            models.extend(endpoint.default_model.clone());
            // An Anthropic-compatible server is listed from the config only.
            (endpoint.api != north_config::ProviderApi::Anthropic)
                .then(|| {
                    let cfg = north_runtime::provider::endpoint_openai_config(&endpoint, config)?;
                    anyhow::Ok(north_llm::OpenAiBackend::new(cfg)?)
                })
                .transpose()?
        }
    };
    Ok((models, served))
}

/// What `/model` completes from in the TUI: what `north models` lists. The
/// provider's `/models` list is asked for once, in the background, the
/// first time completion wants it (never at start-up); until it arrives,
/// and if it fails, the known models serve.
pub fn model_lister(config: &Config) -> north_tui::ModelLister {
    use std::sync::{Arc, Mutex};
    struct State {
        config: Option<Config>,
        known: Vec<String>,
    }
    let state = Arc::new(Mutex::new(State {
        config: Some(config.clone()),
        known: Vec::new(),
    }));
    north_tui::ModelLister::new(Arc::new(move || {
        let Ok(mut s) = state.lock() else {
            return Vec::new();
        };
        // The first call: what is known now, and the provider asked once.
        if let Some(config) = s.config.take()
            && let Ok((known, served)) = known_models(&config)
        {
            s.known = known;
            if let Some(backend) = served {
                let state = Arc::clone(&state);
                std::thread::spawn(move || {
                    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    else {
                        return;
                    };
                    let fetched = runtime.block_on(async {
                        tokio::time::timeout(std::time::Duration::from_secs(10), backend.models())
                            .await
                    });
                    if let (Ok(Ok(ids)), Ok(mut s)) = (fetched, state.lock()) {
                        for id in ids {
                            if !s.known.contains(&id) {
                                s.known.push(id);
                            }
                        }
                    }
                });
            }
        }
        s.known.clone()
    }))
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
