//! Building environments: the four fields the spec requires (configuration,
//! workspace root, backend, memory) are all given to the builder, and reach
//! the blocks and tools; the stub convenience uses the test defaults.

use std::path::Path;
use std::sync::Arc;

use north_natural::{
    Configuration, Envelope, Environment, EnvironmentOverride, Error, Memory, StubBackend, Tool,
    environment, environment_override_sync, environment_sync, get_environment, natural,
};
use serde_json::json;

use crate::{Notes, Recorder, Sentiment};

#[natural]
async fn where_am_i() -> north_natural::Result<()> {
    "natural
    Say where the workspace is.
    ";
    Ok(())
}

#[tokio::test]
async fn every_field_given_to_the_builder_reaches_the_block() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()
        .call("workspace", json!({}))
        .bind("memory.count", 2)]));
    let memory = Memory::new(Notes::default()).unwrap();
    let env = Environment::builder()
        .memory(&memory)
        .backend(recorder.clone())
        .workspace_root("/srv/repo")
        .configuration(Configuration::with_model("built-model"))
        .build();
    assert_eq!(env.configuration().model, "built-model");
    assert_eq!(env.workspace_root(), Path::new("/srv/repo"));
    assert_eq!(env.backend().provider(), "stub");
    assert!(env.memory().type_name().ends_with("Notes"));
    env.register_tool(Tool::from_fn(
        "workspace",
        "The workspace root.",
        json!({"type": "object"}),
        |ctx, _| Ok(json!(ctx.workspace_root())),
    ))
    .unwrap();

    environment(env, where_am_i()).await.unwrap();
    assert_eq!(recorder.requests()[0].model, "built-model");
    assert_eq!(
        recorder.tool_results()[1].0,
        r#"{"ok":true,"output":"/srv/repo","error":null}"#
    );
    assert_eq!(memory.get().count, 2);
}

#[tokio::test]
async fn setting_a_field_again_replaces_it() {
    let env = Environment::builder()
        .configuration(Configuration::with_model("first"))
        .workspace_root("/a")
        .backend(Arc::new(StubBackend::new([])))
        .memory(Memory::none())
        .configuration(Configuration::with_model("second"))
        .workspace_root("/b")
        .build();
    assert_eq!(env.configuration().model, "second");
    assert_eq!(env.workspace_root(), Path::new("/b"));
}

#[tokio::test]
async fn the_stub_environment_uses_the_test_defaults() {
    let env = Environment::stub(StubBackend::new([]));
    assert_eq!(env.configuration(), &Configuration::default());
    assert_eq!(env.workspace_root(), Path::new("."));
    assert_eq!(env.memory().json(), json!({}));
    assert_eq!(Memory::none().json(), json!({}));
}

#[tokio::test]
async fn the_default_configuration_is_gpt_5_2_with_the_documented_limits() {
    let defaults = Configuration::default();
    assert_eq!(
        defaults,
        Configuration {
            model: "gpt-5.2".to_owned(),
            max_steps: 16,
            max_tool_failures: 3,
            locals_summary_limit: 10_000,
            memory_summary_limit: 4_000,
            max_tokens: 4096,
        }
    );
    assert_eq!(
        Configuration::with_model("other"),
        Configuration {
            model: "other".to_owned(),
            ..defaults
        }
    );
    // The stub environment sends that model name with each request.
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    let env = Environment::builder()
        .configuration(Configuration::default())
        .workspace_root(".")
        .backend(recorder.clone())
        .memory(Memory::none())
        .build();
    environment(env, where_am_i()).await.unwrap();
    assert_eq!(recorder.requests()[0].model, "gpt-5.2");
}

#[natural]
async fn label_of(text: String) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify <text> into <:label>.
    ";
    Ok(label)
}

/// A stub environment named by its model, answering one block with `label`.
fn labelled(model: &str, label: &str) -> Environment {
    Environment::stub(StubBackend::new([Envelope::done().bind("label", label)]))
        .with_configuration(Configuration::with_model(model))
}

#[tokio::test]
async fn an_environment_set_inside_another_replaces_it_for_its_future_only() {
    let outer = labelled("outer", "positive");
    let (inner_result, outer_result) = environment(outer, async {
        let inner_result = environment(labelled("inner", "negative"), async {
            assert_eq!(get_environment().unwrap().configuration().model, "inner");
            label_of("x".into()).await
        })
        .await;
        // Back in the outer environment, with its own backend.
        assert_eq!(get_environment().unwrap().configuration().model, "outer");
        (inner_result, label_of("y".into()).await)
    })
    .await;
    assert_eq!(inner_result.unwrap(), Sentiment::Negative);
    assert_eq!(outer_result.unwrap(), Sentiment::Positive);
}

#[natural]
fn label_of_sync(text: String) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify <text> into <:label>.
    ";
    Ok(label)
}

#[test]
fn the_thread_environment_can_be_replaced_and_overridden() {
    let no_environment = environment_override_sync(EnvironmentOverride::new(), || ());
    assert!(
        matches!(no_environment, Err(Error::NoEnvironment { function: None })),
        "{no_environment:?}"
    );

    let outer = labelled("outer", "positive").with_workspace_root("/outer");
    environment_sync(outer, || {
        let inner = environment_sync(labelled("inner", "negative"), || {
            assert_eq!(get_environment().unwrap().configuration().model, "inner");
            label_of_sync("x".into())
        });
        assert_eq!(inner.unwrap(), Sentiment::Negative);

        // An override changes only the fields it names, for its closure.
        let backend = Arc::new(StubBackend::new([
            Envelope::done().bind("label", "negative")
        ]));
        let overridden = environment_override_sync(
            EnvironmentOverride::new()
                .configuration(Configuration::with_model("overridden"))
                .backend(backend),
            || {
                let env = get_environment().unwrap();
                assert_eq!(env.configuration().model, "overridden");
                assert_eq!(env.workspace_root(), Path::new("/outer"));
                label_of_sync("z".into())
            },
        )
        .unwrap();
        assert_eq!(overridden.unwrap(), Sentiment::Negative);

        let env = get_environment().unwrap();
        assert_eq!(env.configuration().model, "outer");
        assert_eq!(label_of_sync("y".into()).unwrap(), Sentiment::Positive);
    });
    assert!(get_environment().is_err());
}
