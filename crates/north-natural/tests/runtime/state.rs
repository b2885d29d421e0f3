//! Bindings: reads, commits, interpolation, the prompt, nested calls and
//! the environment API.

use std::sync::Arc;

use north_natural::{
    Configuration, Envelope, EnvironmentOverride, Error, StubBackend, environment,
    environment_override, environment_sync, get_environment, natural,
};

use crate::{Recorder, Sentiment, stub};

#[natural]
async fn classify(text: &str) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify <text> and set <:label>.
    ";
    Ok(label)
}

#[tokio::test]
async fn a_writable_binding_is_committed_with_its_real_type() {
    let env = stub([Envelope::done().bind("label", "positive")]);
    let out = environment(env, classify("I love it")).await.unwrap();
    assert_eq!(out, Sentiment::Positive);
}

#[tokio::test]
async fn an_unassigned_writable_binding_keeps_its_value() {
    let env = stub([Envelope::done()]);
    let out = environment(env, classify("meh")).await.unwrap();
    assert_eq!(out, Sentiment::Neutral);
}

#[natural]
async fn tally(items: Vec<u32>, label: String) -> north_natural::Result<(u32, String, Vec<u32>)> {
    let mut total: u32 = 0;
    let mut kept = items.clone();
    "natural
    Sum <items> into <:total>, keep the even ones of <items> in <:kept>; the label is <label>.
    ";
    Ok((total, label, kept))
}

#[tokio::test]
async fn several_bindings_are_read_and_committed() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()
        .bind("total", 10)
        .bind("kept", [2, 4])]));
    let env = crate::on(recorder.clone());
    let out = environment(env, tally(vec![1, 2, 3, 4], "x".into()))
        .await
        .unwrap();
    assert_eq!(out, (10, "x".to_owned(), vec![2, 4]));
    // The context locals held the bound variables and memory.
    let prompt = recorder.first_prompt();
    assert!(
        prompt.contains("- items (`Vec<u32>`) = array of 4 [1, 2, 3, …]"),
        "{prompt}"
    );
    assert!(prompt.contains("- total (`u32`, writable) = 0"), "{prompt}");
}

#[natural]
async fn greet(name: String, times: u32) -> north_natural::Result<String> {
    let mut greeting = String::new();
    "natural
    Greet {name} {times} times in <:greeting>; braces {{like this}} stay.
    ";
    Ok(greeting)
}

#[tokio::test]
async fn the_prompt_carries_program_bindings_locals_memory_and_finish() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done().bind("greeting", "hi")]));
    let env =
        crate::on(recorder.clone()).with_configuration(Configuration::with_model("test-model"));
    let out = environment(env, greet("Ada".into(), 2)).await.unwrap();
    assert_eq!(out, "hi");
    let request = &recorder.requests()[0];
    assert_eq!(request.model, "test-model");
    // Other tests may register global tools meanwhile: look at the built-ins.
    let tools: Vec<&str> = request
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| n.starts_with("nh_"))
        .collect();
    assert_eq!(tools, ["nh_dir", "nh_help", "nh_eval", "nh_assign"]);
    assert_eq!(
        north_natural::program_of(request),
        Some("Greet Ada 2 times in <:greeting>; braces {like this} stay.")
    );
    insta::assert_snapshot!("block_prompt", recorder.first_prompt());
    insta::assert_snapshot!("block_system", request.system.clone().unwrap());
}

/// natural
/// Add <a> and <b> and return the sum.
#[natural]
async fn add(a: i64, b: i64) -> north_natural::Result<i64> {}

#[tokio::test]
async fn a_docstring_block_runs_at_the_start_and_can_return() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done().returning(5)]));
    let env = crate::on(recorder.clone());
    assert_eq!(environment(env, add(2, 3)).await.unwrap(), 5);
    assert_eq!(
        north_natural::program_of(&recorder.requests()[0]),
        Some("Add <a> and <b> and return the sum.")
    );
}

#[tokio::test]
async fn a_docstring_function_without_return_fails_unless_its_type_has_nothing() {
    let err = environment(stub([Envelope::done()]), add(1, 1))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::MissingReturn { .. }), "{err}");
    insta::assert_snapshot!("missing_return", err.to_string());
    assert_eq!(
        environment(stub([Envelope::done()]), log_it(1))
            .await
            .unwrap(),
        ()
    );
}

/// natural
/// Note <n>.
#[natural]
async fn log_it(n: i64) -> north_natural::Result<()> {}

#[natural]
async fn inner(x: u32) -> north_natural::Result<u32> {
    let mut y = 0u32;
    "natural
    Double <x> into <:y>.
    ";
    Ok(y)
}

