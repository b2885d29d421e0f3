//! Providers users already pay for, as presets over the OpenAI-compatible
//! backend: where each lives, which variable holds its key, which API it
//! speaks and which headers it wants. A preset is data; the backend is the
//! one OpenAI client (`OpenAiBackend`), configured.

/// How a preset's key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer KEY` (most providers).
    Bearer,
    /// `api-key: KEY` (Azure OpenAI).
    ApiKey,
}

/// A provider North knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// `--provider NAME`.
    pub name: &'static str,
    /// Its OpenAI-compatible base URL (the version path included).
    pub base_url: &'static str,
    /// The variable holding its key (`None`: a local server, no key).
    pub key_var: Option<&'static str>,
    /// How the key is sent.
    pub key_header: KeyHeader,
    /// Headers it wants on every request.
    pub headers: &'static [(&'static str, &'static str)],
    /// The model used when none is named.
    pub default_model: &'static str,
    /// What the user should know (shown by `north models` and the README).
    pub note: &'static str,
}

/// Every preset, in the order help text lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_var: Some("OPENROUTER_API_KEY"),
        key_header: KeyHeader::Bearer,
        // OpenRouter's app attribution headers.
        headers: &[
            ("http-referer", "https://github.com/north-cli/north"),
            ("x-title", "North"),
        ],
        default_model: "anthropic/claude-sonnet-4.5",
        note: "hundreds of models behind one key; model names are `vendor/model`",
    },
    Preset {
        name: "gemini",
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        key_var: Some("GEMINI_API_KEY"),
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "gemini-2.5-pro",
        note: "Google's OpenAI-compatible endpoint",
    },
    Preset {
        name: "groq",
        base_url: "https://api.groq.com/openai/v1",
        key_var: Some("GROQ_API_KEY"),
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "openai/gpt-oss-120b",
        note: "fast inference of open models",
    },
    Preset {
        name: "deepseek",
        base_url: "https://api.deepseek.com/v1",
        key_var: Some("DEEPSEEK_API_KEY"),
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "deepseek-chat",
        note: "`deepseek-chat` and `deepseek-reasoner`",
    },
    Preset {
        name: "mistral",
        base_url: "https://api.mistral.ai/v1",
        key_var: Some("MISTRAL_API_KEY"),
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "devstral-medium-latest",
        note: "Mistral's API (Devstral for code)",
    },
    Preset {
        name: "xai",
        base_url: "https://api.x.ai/v1",
        key_var: Some("XAI_API_KEY"),
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "grok-code-fast-1",
        note: "xAI's Grok models",
    },
    Preset {
        name: "azure",
        // Azure's v1 API lives under the resource's own host: set it with
        // `"providers": {"azure": {"base_url": "https://RESOURCE.openai.azure.com/openai/v1"}}`.
        base_url: "https://YOUR-RESOURCE.openai.azure.com/openai/v1",
        key_var: Some("AZURE_OPENAI_API_KEY"),
        key_header: KeyHeader::ApiKey,
        headers: &[],
        default_model: "gpt-5.2",
        note: "set your resource's base_url in the user config; the model is your deployment's name",
    },
    Preset {
        name: "ollama",
        base_url: "http://localhost:11434/v1",
        key_var: None,
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "qwen2.5-coder",
        note: "local; no key",
    },
    Preset {
        name: "lmstudio",
        base_url: "http://localhost:1234/v1",
        key_var: None,
        key_header: KeyHeader::Bearer,
        headers: &[],
        default_model: "qwen2.5-coder-7b-instruct",
        note: "local; no key",
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}
