//! Where a named provider lives — a preset, with the user's overrides, or
//! one of the user's own `providers` — resolved into what a backend needs:
//! base URL, API, the variable holding the key, how it is sent, headers.

use north_config::{Config, Provider, ProviderApi};
use north_llm::{ApiKey, KeyHeader};

use crate::RuntimeError;

/// A provider other than North's own, resolved.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `--provider NAME`.
    pub name: String,
    /// Base URL, the version path included.
    pub base_url: String,
    /// The API it speaks.
    pub api: ProviderApi,
    /// The variable holding its key (`None`: a local server).
    pub key_var: Option<String>,
    /// How the key is sent.
    pub key_header: KeyHeader,
    /// Headers for every request.
    pub headers: Vec<(String, String)>,
    /// The model used when none is named.
    pub default_model: Option<String>,
    /// Models the user listed for it.
    pub models: Vec<String>,
    /// A server of the user's own (no key, or one they described): its
    /// context window may be asked for.
    pub local: bool,
}

impl Endpoint {
    /// The endpoint `config` names, when it names a preset or one of the
    /// user's providers; `None` for North's own providers.
    pub fn of(config: &Config) -> Result<Option<Endpoint>, RuntimeError> {
        let name = config.provider.value.as_str();
        let user = config.providers.get(name).cloned().unwrap_or_default();
        let headers = |base: &[(&str, &str)]| -> Vec<(String, String)> {
            let mut out: Vec<(String, String)> = base
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            for (k, v) in user.headers.clone().unwrap_or_default() {
                out.retain(|(old, _)| !old.eq_ignore_ascii_case(&k));
                out.push((k, v));
            }
            out
        };
        let models = user.models.clone().unwrap_or_default();
        Ok(match config.provider_kind()? {
            Provider::Anthropic | Provider::OpenAi | Provider::Scripted => None,
            Provider::Preset(p) => Some(Endpoint {
                name: name.to_string(),
                base_url: user.base_url.clone().unwrap_or_else(|| p.base_url.into()),
                api: user.api.unwrap_or(ProviderApi::Chat),
                key_var: user
                    .api_key_env
                    .clone()
                    .or_else(|| p.key_var.map(str::to_string)),
                key_header: p.key_header,
                headers: headers(p.headers),
                default_model: models
                    .first()
                    .cloned()
                    .or_else(|| Some(p.default_model.to_string())),
                models,
                local: p.key_var.is_none(),
            }),
            Provider::Custom => Some(Endpoint {
                name: name.to_string(),
                base_url: user
                    .base_url
                    .clone()
                    .ok_or_else(|| RuntimeError::NoBaseUrl(name.to_string()))?,
                api: user.api.unwrap_or(ProviderApi::Chat),
                key_var: user.api_key_env.clone(),
                key_header: KeyHeader::Bearer,
                headers: headers(&[]),
                default_model: models.first().cloned(),
                models,
                local: true,
            }),
        })
    }

    /// Its key, or an error naming the variable to set.
    pub fn key(&self) -> Result<Option<ApiKey>, RuntimeError> {
        let Some(var) = &self.key_var else {
            return Ok(None);
        };
        match ApiKey::from_env(var) {
            Some(key) => Ok(Some(key)),
            None => Err(RuntimeError::MissingKey {
                provider: self.name.clone(),
                var: var.clone(),
            }),
        }
    }
}
