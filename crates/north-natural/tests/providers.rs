//! `backend_from_env`: which provider and model the process environment
//! selects. Building a backend opens no connection, and both base URLs point
//! at 127.0.0.1 in case one ever did.
//!
//! One test in this binary: it changes the process's environment, which
//! must not race with another test reading it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;

use north_natural::backend_from_env;

/// Every variable `backend_from_env` reads.
const VARS: [&str; 5] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "NORTH_NATURAL_MODEL",
];

/// Clears [`VARS`] and gives them back their values when dropped, so a
/// developer's real keys are neither used nor lost.
struct EnvGuard {
    saved: Vec<(&'static str, Option<OsString>)>,
}

impl EnvGuard {
    fn clear() -> Self {
        let saved = VARS.iter().map(|v| (*v, std::env::var_os(v))).collect();
        for var in VARS {
            set(var, None);
        }
        EnvGuard { saved }
    }
}

impl Drop for EnvGuard {
    fn drop(&mut self) {
        for (var, value) in self.saved.drain(..) {
            set(var, value.as_deref().and_then(|v| v.to_str()));
        }
    }
}

fn set(var: &str, value: Option<&str>) {
    // SAFETY: this is the only test in this binary, so no other thread reads
    // or writes the environment while it changes.
    unsafe {
        match value {
            Some(v) => std::env::set_var(var, v),
            None => std::env::remove_var(var),
        }
    }
}

/// The provider and model `backend_from_env` picks, if any.
fn picked() -> Option<(&'static str, String)> {
    backend_from_env().map(|(backend, configuration)| (backend.provider(), configuration.model))
}

#[test]
fn backend_from_env_prefers_openai_then_anthropic_and_honours_the_model_override() {
    let _guard = EnvGuard::clear();
    set("OPENAI_BASE_URL", Some("http://127.0.0.1:9/v1"));
    set("ANTHROPIC_BASE_URL", Some("http://127.0.0.1:9"));

    assert_eq!(picked(), None, "no key: no backend");
    set("OPENAI_API_KEY", Some("   "));
    assert_eq!(picked(), None, "a blank key counts as unset");

    set("ANTHROPIC_API_KEY", Some("sk-ant-test"));
    assert_eq!(
        picked(),
        Some(("anthropic", north_llm::anthropic::DEFAULT_MODEL.to_owned()))
    );

    set("OPENAI_API_KEY", Some("sk-test"));
    assert_eq!(
        picked(),
        Some(("openai", "gpt-5.2".to_owned())),
        "OpenAI wins when both keys are set, with the spec's model"
    );

    set("NORTH_NATURAL_MODEL", Some("gpt-test"));
    assert_eq!(picked(), Some(("openai", "gpt-test".to_owned())));
    set("OPENAI_API_KEY", None);
    assert_eq!(picked(), Some(("anthropic", "gpt-test".to_owned())));

    // The rest of the configuration is the default one.
    let (_, configuration) = backend_from_env().unwrap();
    assert_eq!(
        configuration,
        north_natural::Configuration::with_model("gpt-test")
    );
}
