use super::*;

#[test]
fn every_keyed_preset_default_model_is_catalogued_under_its_preset() {
    for preset in crate::PRESETS
        .iter()
        .filter(|p| p.key_var.is_some() && p.name != "azure")
    {
        let info = lookup(preset.default_model)
            .unwrap_or_else(|| panic!("{}: {} not catalogued", preset.name, preset.default_model));
        assert_eq!(info.family, Family::Preset(preset.name), "{}", preset.name);
        assert!(
            info.context_window > 0 && info.price.input > 0.0,
            "{}",
            preset.name
        );
    }
    assert_eq!(accepts_images("deepseek-chat"), Some(false));
    assert_eq!(accepts_images("gemini-2.5-pro"), Some(true));
    assert_eq!(accepts_images("o3-mini"), Some(false));
    assert_eq!(accepts_images("some-local-model"), None);
    assert_eq!(Family::Preset("groq").provider(), "groq");
}

#[test]
fn aliases_and_dated_snapshots_resolve() {
    assert_eq!(resolve_alias("sonnet"), "claude-sonnet-4-5");
    assert_eq!(resolve_alias("sonnet-4.5"), "claude-sonnet-4-5");
    assert_eq!(resolve_alias("qwen2.5-coder"), "qwen2.5-coder");
    assert_eq!(
        lookup("claude-sonnet-4-5-20250929").map(|m| m.id),
        Some("claude-sonnet-4-5")
    );
    assert_eq!(lookup("gpt-5.2-2025-12-11").map(|m| m.id), Some("gpt-5.2"));
    assert_eq!(lookup("opus").map(|m| m.max_output_tokens), Some(64_000));
    assert!(lookup("smollm2").is_none());
    for (alias, id) in ALIASES {
        assert!(lookup(alias).is_some_and(|m| m.id == *id), "{alias}");
    }
}

#[test]
fn reasoning_models_are_known_by_catalogue_or_name() {
    assert!(is_reasoning_model("gpt-5.2"));
    assert!(is_reasoning_model("o3-pro"));
    assert!(is_reasoning_model("gpt-5.3-codex"));
    assert!(!is_reasoning_model("gpt-4.1"));
    assert!(!is_reasoning_model("qwen2.5-coder"));
    assert!(!is_reasoning_model("o1x"));
}

#[test]
fn cost_uses_each_token_kind() {
    let m = lookup("sonnet").unwrap();
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 100_000,
        cache_read_input_tokens: 1_000_000,
        ..Default::default()
    };
    assert!((m.cost(&usage) - (3.0 + 1.5 + 0.3)).abs() < 1e-9);
}

#[test]
fn limits_follow_the_window() {
    let small = ModelLimits::resolve("smollm2", Some(8_192), None, DEFAULT_CONTEXT_WINDOW);
    assert_eq!(small.source, LimitSource::Config);
    assert_eq!(small.max_tokens(None), 2_048);
    assert_eq!(small.max_tokens(Some(64)), 64);
    assert_eq!(small.max_tokens(Some(100_000)), 4_096);
    assert_eq!(small.input_budget(2_048), 6_144);
    let claude = ModelLimits::resolve("sonnet", None, None, DEFAULT_CONTEXT_WINDOW);
    assert_eq!(
        (claude.context_window, claude.source.clone()),
        (200_000, LimitSource::Catalog)
    );
    assert_eq!(claude.max_tokens(None), 8_192);
    assert_eq!(claude.max_tokens(Some(100_000)), 64_000);
    let unknown = ModelLimits::resolve("mystery", None, None, 16_000);
    assert_eq!(
        (unknown.context_window, unknown.source),
        (16_000, LimitSource::Default)
    );
}
