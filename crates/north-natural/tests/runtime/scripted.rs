//! The same runtime on the scripted north-llm backend: native tool calls
//! streamed like a provider's, a model that can recover from failures.

use north_natural::{Configuration, Error, Memory, environment, natural};
use serde_json::json;

use crate::{Notes, Recorder, Sentiment, call_turn, final_turn, scripted};

#[natural]
async fn classify(text: String) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify <text> and set <:label>.
    ";
    Ok(label)
}

#[tokio::test]
async fn reads_through_nh_eval_and_commits_through_nh_assign() {
    let env = scripted(json!([
        call_turn("nh_eval", json!({"expression": ".text"})),
        call_turn(
            "nh_assign",
            json!({"target": "<:label>", "expression": "if (.text | test(\"love\")) then \"positive\" else \"negative\" end"})
        ),
        final_turn(json!({"effect": null, "error": null})),
    ]));
    assert_eq!(
        environment(env, classify("I love it".into()))
            .await
            .unwrap(),
        Sentiment::Positive
    );
}

#[tokio::test]
async fn the_model_recovers_from_a_validation_failure() {
    let recorder = Recorder::new(
        north_llm::ScriptedBackend::from_json(
            &json!([
                call_turn(
                    "nh_assign",
                    json!({"target": "label", "expression": "\"happy\""})
                ),
                call_turn(
                    "nh_assign",
                    json!({"target": "label", "expression": "\"positive\""})
                ),
                final_turn(json!({})),
            ])
            .to_string(),
        )
        .unwrap(),
    );
    let env = crate::on(recorder.clone());
    assert_eq!(
        environment(env, classify("x".into())).await.unwrap(),
        Sentiment::Positive
    );
    let results = recorder.tool_results();
    assert!(results[0].1, "the failure is flagged as an error result");
    let failure: serde_json::Value = serde_json::from_str(&results[0].0).unwrap();
    assert_eq!(failure["ok"], false, "{failure}");
    assert_eq!(failure["output"]["validation"]["ok"], false, "{failure}");
    assert!(
        failure["error"]
            .as_str()
            .unwrap()
            .starts_with("validation: "),
        "{failure}"
    );
    assert!(!results[1].1);
}

#[tokio::test]
async fn repeated_failures_end_the_block_with_the_typed_error() {
    let bad = || call_turn("nh_assign", json!({"target": "label", "expression": "42"}));
    let env = scripted(json!([bad(), bad(), bad()]));
    let err = environment(env, classify("x".into())).await.unwrap_err();
    assert!(matches!(err, Error::ToolValidation(_)), "{err}");

    let bad = || call_turn("nh_eval", json!({"expression": ".["}));
    let env = scripted(json!([bad(), bad(), bad()]));
    assert!(matches!(
        environment(env, classify("x".into())).await,
        Err(Error::ToolEval(_))
    ));
}

#[natural]
async fn remember(fact: String) -> north_natural::Result<u32> {
    "natural
    Append <fact> to memory.facts, then return how many facts there are.
    ";
    Ok(0)
}

#[tokio::test]
async fn memory_updates_and_return_values() {
    let memory = Memory::new(Notes::default()).unwrap();
    let env = scripted(json!([
        call_turn(
            "nh_assign",
            json!({"target": "memory.facts", "expression": ".memory.facts + [.fact]"})
        ),
        call_turn("nh_eval", json!({"expression": ".memory.facts | length"})),
        final_turn(json!({"effect": {"type": "return", "value_json": "1"}})),
    ]))
    .with_memory(&memory);
    assert_eq!(
        environment(env, remember("water is wet".into()))
            .await
            .unwrap(),
        1
    );
    assert_eq!(memory.get().facts, ["water is wet"]);

    // An invalid memory update, then giving up: memory unchanged, model error.
    let env = scripted(json!([
        call_turn(
            "nh_assign",
            json!({"target": "memory.facts", "expression": "\"not a list\""})
        ),
        final_turn(json!({"error": {"message": "cannot store it"}})),
    ]))
    .with_memory(&memory);
    let err = environment(env, remember("x".into())).await.unwrap_err();
    assert!(matches!(err, Error::Model { .. }), "{err}");
    assert_eq!(memory.get().facts, ["water is wet"]);
}

#[natural]
async fn until_stop(limit: u32) -> north_natural::Result<u32> {
    let mut i = 0u32;
    while i < limit {
        i += 1;
        "natural
        Break when {i} is 2.
        ";
    }
    Ok(i)
}

