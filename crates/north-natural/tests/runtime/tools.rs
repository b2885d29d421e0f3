//! Built-in tools and user tools: results, scopes, name conflicts.

use north_natural::{
    Envelope, Error, StubBackend, Tool, ToolContext, ToolOrigin, ToolRegistrationError, ToolScope,
    environment, natural, register_global_tool, register_tool, remove_global_tool,
};
use serde_json::json;

use crate::{Notes, Recorder, Sentiment, stub};

#[natural]
async fn inspect(items: Vec<u32>, name: String) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Look at <items> and <name>, then set <:label>.
    ";
    Ok(label)
}

async fn tool_results(envelope: Envelope) -> Vec<(String, bool)> {
    let recorder = Recorder::new(StubBackend::new([envelope]));
    let memory = north_natural::Memory::new(Notes::default()).unwrap();
    let env = crate::on(recorder.clone()).with_memory(&memory);
    let _ = environment(env, inspect(vec![3, 1, 2], "box".into())).await;
    recorder.tool_results()
}

#[tokio::test]
async fn builtin_tools_answer_with_json() {
    let results = tool_results(
        Envelope::done()
            .call("nh_eval", json!({"expression": ".items | add"}))
            .call(
                "nh_eval",
                json!({"expression": "{n: (.items | length), up: (.name | ascii_upcase)}"}),
            )
            .call("nh_dir", json!({"expression": "."}))
            .call("nh_dir", json!({"expression": ".items"}))
            .call("nh_help", json!({"expression": "label"}))
            .call("nh_help", json!({"expression": "memory.facts"}))
            .call("nh_help", json!({"expression": ".items[0]"}))
            .call(
                "nh_assign",
                json!({"target": "label", "expression": "\"positive\""}),
            ),
    )
    .await;
    assert!(results.iter().all(|(_, is_error)| !is_error), "{results:?}");
    let texts: Vec<String> = results.into_iter().map(|(c, _)| c).collect();
    assert_eq!(texts[0], r#"{"ok":true,"output":6,"error":null}"#);
    assert_eq!(
        texts[1],
        r#"{"ok":true,"output":{"n":3,"up":"BOX"},"error":null}"#
    );
    insta::assert_snapshot!("builtin_results", texts.join("\n"));
}

#[tokio::test]
async fn nh_assign_returns_a_diagnostic_object_on_failure() {
    let recorder = Recorder::new(
        north_llm::ScriptedBackend::from_json(
            &json!([
                crate::call_turn(
                    "nh_assign",
                    json!({"target": "label", "expression": "\"glad\""})
                ),
                crate::call_turn("nh_assign", json!({"target": "items", "expression": "[]"})),
                crate::call_turn(
                    "nh_assign",
                    json!({"target": "label", "expression": ".nope | not_a_function"})
                ),
                crate::final_turn(json!({})),
            ])
            .to_string(),
        )
        .unwrap(),
    );
    let env = crate::on(recorder.clone()).with_configuration(north_natural::Configuration {
        max_tool_failures: 5,
        ..Default::default()
    });
    environment(env, inspect(vec![1], "n".into()))
        .await
        .unwrap();
    let results = recorder.tool_results();
    assert!(results.iter().all(|(_, is_error)| *is_error));
    let texts: Vec<String> = results.into_iter().map(|(c, _)| c).collect();
    insta::assert_snapshot!("assign_failures", texts.join("\n"));
}

/// Looks up the price of a product, in cents.
#[north_natural::tool]
pub async fn price_lookup(_ctx: &ToolContext, product: String) -> Result<u32, String> {
    match product.as_str() {
        "apple" => Ok(50),
        other => Err(format!("unknown product `{other}`")),
    }
}

/// Counts the characters of a text and reports the block that asked.
#[north_natural::tool(name = "char_count")]
fn count_chars(ctx: &ToolContext, text: String) -> serde_json::Value {
    json!({"chars": text.chars().count(), "function": ctx.function()})
}

#[tokio::test]
async fn a_macro_tool_has_a_schema_from_its_parameters() {
    let tool = price_lookup_tool();
    assert_eq!(tool.name(), "price_lookup");
    assert_eq!(
        tool.description(),
        "Looks up the price of a product, in cents."
    );
    insta::assert_json_snapshot!("price_lookup_schema", tool.input_schema());
    assert_eq!(count_chars_tool().name(), "char_count");
}

#[tokio::test]
async fn environment_tools_are_called_and_their_errors_counted() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()
        .call("price_lookup", json!({"product": "apple"}))
        .call("char_count", json!({"text": "héllo"}))]));
    let env = crate::on(recorder.clone());
    env.register_tool(price_lookup_tool()).unwrap();
    env.register_tool(count_chars_tool()).unwrap();
    environment(env.clone(), inspect(vec![], "n".into()))
        .await
        .unwrap();
    let results = recorder.tool_results();
    assert_eq!(
        results[0],
        (r#"{"ok":true,"output":50,"error":null}"#.to_owned(), false)
    );
    assert_eq!(
        results[1].0,
        r#"{"ok":true,"output":{"chars":5,"function":"inspect"},"error":null}"#
    );

    // A failing user tool ends a stub block with Error::Tool.
    let env = stub([Envelope::done().call("price_lookup", json!({"product": "pear"}))]);
    env.register_tool(price_lookup_tool()).unwrap();
    let err = environment(env, inspect(vec![], "n".into()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Tool { tool, .. } if tool == "price_lookup"),
        "{err}"
    );
    insta::assert_snapshot!("user_tool_error", err.to_string());

    // Bad arguments are reported, not panicked on.
    let env = stub([Envelope::done().call("price_lookup", json!({"product": 3}))]);
    env.register_tool(price_lookup_tool()).unwrap();
    let err = environment(env, inspect(vec![], "n".into()))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("invalid arguments for `price_lookup`"),
        "{err}"
    );
}

