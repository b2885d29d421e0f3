//! The model catalogue: aliases, each known model's context window, output
//! limit and prices, and [`ModelLimits`] — the window and output budget a
//! session works with, whether it came from configuration, the server
//! ([`crate::discovery`]), this catalogue or the fallback default.

use std::fmt;

use north_protocol::Usage;

use crate::discovery::Discovered;

/// Which API family a catalogued model belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Anthropic's Claude models.
    Anthropic,
    /// OpenAI's GPT and o-series models.
    OpenAi,
    /// A model one of the presets serves (`--provider NAME`).
    Preset(&'static str),
}

impl Family {
    /// The `--provider` that serves it.
    pub fn provider(self) -> &'static str {
        match self {
            Family::Anthropic => "anthropic",
            Family::OpenAi => "openai",
            Family::Preset(name) => name,
        }
    }
}

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Input tokens at the normal rate.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
}

/// What North knows about a model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// The provider's model id.
    pub id: &'static str,
    /// Its family.
    pub family: Family,
    /// Context window in tokens (input and output together).
    pub context_window: u64,
    /// Largest output per request, in tokens.
    pub max_output_tokens: u32,
    /// Whether it reasons (extended thinking, reasoning effort).
    pub reasoning: bool,
    /// Whether it takes images.
    pub images: bool,
    /// Its prices.
    pub price: Price,
}

impl ModelInfo {
    /// What `usage` cost, in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let p = &self.price;
        (usage.input_tokens as f64 * p.input
            + usage.output_tokens as f64 * p.output
            + usage.cache_read_input_tokens as f64 * p.cache_read
            + usage.cache_creation_input_tokens as f64 * p.cache_write)
            / 1_000_000.0
    }
}