#[tokio::test]
async fn effects_from_a_model() {
    let env = scripted(json!([
        final_turn(json!({"effect": null})),
        final_turn(json!({"effect": {"type": "break", "value_json": null}})),
    ]));
    assert_eq!(environment(env, until_stop(5)).await.unwrap(), 2);

    let env = scripted(json!([final_turn(
        json!({"effect": {"type": "return", "value_json": "\"positive\""}})
    )]));
    assert_eq!(
        environment(env, classify("x".into())).await.unwrap(),
        Sentiment::Positive
    );

    let env = scripted(json!([final_turn(
        json!({"effect": {"type": "return", "value_json": "\"meh\""}})
    )]));
    assert!(matches!(
        environment(env, classify("x".into())).await,
        Err(Error::Return { .. })
    ));

    let env = scripted(json!([final_turn(json!({"effect": {"type": "continue"}}))]));
    assert!(matches!(
        environment(env, classify("x".into())).await,
        Err(Error::EffectOutsideLoop {
            effect: "continue",
            ..
        })
    ));
}

#[tokio::test]
async fn parse_backend_and_step_limit_errors() {
    let env = scripted(json!([{"text": "Sure! The label is positive."}]));
    assert!(matches!(
        environment(env, classify("x".into())).await,
        Err(Error::Parse(_))
    ));

    let env = scripted(json!([]));
    let err = environment(env, classify("x".into())).await.unwrap_err();
    assert!(matches!(err, Error::Backend { .. }), "{err}");

    let look = || call_turn("nh_eval", json!({"expression": ".text"}));
    let env = scripted(json!([look(), look(), look()])).with_configuration(Configuration {
        max_steps: 2,
        ..Default::default()
    });
    let err = environment(env, classify("x".into())).await.unwrap_err();
    assert!(matches!(err, Error::StepLimit { limit: 2, .. }), "{err}");
    insta::assert_snapshot!("step_limit", err.to_string());
}

#[tokio::test]
async fn user_tools_on_the_scripted_backend() {
    let env = scripted(json!([
        call_turn("price_lookup", json!({"product": "apple"})),
        call_turn("price_lookup", json!({"product": "kiwi"})),
        call_turn("price_lookup", json!({"product": "kiwi"})),
        call_turn("price_lookup", json!({"product": "kiwi"})),
    ]));
    env.register_tool(crate::tools::price_lookup_tool())
        .unwrap();
    let err = environment(env, classify("x".into())).await.unwrap_err();
    assert!(
        matches!(&err, Error::Tool { message, .. } if message == "unknown product `kiwi`"),
        "{err}"
    );
}

#[natural]
async fn classify_and_count(text: String) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify <text> into <:label> and count it in memory.count.
    ";
    Ok(label)
}

#[tokio::test]
async fn a_failed_nh_assign_changes_neither_the_binding_nor_memory() {
    let assign = |target: &str, expression: &str| {
        call_turn(
            "nh_assign",
            json!({"target": target, "expression": expression}),
        )
    };
    let recorder = Recorder::new(
        north_llm::ScriptedBackend::from_json(
            &json!([
                assign("label", "\"positive\""),
                assign("memory.count", "5"),
                // Validation failures, then evaluation failures.
                assign("label", "\"glad\""),
                assign("memory.count", "\"many\""),
                assign("label", ".nope | not_a_function"),
                assign("memory.count", "error(\"no count\")"),
                call_turn("nh_eval", json!({"expression": "{label, memory: .memory}"})),
                final_turn(json!({})),
            ])
            .to_string(),
        )
        .unwrap(),
    );
    let memory = Memory::new(Notes {
        facts: vec!["kept".into()],
        count: 4,
    })
    .unwrap();
    let env = crate::on(recorder.clone())
        .with_memory(&memory)
        .with_configuration(Configuration {
            max_tool_failures: 10,
            ..Default::default()
        });
    let label = environment(env, classify_and_count("great".into()))
        .await
        .unwrap();

    let results = recorder.tool_results();
    let failed: Vec<bool> = results.iter().map(|(_, is_error)| *is_error).collect();
    assert_eq!(failed, [false, false, true, true, true, true, false]);
    let kinds: Vec<String> = results[2..6]
        .iter()
        .map(|(content, _)| {
            let v: serde_json::Value = serde_json::from_str(content).unwrap();
            v["error"]
                .as_str()
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        ["validation", "validation", "evaluation", "evaluation"]
    );
    // The context locals still hold the values of the successful assignments.
    let seen: serde_json::Value = serde_json::from_str(&results[6].0).unwrap();
    assert_eq!(
        seen["output"],
        json!({"label": "positive", "memory": {"facts": ["kept"], "count": 5}})
    );
    // And so do the committed binding and the memory.
    assert_eq!(label, Sentiment::Positive);
    assert_eq!(
        memory.get(),
        Notes {
            facts: vec!["kept".into()],
            count: 5
        }
    );
}

#[tokio::test]
async fn a_binding_whose_only_assignment_failed_keeps_its_value() {
    let env = scripted(json!([
        call_turn(
            "nh_assign",
            json!({"target": "label", "expression": "\"glad\""})
        ),
        final_turn(json!({})),
    ]));
    assert_eq!(
        environment(env, classify("great".into())).await.unwrap(),
        Sentiment::Neutral
    );
}
