//! API keys that never print.

use std::fmt;

/// A provider API key. `Debug` and `Display` print `[REDACTED]`; the value
/// is only reachable through [`ApiKey::expose`], used when building headers.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key. Surrounding whitespace (common in copied keys) is trimmed.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into().trim().to_string())
    }

    /// The key in environment variable `var`, if set and not blank.
    pub fn from_env(var: &str) -> Option<ApiKey> {
        env_setting(var).map(ApiKey::new)
    }

    /// The raw key, for an HTTP header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of this key in `text` with `[REDACTED]`.
    /// Servers sometimes echo the key in error messages.
    pub fn scrub(&self, text: &str) -> String {
        scrub_secret(text, &self.0)
    }
}

/// The value of environment variable `var`, if set and not blank (from
/// the in-memory vault when the process sealed its environment).
pub fn env_setting(var: &str) -> Option<String> {
    north_secrets::var(var)
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().to_string())
}

/// Replaces occurrences of `secret` (when non-trivial) in `text`.
pub fn scrub_secret(text: &str, secret: &str) -> String {
    if secret.len() < 4 {
        return text.to_string();
    }
    text.replace(secret, "[REDACTED]")
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([REDACTED])")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_never_formats() {
        let k = ApiKey::new(" sk-secret-123 ");
        assert_eq!(format!("{k} {k:?}"), "[REDACTED] ApiKey([REDACTED])");
        assert_eq!(k.expose(), "sk-secret-123");
        assert_eq!(k.scrub("bad key sk-secret-123!"), "bad key [REDACTED]!");
    }
}
