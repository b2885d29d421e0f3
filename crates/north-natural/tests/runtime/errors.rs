//! Each error type on the stub backend (where the first tool failure ends
//! the block), with the messages a user sees.

use north_natural::{Envelope, Error, environment, natural};
use serde_json::json;

use crate::{Sentiment, stub};

#[natural]
async fn label_it(text: String) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Set <:label> for <text>.
    ";
    Ok(label)
}

#[tokio::test]
async fn a_non_json_final_answer_is_a_parse_error() {
    let err = environment(
        stub([Envelope::done().final_text("The label is positive.")]),
        label_it("x".into()),
    )
    .await
    .unwrap_err();
    let Error::Parse(parse) = &err else {
        panic!("{err}")
    };
    assert_eq!(parse.at.function, "label_it");
    assert_eq!(parse.answer, "The label is positive.");
    insta::assert_snapshot!("parse_error", err.to_string());

    let err = environment(
        stub([Envelope::done().final_text(r#"{"effect": {"type": "jump"}}"#)]),
        label_it("x".into()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::Parse(_)));
}

#[tokio::test]
async fn a_model_reported_error_is_surfaced() {
    let env = stub([Envelope::done().error("the text is empty", Some("input"))]);
    let err = environment(env, label_it(String::new())).await.unwrap_err();
    assert!(
        matches!(&err, Error::Model { message, error_type: Some(t), .. } if message == "the text is empty" && t == "input")
    );
    insta::assert_snapshot!("model_error", err.to_string());
}

#[tokio::test]
async fn a_value_that_does_not_fit_the_binding_type_is_a_validation_error() {
    let env = stub([Envelope::done().bind("label", "happy")]);
    let err = environment(env, label_it("x".into())).await.unwrap_err();
    let Error::ToolValidation(v) = &err else {
        panic!("{err}")
    };
    assert_eq!(v.target, "label");
    assert!(v.type_name.ends_with("Sentiment"), "{}", v.type_name);
    insta::assert_snapshot!("validation_error", err.to_string());
}

#[tokio::test]
async fn a_bad_expression_is_an_evaluation_error() {
    let env =
        stub([Envelope::done().call("nh_eval", json!({"expression": ".text | ascii_downcase("}))]);
    let err = environment(env, label_it("x".into())).await.unwrap_err();
    let Error::ToolEval(e) = &err else {
        panic!("{err}")
    };
    assert_eq!(e.tool, "nh_eval");
    insta::assert_snapshot!("eval_error", err.to_string());

    let env = stub([Envelope::done().call("nh_eval", json!({"expression": ".text + 1"}))]);
    let err = environment(env, label_it("x".into())).await.unwrap_err();
    assert!(matches!(err, Error::ToolEval(_)), "{err}");
}

#[tokio::test]
async fn assigning_a_read_only_binding_is_refused() {
    let env = stub([Envelope::done().bind("text", "changed")]);
    let err = environment(env, label_it("x".into())).await.unwrap_err();
    let Error::ToolEval(e) = &err else {
        panic!("{err}")
    };
    assert!(
        e.message
            .contains("`text` is read-only in this block (only <:name> bindings are writable)"),
        "{}",
        e.message
    );
    assert!(e.message.contains("writable: label"), "{}", e.message);

    // A name that is not a context local at all is reported as such.
    let env = stub([Envelope::done().bind("nothing_here", 1)]);
    let err = environment(env, label_it("x".into())).await.unwrap_err();
    assert!(
        err.to_string().contains("is not a writable binding"),
        "{err}"
    );
}

#[tokio::test]
async fn calling_a_missing_tool_is_a_tool_error() {
    let env = stub([Envelope::done().call("nh_teleport", json!({}))]);
    let err = environment(env, label_it("x".into())).await.unwrap_err();
    assert!(
        matches!(&err, Error::Tool { tool, .. } if tool == "nh_teleport"),
        "{err}"
    );
}

#[tokio::test]
async fn an_empty_stub_queue_is_a_backend_error() {
    let err = environment(stub([]), label_it("x".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Backend { .. }), "{err}");
}

#[tokio::test]
async fn running_out_of_stub_envelopes_says_which_block_and_what_to_do() {
    let err = environment(stub([]), label_it("x".into()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("natural block #1 ran"), "{err}");
    assert!(err.contains("Set <:label> for <text>."), "{err}");
    assert!(
        err.contains("given 0 envelopes: give one envelope per block"),
        "{err}"
    );
}