const fn price(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

const fn claude(id: &'static str, max_output_tokens: u32, price: Price) -> ModelInfo {
    ModelInfo {
        id,
        family: Family::Anthropic,
        context_window: 200_000,
        max_output_tokens,
        reasoning: true,
        images: true,
        price,
    }
}

const fn gpt(
    id: &'static str,
    context_window: u64,
    max_output_tokens: u32,
    reasoning: bool,
    price: Price,
) -> ModelInfo {
    ModelInfo {
        id,
        family: Family::OpenAi,
        context_window,
        max_output_tokens,
        reasoning,
        images: true,
        price,
    }
}

/// A model a preset serves: (window, output limit, reasons, sees images).
const fn served(
    provider: &'static str,
    id: &'static str,
    (context_window, max_output_tokens, reasoning, images): (u64, u32, bool, bool),
    price: Price,
) -> ModelInfo {
    ModelInfo {
        id,
        family: Family::Preset(provider),
        context_window,
        max_output_tokens,
        reasoning,
        images,
        price,
    }
}

/// Models outside the catalogue known to read text only (no image input).
pub const TEXT_ONLY: &[&str] = &["o1-mini", "o3-mini"];

/// Whether `model` takes images: `Some(false)` for one known to read text
/// only, `Some(true)` for a catalogued one that sees images, `None` when
/// North does not know it (the provider decides).
pub fn accepts_images(model: &str) -> Option<bool> {
    let bare = model.rsplit('/').next().unwrap_or(model);
    if TEXT_ONLY
        .iter()
        .any(|m| bare == *m || bare.starts_with(&format!("{m}-")))
    {
        return Some(false);
    }
    lookup(model).map(|m| m.images)
}

/// Every catalogued model. Prices are list prices (standard tier) and
/// change; they are for showing an estimate, never for billing.
pub const MODELS: &[ModelInfo] = &[
    claude("claude-opus-4-5", 64_000, price(5.0, 25.0, 0.5, 6.25)),
    claude("claude-opus-4-1", 32_000, price(15.0, 75.0, 1.5, 18.75)),
    claude("claude-opus-4-0", 32_000, price(15.0, 75.0, 1.5, 18.75)),
    claude("claude-sonnet-4-5", 64_000, price(3.0, 15.0, 0.3, 3.75)),
    claude("claude-sonnet-4-0", 64_000, price(3.0, 15.0, 0.3, 3.75)),
    claude("claude-haiku-4-5", 64_000, price(1.0, 5.0, 0.1, 1.25)),
    gpt(
        "gpt-5.2",
        400_000,
        128_000,
        true,
        price(1.75, 14.0, 0.175, 0.0),
    ),
    gpt(
        "gpt-5.1",
        400_000,
        128_000,
        true,
        price(1.25, 10.0, 0.125, 0.0),
    ),
    gpt(
        "gpt-5.1-codex",
        400_000,
        128_000,
        true,
        price(1.25, 10.0, 0.125, 0.0),
    ),
    gpt(
        "gpt-5.1-codex-mini",
        400_000,
        128_000,
        true,
        price(0.25, 2.0, 0.025, 0.0),
    ),
    gpt(
        "gpt-5",
        400_000,
        128_000,
        true,
        price(1.25, 10.0, 0.125, 0.0),
    ),
    gpt(
        "gpt-5-mini",
        400_000,
        128_000,
        true,
        price(0.25, 2.0, 0.025, 0.0),
    ),
    gpt(
        "gpt-5-nano",
        400_000,
        128_000,
        true,
        price(0.05, 0.4, 0.005, 0.0),
    ),
    gpt(
        "gpt-4.1",
        1_047_576,
        32_768,
        false,
        price(2.0, 8.0, 0.5, 0.0),
    ),
    gpt(
        "gpt-4.1-mini",
        1_047_576,
        32_768,
        false,
        price(0.4, 1.6, 0.1, 0.0),
    ),
    gpt(
        "gpt-4o",
        128_000,
        16_384,
        false,
        price(2.5, 10.0, 1.25, 0.0),
    ),
    gpt(
        "gpt-4o-mini",
        128_000,
        16_384,
        false,
        price(0.15, 0.6, 0.075, 0.0),
    ),
    gpt("o3", 200_000, 100_000, true, price(2.0, 8.0, 0.5, 0.0)),
    gpt(
        "o4-mini",
        200_000,
        100_000,
        true,
        price(1.1, 4.4, 0.275, 0.0),
    ),
    // The presets' models (list prices; OpenRouter's are its own).
    served(
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        (200_000, 64_000, true, true),
        price(3.0, 15.0, 0.3, 3.75),
    ),
    served(
        "openrouter",
        "openai/gpt-5",
        (400_000, 128_000, true, true),
        price(1.25, 10.0, 0.125, 0.0),
    ),
    served(
        "openrouter",
        "google/gemini-2.5-pro",
        (1_048_576, 65_536, true, true),
        price(1.25, 10.0, 0.31, 0.0),
    ),
    served(
        "openrouter",
        "x-ai/grok-code-fast-1",
        (256_000, 10_000, true, false),
        price(0.2, 1.5, 0.02, 0.0),
    ),
    served(
        "gemini",
        "gemini-2.5-pro",
        (1_048_576, 65_536, true, true),
        price(1.25, 10.0, 0.31, 0.0),
    ),
    served(
        "gemini",
        "gemini-2.5-flash",
        (1_048_576, 65_536, true, true),
        price(0.3, 2.5, 0.075, 0.0),
    ),
    served(
        "gemini",
        "gemini-2.5-flash-lite",
        (1_048_576, 65_536, true, true),
        price(0.1, 0.4, 0.025, 0.0),
    ),
    served(
        "groq",
        "llama-3.3-70b-versatile",
        (131_072, 32_768, false, false),
        price(0.59, 0.79, 0.0, 0.0),
    ),
    served(
        "groq",
        "openai/gpt-oss-120b",
        (131_072, 65_536, true, false),
        price(0.15, 0.75, 0.0, 0.0),
    ),
    served(
        "groq",
        "moonshotai/kimi-k2-instruct",
        (131_072, 16_384, false, false),
        price(1.0, 3.0, 0.0, 0.0),
    ),
    served(
        "deepseek",
        "deepseek-chat",
        (131_072, 8_192, false, false),
        price(0.28, 0.42, 0.028, 0.0),
    ),
    served(
        "deepseek",
        "deepseek-reasoner",
        (131_072, 65_536, true, false),
        price(0.28, 0.42, 0.028, 0.0),
    ),
    served(
        "mistral",
        "mistral-large-latest",
        (131_072, 32_768, false, false),
        price(2.0, 6.0, 0.0, 0.0),
    ),
    served(
        "mistral",
        "mistral-medium-latest",
        (131_072, 32_768, false, true),
        price(0.4, 2.0, 0.0, 0.0),
    ),
    served(
        "mistral",
        "codestral-latest",
        (256_000, 32_768, false, false),
        price(0.3, 0.9, 0.0, 0.0),
    ),
    served(
        "mistral",
        "devstral-medium-latest",
        (131_072, 32_768, false, false),
        price(0.4, 2.0, 0.0, 0.0),
    ),
    served(
        "xai",
        "grok-4",
        (256_000, 64_000, true, true),
        price(3.0, 15.0, 0.75, 0.0),
    ),
    served(
        "xai",
        "grok-4-fast",
        (2_000_000, 30_000, true, true),
        price(0.2, 0.5, 0.05, 0.0),
    ),
    served(
        "xai",
        "grok-code-fast-1",
        (256_000, 10_000, true, false),
        price(0.2, 1.5, 0.02, 0.0),
    ),
];

/// Short names for catalogued models.
pub const ALIASES: &[(&str, &str)] = &[
    ("sonnet", "claude-sonnet-4-5"),
    ("sonnet-4.5", "claude-sonnet-4-5"),
    ("sonnet-4", "claude-sonnet-4-0"),
    ("opus", "claude-opus-4-5"),
    ("opus-4.5", "claude-opus-4-5"),
    ("opus-4.1", "claude-opus-4-1"),
    ("haiku", "claude-haiku-4-5"),
    ("haiku-4.5", "claude-haiku-4-5"),
    ("gpt", "gpt-5.2"),
    ("codex", "gpt-5.1-codex"),
];

/// The model id an alias stands for; other names are returned unchanged.
pub fn resolve_alias(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, id)| id)
}

