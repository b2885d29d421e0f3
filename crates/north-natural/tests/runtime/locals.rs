//! Context locals beyond the bound variables (spec 8.1): the function's
//! parameters are readable by every block, read-only, when their type is
//! `Serialize`; other parameters are left out without a compile error.

use std::fmt::Display;

use north_natural::{Envelope, Error, StubBackend, environment, natural};
use serde::Serialize;
use serde_json::{Value, json};

use crate::{Recorder, Sentiment, call_turn, final_turn, on, stub};

/// Not `Serialize`: cannot be a context local, must not break compilation.
pub struct Connection {
    /// Something the model must not see.
    pub secret: String,
}

#[natural]
async fn triage(
    limit: u32,
    tags: Vec<String>,
    connection: &Connection,
    mut retries: u8,
) -> north_natural::Result<Sentiment> {
    let _ = &connection.secret;
    retries += 1;
    let mut label = Sentiment::Neutral;
    "natural
    Classify the ticket into <:label>.
    ";
    let _ = retries;
    Ok(label)
}

fn evaluated(results: &[(String, bool)]) -> Vec<Value> {
    results
        .iter()
        .map(|(content, is_error)| {
            assert!(!is_error, "{content}");
            serde_json::from_str::<Value>(content).unwrap()["output"].clone()
        })
        .collect()
}

#[tokio::test]
async fn a_parameter_the_program_never_names_is_readable_through_nh_eval() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()
        .call("nh_eval", json!({"expression": ".limit"}))
        .call("nh_eval", json!({"expression": ".tags | join(\",\")"}))
        .call("nh_eval", json!({"expression": "has(\"connection\")"}))
        .call("nh_eval", json!({"expression": ".retries"}))
        .bind("label", "negative")]));
    let connection = Connection {
        secret: "hunter2".into(),
    };
    let out = environment(
        on(recorder.clone()),
        triage(3, vec!["billing".into(), "urgent".into()], &connection, 0),
    )
    .await
    .unwrap();
    assert_eq!(out, Sentiment::Negative);
    // The stub assigns its bindings first, then makes the calls.
    let outputs = evaluated(&recorder.tool_results()[1..]);
    // `retries` is the value the call received, not the one changed since.
    assert_eq!(
        outputs,
        [json!(3), json!("billing,urgent"), json!(false), json!(0)]
    );
}

#[tokio::test]
async fn the_locals_summary_lists_parameters_and_leaves_out_the_rest() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    let connection = Connection {
        secret: "hunter2".into(),
    };
    environment(
        on(recorder.clone()),
        triage(3, vec!["billing".into()], &connection, 0),
    )
    .await
    .unwrap();
    let prompt = recorder.first_prompt();
    assert!(
        prompt.contains(
            "- label (`Sentiment`, writable) = \"neutral\"\n\
             - limit (`u32`, parameter) = 3\n\
             - tags (`Vec<String>`, parameter) = array of 1 [\"billing\"]\n\
             - retries (`u8`, parameter, value at call start) = 0\n"
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("connection"), "{prompt}");
    assert!(!prompt.contains("hunter2"), "{prompt}");
    // Parameters are context locals, not bindings of the block.
    let bindings = prompt
        .split("## 2. Bindings")
        .nth(1)
        .and_then(|s| s.split("## 3.").next())
        .unwrap();
    assert!(!bindings.contains("limit"), "{bindings}");
}

#[tokio::test]
async fn a_parameter_is_read_only_unless_bound_writable() {
    let connection = Connection {
        secret: String::new(),
    };
    let env = stub([Envelope::done().bind("limit", 9)]);
    let err = environment(env, triage(3, vec![], &connection, 0))
        .await
        .unwrap_err();
    let Error::ToolEval(e) = &err else {
        panic!("{err}")
    };
    assert!(
        e.message
            .contains("target `limit` is read-only in this block"),
        "{}",
        e.message
    );
}

#[natural]
async fn shadowing(limit: u32, items: Vec<u32>) -> north_natural::Result<u32> {
    let mut total = 0;
    for item in items {
        total += item;
    }
    let limit = format!("at most {limit}");
    let _ = &limit;
    "natural
    Check <:total>.
    ";
    Ok(total)
}

#[tokio::test]
async fn moved_parameters_are_readable_and_shadowed_ones_are_left_out() {
    let recorder = Recorder::new(
        north_llm::ScriptedBackend::from_json(
            &json!([
                call_turn("nh_eval", json!({"expression": "[.items, has(\"limit\")]"})),
                final_turn(json!({"effect": null})),
            ])
            .to_string(),
        )
        .unwrap(),
    );
    assert_eq!(
        environment(on(recorder.clone()), shadowing(5, vec![1, 2]))
            .await
            .unwrap(),
        3
    );
    // `items` was moved into the loop before the block: the call-start
    // value is still there. `limit` now names a String local the block did
    // not bind, so the u32 parameter is not offered under that name.
    assert_eq!(
        evaluated(&recorder.tool_results()),
        [json!([[1, 2], false])]
    );
}

/// A counter with a method that is a natural function.
#[derive(Serialize)]
pub struct Counter {
    /// The count.
    pub count: u32,
}

impl Counter {
    #[natural]
    async fn describe(&self, style: impl Display) -> north_natural::Result<String> {
        let mut text = String::new();
        "natural
        Describe the counter in <:text>, {style}.
        ";
        Ok(text)
    }
}

#[tokio::test]
async fn self_is_a_context_local_and_generic_parameters_are_left_out() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()
        .call(
            "nh_eval",
            json!({"expression": "[.self.count, has(\"style\")]"}),
        )
        .bind("text", "three")]));
    let counter = Counter { count: 3 };
    let out = environment(on(recorder.clone()), counter.describe("briefly"))
        .await
        .unwrap();
    assert_eq!(out, "three");
    assert_eq!(evaluated(&recorder.tool_results())[1], json!([3, false]));
    assert!(
        recorder
            .first_prompt()
            .contains("- self (`Counter`, parameter) = object with 1 keys {count: 3}"),
        "{}",
        recorder.first_prompt()
    );
}

#[tokio::test]
async fn nh_dir_marks_parameters() {
    let recorder = Recorder::new(StubBackend::new([
        Envelope::done().call("nh_dir", json!({"expression": "."}))
    ]));
    let connection = Connection {
        secret: String::new(),
    };
    environment(on(recorder.clone()), triage(1, vec![], &connection, 0))
        .await
        .unwrap();
    let dir = &evaluated(&recorder.tool_results())[0]["keys"];
    assert_eq!(
        dir["limit"],
        json!({"json_type": "number", "rust_type": "u32", "writable": false, "parameter": true})
    );
    assert_eq!(dir["label"]["writable"], json!(true));
    assert!(dir["label"].get("parameter").is_none());
}

#[natural]
async fn outer_call(ticket: String) -> north_natural::Result<u32> {
    let _ = &ticket;
    inner_call().await
}

#[natural]
async fn inner_call() -> north_natural::Result<u32> {
    let mut n = 0u32;
    "natural
    Set <:n>.
    ";
    Ok(n)
}

#[tokio::test]
async fn an_enclosing_call_without_a_block_yet_shows_its_parameters() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done().bind("n", 4)]));
    assert_eq!(
        environment(on(recorder.clone()), outer_call("T-1".into()))
            .await
            .unwrap(),
        4
    );
    let prompt = recorder.first_prompt();
    assert!(
        prompt.contains(
            "In the enclosing natural call `outer_call`:\n- ticket (`String`, parameter) = \"T-1\""
        ),
        "{prompt}"
    );
}
