//! The process's secrets: API keys and tokens live in memory, never in the
//! environment.
//!
//! A child process inherits its parent's environment unless the code that
//! starts it remembers to clear it, and every path that starts one (a
//! library's `Command::new`, a helper's `git`) would have to remember.
//! So North removes secrets from its own environment at start-up instead:
//! [`seal_environment`] moves every secret-looking variable into a
//! process-global vault and unsets it; [`var`] reads a setting from the
//! vault first, then from the environment. No child of a sealed process can
//! inherit a key, whichever path started it.
//!
//! Main items: [`seal_environment`], [`var`], [`credentials`],
//! [`is_secret_name`] (what is withheld from children) and
//! [`is_credential_name`] (whose values are redacted from output).
//!
//! This crate must stay dependency-free; it never prints a secret and has
//! no `Debug` view of the vault's values.

use std::collections::BTreeMap;
use std::sync::OnceLock;

static VAULT: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// Whether a variable name looks like it holds a secret or where secrets
/// are sent (`*_BASE_URL` of a provider): such variables are withheld from
/// every child process. Checked even for allowlisted names, so a widened
/// allowlist cannot let a key through.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const PREFIXES: &[&str] = &["ANTHROPIC_", "OPENAI_", "AWS_", "AZURE_", "GOOGLE_", "GCP_"];
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "PRIVATE",
        "SESSION",
        "COOKIE",
        "AUTH",
    ];
    upper.ends_with("_KEY")
        || upper == "KEY"
        || upper.contains("_KEY_")
        || upper.contains("APIKEY")
        || upper.contains("API_KEY")
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || PARTS.iter().any(|p| upper.contains(p))
}

/// Whether a variable's *value* is a credential to redact wherever North
/// shows or sends text (a key, a token, a password), as opposed to a
/// setting that is merely withheld from children (a base URL, a socket).
pub fn is_credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("_KEY")
        || n.contains("API_KEY")
        || n.contains("APIKEY")
        || n.contains("TOKEN")
        || n.contains("SECRET")
        || n.contains("PASSWORD")
        || n.contains("PASSWD")
        || n.contains("CREDENTIAL")
}

/// What [`seal_environment`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sealed {
    /// Variables moved into the vault and removed from the environment.
    pub moved: usize,
}

/// Moves every secret-looking variable ([`is_secret_name`]) from the
/// environment into the vault and unsets it. Later calls do nothing.
///
/// # Safety
///
/// Changes the process environment: call it while the process is
/// single-threaded (the first statement of `main`), like
/// [`std::env::remove_var`].
pub unsafe fn seal_environment() -> Sealed {
    if VAULT.get().is_some() {
        return Sealed::default();
    }
    let mut vault = BTreeMap::new();
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if is_secret_name(name) {
            vault.insert(name.to_owned(), value.to_owned());
        }
    }
    // A secret that is not UTF-8 is not one North can use; it still must
    // not reach a child.
    let names: Vec<std::ffi::OsString> = std::env::vars_os()
        .map(|(n, _)| n)
        .filter(|n| n.to_str().is_none_or(is_secret_name))
        .collect();
    for name in &names {
        // SAFETY: the caller guarantees no other thread reads or writes
        // the environment meanwhile.
        unsafe { std::env::remove_var(name) };
    }
    let moved = names.len();
    let _ = VAULT.set(vault);
    Sealed { moved }
}

/// The setting `name`: from the vault when the environment was sealed,
/// else from the environment (a library user that never sealed).
pub fn var(name: &str) -> Option<String> {
    if let Some(value) = VAULT.get().and_then(|v| v.get(name)) {
        return Some(value.clone());
    }
    std::env::var(name).ok()
}

/// The values of every credential North knows of ([`is_credential_name`]),
/// sealed or still in the environment, for redaction.
pub fn credentials() -> Vec<String> {
    let mut out: Vec<String> = VAULT
        .get()
        .into_iter()
        .flat_map(|v| v.iter())
        .filter(|(k, _)| is_credential_name(k))
        .map(|(_, v)| v.clone())
        .collect();
    out.extend(
        std::env::vars()
            .filter(|(k, _)| is_credential_name(k))
            .map(|(_, v)| v),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised() {
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "SSH_AUTH_SOCK",
            "MY_SERVICE_KEY",
            "STRIPE_APIKEY",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "TERM", "KEYBOARD_LAYOUT"] {
            assert!(!is_secret_name(name), "{name}");
        }
        assert!(is_credential_name("ANTHROPIC_API_KEY"));
        assert!(is_credential_name("GITHUB_TOKEN"));
        assert!(!is_credential_name("OPENAI_BASE_URL"));
        assert!(!is_credential_name("SSH_AUTH_SOCK"));
    }

    #[test]
    fn sealing_moves_secrets_out_of_the_environment() {
        // SAFETY: this test binary's other test does not touch the
        // environment, and this is the only test that changes it.
        unsafe {
            std::env::set_var("NORTH_SECRETS_TEST_API_KEY", "sk-test-123456");
            std::env::set_var("NORTH_SECRETS_TEST_PLAIN", "visible");
            let sealed = seal_environment();
            assert!(sealed.moved >= 1);
        }
        assert!(std::env::var_os("NORTH_SECRETS_TEST_API_KEY").is_none());
        assert_eq!(
            var("NORTH_SECRETS_TEST_API_KEY").as_deref(),
            Some("sk-test-123456")
        );
        assert_eq!(var("NORTH_SECRETS_TEST_PLAIN").as_deref(), Some("visible"));
        assert!(credentials().iter().any(|c| c == "sk-test-123456"));
        let child = std::process::Command::new("env")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        assert!(!child.contains("sk-test-123456"), "{child}");
    }
}