#[natural]
async fn outer(seed: u32) -> north_natural::Result<u32> {
    let mut start = 0u32;
    "natural
    Copy <seed> into <:start>.
    ";
    inner(start).await
}

#[tokio::test]
async fn nested_calls_see_the_enclosing_call_locals() {
    let recorder = Recorder::new(StubBackend::new([
        Envelope::done().bind("start", 21),
        Envelope::done().bind("y", 42),
    ]));
    let env = crate::on(recorder.clone());
    assert_eq!(environment(env, outer(21)).await.unwrap(), 42);
    let requests = recorder.requests();
    let inner_request = requests
        .iter()
        .find(|r| north_natural::program_of(r) == Some("Double <x> into <:y>."))
        .unwrap();
    let second = inner_request.messages[0].text_content();
    assert!(
        second.contains("In the enclosing natural call `outer`:\n- seed (`u32`) = 21\n- start (`u32`, writable) = 21"),
        "{second}"
    );
}

#[tokio::test]
async fn no_environment_is_an_error_naming_the_function() {
    let err = classify("x").await.unwrap_err();
    assert!(matches!(err, Error::NoEnvironment { .. }));
    insta::assert_snapshot!("no_environment", err.to_string());
    assert!(get_environment().is_err());
}

#[tokio::test]
async fn environment_override_overlays_the_current_environment() {
    assert!(
        environment_override(EnvironmentOverride::new(), async {})
            .await
            .is_err(),
        "an override needs an environment"
    );
    let base = stub([]).with_configuration(Configuration::with_model("base"));
    let other = Arc::new(StubBackend::new([
        Envelope::done().bind("label", "negative")
    ]));
    let out = environment(base, async {
        environment_override(EnvironmentOverride::new().backend(other), async {
            let env = get_environment().unwrap();
            assert_eq!(env.configuration().model, "base");
            assert_eq!(env.backend().provider(), "stub");
            classify("bad").await
        })
        .await
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(out, Sentiment::Negative);
}

#[natural]
fn classify_sync(text: &str) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify <text> into <:label>.
    ";
    Ok(label)
}

#[test]
fn the_sync_form_blocks_on_a_runtime_and_uses_the_thread_environment() {
    let env = stub([Envelope::done().bind("label", "positive")]);
    let out = environment_sync(env, || classify_sync("great")).unwrap();
    assert_eq!(out, Sentiment::Positive);
    assert!(matches!(
        classify_sync("no env"),
        Err(Error::NoEnvironment { .. })
    ));
}

#[derive(Debug)]
enum AppError {
    Natural(Error),
}

impl From<Error> for AppError {
    fn from(e: Error) -> Self {
        AppError::Natural(e)
    }
}

#[natural]
async fn with_app_error(text: String) -> Result<Sentiment, AppError> {
    let mut label = Sentiment::Neutral;
    ("natural
    Set <:label> for <text>.");
    Ok(label)
}

#[tokio::test]
async fn functions_return_their_own_error_type() {
    let err = environment(
        stub([Envelope::done().final_text("nope")]),
        with_app_error("x".into()),
    )
    .await
    .unwrap_err();
    let AppError::Natural(inner) = err;
    assert!(matches!(inner, Error::Parse(_)));
}

#[natural]
async fn fill_in(text: &str, label: &mut Sentiment) -> north_natural::Result<()> {
    "natural
    Classify <text> and set <:label>.
    ";
    Ok(())
}

#[tokio::test]
async fn a_mut_reference_parameter_is_written_through() {
    let mut label = Sentiment::Neutral;
    let env = stub([Envelope::done().bind("label", "negative")]);
    environment(env, fill_in("awful", &mut label))
        .await
        .unwrap();
    assert_eq!(label, Sentiment::Negative);
}

/// A const the block interpolates: capitalised names are the caller's
/// consts and statics (the spec's caller globals), checked by rustc.
const PRODUCT: &str = "kettle";
/// A static the block interpolates.
static LIMIT: u32 = 3;

#[natural]
async fn check_stock(count: u32) -> north_natural::Result<()> {
    "natural
    Is {count} {PRODUCT} within the limit of {LIMIT}?
    ";
    Ok(())
}

#[tokio::test]
async fn capitalised_consts_and_statics_are_interpolated() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    environment(crate::on(recorder.clone()), check_stock(2))
        .await
        .unwrap();
    assert_eq!(
        north_natural::program_of(&recorder.requests()[0]),
        Some("Is 2 kettle within the limit of 3?")
    );
}
