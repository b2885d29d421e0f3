//! Scrubbing secrets out of anything North writes or shows.

use std::borrow::Cow;

/// Known secret values (API keys, tokens) to replace with `[REDACTED]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

/// Whether an environment variable name looks like it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("_KEY")
        || n.ends_with("_API_KEY")
        || n.contains("TOKEN")
        || n.contains("SECRET")
        || n.contains("PASSWORD")
        || n.contains("CREDENTIAL")
        || n.starts_with("ANTHROPIC_API")
        || n.starts_with("OPENAI_API")
}

impl Redactor {
    /// Collects the values of secret-looking variables from the environment.
    pub fn from_env() -> Self {
        let mut r = Redactor::default();
        for (k, v) in std::env::vars() {
            if is_secret_name(&k) {
                r.add(&v);
            }
        }
        r
    }

    /// Adds a secret (ignored when too short to be one).
    pub fn add(&mut self, secret: &str) {
        let s = secret.trim();
        if s.len() >= 8 && !self.secrets.iter().any(|x| x == s) {
            self.secrets.push(s.to_string());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Whether any secret is known.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `event` with every known secret replaced in all its strings.
    pub fn scrub_event(&self, event: north_protocol::Event) -> north_protocol::Event {
        if self.secrets.is_empty() {
            return event;
        }
        let Ok(text) = serde_json::to_string(&event) else {
            return event;
        };
        match self.scrub(&text) {
            std::borrow::Cow::Borrowed(_) => event,
            std::borrow::Cow::Owned(clean) => serde_json::from_str(&clean).unwrap_or(event),
        }
    }

    /// `text` with every known secret replaced.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.secrets.iter().any(|s| text.contains(s.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for s in &self.secrets {
            out = out.replace(s.as_str(), "[REDACTED]");
        }
        Cow::Owned(out)
    }
}
