//! The stub backend's own contract: envelopes read from JSON, and the
//! errors it reports, each naming the stub backend.

use north_llm::LlmError;
use north_natural::{Environment, Error, StubBackend, environment, natural};

use crate::Sentiment;

#[natural]
async fn two_steps(text: String) -> north_natural::Result<(Sentiment, u32)> {
    let mut label = Sentiment::Neutral;
    let mut score = 0u32;
    "natural
    Classify <text> into <:label>.
    ";
    "natural
    Score <text> from 0 to 10 into <:score>.
    ";
    Ok((label, score))
}

#[tokio::test]
async fn envelopes_are_read_from_json_one_or_an_array() {
    // An array: one envelope per block, in order, every field used.
    let stub = StubBackend::from_json(
        r#"[
            {"natural_final": {"effect": null, "error": null},
             "bindings": {"label": "negative"},
             "tool_calls": [{"name": "nh_eval", "args": {"expression": ".text"}}]},
            {"bindings": {"score": 7}}
        ]"#,
    )
    .unwrap();
    assert_eq!(stub.remaining(), 2);
    let out = environment(Environment::stub(stub), two_steps("meh".into()))
        .await
        .unwrap();
    assert_eq!(out, (Sentiment::Negative, 7));

    // One envelope on its own; `{}` is an envelope that assigns nothing.
    let one = StubBackend::from_json(
        r#"{"natural_final": {"effect": {"type": "return", "value_json": "[\"positive\", 1]"}}}"#,
    )
    .unwrap();
    assert_eq!(one.remaining(), 1);
    let out = environment(Environment::stub(one), two_steps("x".into()))
        .await
        .unwrap();
    assert_eq!(out, (Sentiment::Positive, 1));
    let empty = StubBackend::from_json("{}").unwrap();
    assert_eq!(empty.remaining(), 1);
}

/// The message of the stub's configuration error, checking that it is
/// one and names the stub backend.
fn config_message(error: LlmError) -> String {
    let shown = error.to_string();
    let LlmError::Config { provider, message } = error else {
        panic!("not a configuration error: {shown}")
    };
    assert_eq!(provider, "stub");
    assert_eq!(shown, format!("stub: invalid configuration: {message}"));
    message
}

#[test]
fn invalid_envelope_json_is_a_stub_configuration_error() {
    let message = config_message(StubBackend::from_json("{").unwrap_err());
    assert_eq!(
        message,
        "invalid envelopes: EOF while parsing an object at line 1 column 1"
    );
    let message = config_message(StubBackend::from_json(r#"{"bindingz": {}}"#).unwrap_err());
    assert!(
        message.starts_with(
            "invalid envelopes: unknown field `bindingz`, expected one of `natural_final`, `bindings`, `tool_calls`"
        ),
        "{message}"
    );
    let message = config_message(StubBackend::from_json("[3]").unwrap_err());
    assert!(
        message
            .starts_with("invalid envelopes: invalid type: integer `3`, expected struct Envelope"),
        "{message}"
    );
}

#[tokio::test]
async fn running_out_of_envelopes_names_the_stub_backend_the_block_and_the_count() {
    let expect = |block: &str, given: &str| {
        format!(
            "stub: invalid configuration: natural block #{block} ran (\"{}\"), but the stub backend was given {given}: give one envelope per block the code runs, in order",
            if block == "1" {
                "Classify <text> into <:label>."
            } else {
                "Score <text> from 0 to 10 into <:score>."
            }
        )
    };
    let cases = [
        (StubBackend::new([]), "1", "0 envelopes", "inline block 1"),
        (
            StubBackend::from_json(r#"{"bindings": {"label": "positive"}}"#).unwrap(),
            "2",
            "1 envelope",
            "inline block 2",
        ),
    ];
    for (stub, block, given, block_label) in cases {
        let err = environment(Environment::stub(stub), two_steps("x".into()))
            .await
            .unwrap_err();
        let Error::Backend { at, source } = &err else {
            panic!("{err}")
        };
        assert_eq!(at.function, "two_steps");
        assert!(at.block.starts_with(block_label), "{}", at.block);
        assert_eq!(source.to_string(), expect(block, given));
        assert_eq!(
            err.to_string(),
            format!("{at}: model request failed: {}", expect(block, given))
        );
    }
}