#[tokio::test]
async fn environment_tools_stay_in_their_environment() {
    let env = stub([]);
    env.register_tool(price_lookup_tool()).unwrap();
    let other = stub([Envelope::done().call("price_lookup", json!({"product": "apple"}))]);
    let err = environment(other, inspect(vec![], "n".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Tool { .. }), "{err}");
}

#[natural]
async fn registers_a_call_tool(depth: u32) -> north_natural::Result<u32> {
    let scope = register_tool(Tool::from_fn(
        "call_scoped_echo",
        "Echoes its arguments.",
        json!({"type": "object"}),
        |_, args| Ok(args),
    ))?;
    assert_eq!(scope, ToolScope::Call);
    let mut seen = 0u32;
    "natural
    Use call_scoped_echo, then set <:seen> for <depth>.
    ";
    seen += nested_call().await?;
    Ok(seen)
}

#[natural]
async fn nested_call() -> north_natural::Result<u32> {
    let mut n = 0u32;
    "natural
    Use call_scoped_echo and set <:n>.
    ";
    Ok(n)
}

#[tokio::test]
async fn call_tools_are_visible_to_later_blocks_and_nested_calls_only() {
    let echo = |n: u32| {
        Envelope::done()
            .call("call_scoped_echo", json!({"x": n}))
            .bind(if n == 1 { "seen" } else { "n" }, n)
    };
    let recorder = Recorder::new(StubBackend::new([echo(1), echo(2)]));
    let env = crate::on(recorder.clone());
    assert_eq!(
        environment(env.clone(), registers_a_call_tool(0))
            .await
            .unwrap(),
        3
    );
    for request in recorder.requests() {
        assert!(request.tools.iter().any(|t| t.name == "call_scoped_echo"));
    }
    // After the call, the tool is gone.
    let env = stub([Envelope::done().call("call_scoped_echo", json!({}))]);
    assert!(matches!(
        environment(env, nested_call()).await,
        Err(Error::Tool { .. })
    ));
}

#[tokio::test]
async fn names_are_checked_and_conflicts_need_overwrite() {
    let env = stub([]);
    let schema = json!({"type": "object"});
    for bad in ["bad-name", "1x", "ünï", ""] {
        let err = env
            .register_tool(Tool::from_fn(bad, "x", schema.clone(), |_, a| Ok(a)))
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Registration(ToolRegistrationError::InvalidName { .. })
            ),
            "{bad}"
        );
    }
    let err = env
        .register_tool(Tool::from_fn("nh_eval", "mine", schema.clone(), |_, a| {
            Ok(a)
        }))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `nh_eval` conflicts with the built-in tool of the same name; register it with overwrite = true to replace it"
    );
    env.register_tool(price_lookup_tool()).unwrap();
    assert!(matches!(
        env.register_tool(price_lookup_tool()),
        Err(Error::Registration(ToolRegistrationError::Conflict {
            existing: ToolOrigin::Environment,
            ..
        }))
    ));
    env.register_tool(price_lookup_tool().overwrite(true))
        .unwrap();
}

#[tokio::test]
async fn a_builtin_can_be_overwritten_explicitly() {
    let recorder = Recorder::new(StubBackend::new([
        Envelope::done().call("nh_eval", json!({"expression": "anything"}))
    ]));
    let env = crate::on(recorder.clone());
    env.register_tool(
        Tool::from_fn(
            "nh_eval",
            "A replacement.",
            json!({"type": "object"}),
            |_, _| Ok(json!("replaced")),
        )
        .overwrite(true),
    )
    .unwrap();
    environment(env, inspect(vec![], "n".into())).await.unwrap();
    assert_eq!(
        recorder.tool_results()[0].0,
        r#"{"ok":true,"output":"replaced","error":null}"#
    );
    let request = &recorder.requests()[0];
    let evals: Vec<_> = request
        .tools
        .iter()
        .filter(|t| t.name == "nh_eval")
        .collect();
    assert_eq!(evals.len(), 1);
    assert_eq!(evals[0].description, "A replacement.");
}

#[natural]
async fn two_blocks() -> north_natural::Result<()> {
    "natural
    First.
    ";
    register_global_tool(Tool::from_fn(
        "live_global_tool",
        "Registered between two blocks.",
        json!({"type": "object"}),
        |_, a| Ok(a),
    ))?;
    "natural
    Second.
    ";
    Ok(())
}

#[tokio::test]
async fn the_global_registry_is_live_and_checks_conflicts() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done(), Envelope::done()]));
    let env = crate::on(recorder.clone());
    environment(env.clone(), two_blocks()).await.unwrap();
    let requests = recorder.requests();
    assert!(
        !requests[0]
            .tools
            .iter()
            .any(|t| t.name == "live_global_tool")
    );
    assert!(
        requests[1]
            .tools
            .iter()
            .any(|t| t.name == "live_global_tool")
    );
    // A visible global name conflicts with an environment registration.
    let err = env
        .register_tool(Tool::from_fn("live_global_tool", "x", json!({}), |_, a| {
            Ok(a)
        }))
        .unwrap_err();
    assert!(matches!(
        err,
        Error::Registration(ToolRegistrationError::Conflict {
            existing: ToolOrigin::Global,
            ..
        })
    ));
    // Outside any environment, register_tool is global.
    assert!(remove_global_tool("live_global_tool"));
    let scope = register_tool(Tool::from_fn(
        "another_global_tool",
        "x",
        json!({}),
        |_, a| Ok(a),
    ))
    .unwrap();
    assert_eq!(scope, ToolScope::Global);
    assert!(remove_global_tool("another_global_tool"));
}
