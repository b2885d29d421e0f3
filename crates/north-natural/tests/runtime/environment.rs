//! Building environments: the four fields the spec requires (configuration,
//! workspace root, backend, memory) are all given to the builder, and reach
//! the blocks and tools; the stub convenience uses the test defaults.

use std::path::Path;
use std::sync::Arc;

use north_natural::{
    Configuration, Envelope, Environment, Memory, StubBackend, Tool, environment, natural,
};
use serde_json::json;

use crate::{Notes, Recorder};

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