/// A dated snapshot (`claude-sonnet-4-5-20250929`, `gpt-5.2-2025-12-11`)
/// without its date.
fn undated(model: &str) -> &str {
    let bytes = model.as_bytes();
    let strip = |n: usize| &model[..model.len() - n];
    // -YYYYMMDD
    if bytes.len() > 9
        && bytes[bytes.len() - 9] == b'-'
        && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit)
    {
        return strip(9);
    }
    // -YYYY-MM-DD
    let tail = &bytes[bytes.len().saturating_sub(11)..];
    if tail.len() == 11
        && tail[0] == b'-'
        && tail[5] == b'-'
        && tail[8] == b'-'
        && [1, 2, 3, 4, 6, 7, 9, 10]
            .iter()
            .all(|&i| tail[i].is_ascii_digit())
    {
        return strip(11);
    }
    model
}

/// The catalogue entry for `model` (an id, a dated snapshot or an alias).
pub fn lookup(model: &str) -> Option<&'static ModelInfo> {
    let id = undated(resolve_alias(model));
    MODELS.iter().find(|m| m.id == id)
}

/// Whether `model` reasons, by the catalogue or, for names it does not
/// know, by OpenAI's naming (`gpt-5*`, `o1`/`o3`/`o4*`, `*codex*`).
pub fn is_reasoning_model(model: &str) -> bool {
    if let Some(info) = lookup(model) {
        return info.reasoning;
    }
    let m = model.to_ascii_lowercase();
    m.starts_with("gpt-5")
        || m.contains("codex")
        || ["o1", "o3", "o4"]
            .iter()
            .any(|p| m == *p || m.starts_with(&format!("{p}-")))
}

/// The context window assumed when nothing else says (configurable with
/// the `context_window` setting).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;
/// Output tokens per request unless the user asks for another number.
pub const DEFAULT_MAX_TOKENS: u32 = 8_192;

/// Where a session's context window came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitSource {
    /// The user's configuration (`context_window`).
    Config,
    /// The model server said so.
    Server(Discovered),
    /// The model catalogue.
    Catalog,
    /// Nothing said; the default.
    Default,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitSource::Config => f.write_str("configuration"),
            LimitSource::Server(d) => write!(f, "{}", d.source),
            LimitSource::Catalog => f.write_str("model catalogue"),
            LimitSource::Default => f.write_str("default"),
        }
    }
}

/// The context window and output limit a session works with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLimits {
    /// Tokens of input and output together.
    pub context_window: u64,
    /// Largest output per request.
    pub max_output_tokens: u32,
    /// Where the window came from.
    pub source: LimitSource,
}

impl ModelLimits {
    /// Limits for `model`: `configured` (the user's `context_window`) wins,
    /// then what the server said, then the catalogue, then `fallback`.
    pub fn resolve(
        model: &str,
        configured: Option<u64>,
        discovered: Option<Discovered>,
        fallback: u64,
    ) -> ModelLimits {
        let info = lookup(model);
        let (context_window, source) = match (configured, discovered, info) {
            (Some(w), _, _) => (w, LimitSource::Config),
            (None, Some(d), _) => (d.context_window, LimitSource::Server(d)),
            (None, None, Some(i)) => (i.context_window, LimitSource::Catalog),
            (None, None, None) => (fallback, LimitSource::Default),
        };
        let context_window = context_window.max(1);
        let max_output_tokens = info.map_or(u32::MAX, |i| i.max_output_tokens);
        ModelLimits {
            context_window,
            max_output_tokens: max_output_tokens
                .min(u32::try_from(context_window).unwrap_or(u32::MAX)),
            source,
        }
    }

    /// Output tokens per request. `requested` (the user's `--max-tokens`)
    /// is honoured up to the model's output limit and half the window; the
    /// default is [`DEFAULT_MAX_TOKENS`], at most a quarter of the window,
    /// so a small window keeps room for the conversation.
    pub fn max_tokens(&self, requested: Option<u32>) -> u32 {
        let window = u32::try_from(self.context_window).unwrap_or(u32::MAX);
        let wanted = match requested {
            Some(n) => n.min(window / 2),
            None => DEFAULT_MAX_TOKENS.min(window / 4),
        };
        wanted.min(self.max_output_tokens).max(1)
    }

    /// Input tokens a request may use when `max_tokens` are kept for output.
    pub fn input_budget(&self, max_tokens: u32) -> u64 {
        self.context_window.saturating_sub(u64::from(max_tokens))
    }
}

#[cfg(test)]
mod tests;
