//! Control-flow effects: continue, break, return (with validation), and
//! their loop-context rules.

use north_natural::{Envelope, Environment, Error, StubBackend, environment, natural};

use crate::stub;

#[natural]
async fn first_long_word(
    words: Vec<String>,
) -> north_natural::Result<(Vec<String>, Option<String>)> {
    let mut seen = Vec::new();
    let mut found = None;
    for word in words {
        seen.push(word.clone());
        "natural
        If {word} is shorter than 5 letters, continue. Otherwise store it in <:found> and break.
        ";
        seen.push("after".to_owned());
    }
    Ok((seen, found))
}

#[tokio::test]
async fn a_loop_body_decides_continue_and_break() {
    let backend = StubBackend::from_fn(|block| {
        let word = block.program.split_whitespace().nth(1).unwrap_or_default();
        if word.len() < 5 {
            Envelope::done().continue_loop()
        } else {
            Envelope::done().bind("found", word).break_loop()
        }
    });
    let env = Environment::stub(backend);
    let words = ["a", "bb", "elephant", "zebra"].map(String::from).to_vec();
    let (seen, found) = environment(env, first_long_word(words)).await.unwrap();
    assert_eq!(seen, ["a", "bb", "elephant"]);
    assert_eq!(found.as_deref(), Some("elephant"));
}

#[natural]
async fn countdown(mut n: u32) -> north_natural::Result<Vec<u32>> {
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        "natural
        Decide whether to skip {n}.
        ";
        out.push(n);
    }
    loop {
        "natural
        Stop now.
        ";
    }
    Ok(out)
}

#[tokio::test]
async fn while_and_loop_bodies_are_loop_contexts() {
    let env = stub([
        Envelope::done(),
        Envelope::done().continue_loop(),
        Envelope::done(),
        Envelope::done().break_loop(),
    ]);
    assert_eq!(environment(env, countdown(3)).await.unwrap(), [2, 0]);
}

#[natural]
async fn pick(options: Vec<u32>) -> north_natural::Result<u32> {
    "natural
    Return the best of <options>.
    ";
    Ok(0)
}

#[tokio::test]
async fn return_validates_the_value_into_the_return_type() {
    let env = stub([Envelope::done().returning(7)]);
    assert_eq!(environment(env, pick(vec![7])).await.unwrap(), 7);

    let env = stub([Envelope::done().returning("seven")]);
    let err = environment(env, pick(vec![7])).await.unwrap_err();
    assert!(matches!(err, Error::Return { .. }), "{err}");
    insta::assert_snapshot!("return_invalid", err.to_string());

    let env = stub([Envelope::done().returning(-1)]);
    assert!(matches!(
        environment(env, pick(vec![])).await,
        Err(Error::Return { .. })
    ));
}

#[tokio::test]
async fn return_value_json_must_be_json_text() {
    let env = stub([Envelope {
        natural_final: serde_json::json!({"effect": {"type": "return", "value_json": "{not json"}}),
        ..Envelope::done()
    }]);
    let err = environment(env, pick(vec![])).await.unwrap_err();
    // The final answer itself parsed: its effect failed, an execution error.
    assert!(matches!(err, Error::Return { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("`effect.value_json` is not JSON text"),
        "{err}"
    );
}

#[tokio::test]
async fn break_and_continue_outside_a_loop_fail() {
    for envelope in [
        Envelope::done().break_loop(),
        Envelope::done().continue_loop(),
    ] {
        let err = environment(stub([envelope]), pick(vec![1]))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::EffectOutsideLoop { .. }), "{err}");
    }
    let err = environment(stub([Envelope::done().break_loop()]), pick(vec![1]))
        .await
        .unwrap_err();
    insta::assert_snapshot!("break_outside_loop", err.to_string());
}

#[natural]
async fn closure_in_loop(items: Vec<u32>) -> north_natural::Result<u32> {
    let mut count = 0u32;
    for item in items {
        let double = |x: u32| x * 2;
        count += double(item);
        if item > 1 {
            "natural
            Maybe stop at {item}; <count> so far.
            ";
        }
    }
    Ok(count)
}

#[tokio::test]
async fn a_block_nested_in_an_if_inside_a_loop_is_in_the_loop() {
    let env = stub([Envelope::done().break_loop()]);
    assert_eq!(
        environment(env, closure_in_loop(vec![1, 2, 3]))
            .await
            .unwrap(),
        6
    );
}

#[natural]
async fn grid(rows: u32, cols: u32) -> north_natural::Result<Vec<(u32, u32)>> {
    let mut seen = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            seen.push((r, c));
            "natural
            Cell {r},{c}: stop this row?
            ";
        }
    }
    Ok(seen)
}

#[tokio::test]
async fn break_in_nested_loops_leaves_only_the_innermost() {
    // Each row's first cell breaks; every row still runs.
    let env = stub([
        Envelope::done().break_loop(),
        Envelope::done().break_loop(),
        Envelope::done().break_loop(),
    ]);
    assert_eq!(
        environment(env, grid(3, 4)).await.unwrap(),
        vec![(0, 0), (1, 0), (2, 0)]
    );
    // Continue moves to the next cell of the same row.
    let env = stub((0..4).map(|_| Envelope::done().continue_loop()));
    assert_eq!(environment(env, grid(2, 2)).await.unwrap().len(), 4);
}

#[natural]
async fn maybe_pick(options: Vec<u32>) -> north_natural::Result<Option<u32>> {
    "natural
    Return the best of <options>, or nothing.
    ";
    Ok(options.first().copied())
}

#[natural]
async fn record(log: &mut Vec<String>) -> north_natural::Result<()> {
    "natural
    Return now, or let the function log.
    ";
    log.push("after the block".to_owned());
    Ok(())
}

/// An envelope whose final answer is `return` with `effect`'s other keys.
fn returning(effect: serde_json::Value) -> Envelope {
    let mut effect = effect;
    effect["type"] = "return".into();
    Envelope {
        natural_final: serde_json::json!({"effect": effect}),
        ..Envelope::done()
    }
}

#[tokio::test]
async fn return_without_value_json_or_with_null_returns_null_into_the_return_type() {
    for effect in [
        serde_json::json!({}),
        serde_json::json!({"value_json": null}),
    ] {
        // `Option` takes null as `None`; the code after the block does not run.
        let env = stub([returning(effect.clone())]);
        assert_eq!(
            environment(env, maybe_pick(vec![3])).await.unwrap(),
            None,
            "{effect}"
        );
        let mut log = Vec::new();
        let env = stub([returning(effect.clone())]);
        environment(env, record(&mut log)).await.unwrap();
        assert!(log.is_empty(), "{effect}: {log:?}");

        // A type without a null value fails validation.
        let env = stub([returning(effect.clone())]);
        let err = environment(env, pick(vec![3])).await.unwrap_err();
        let Error::Return {
            type_name, message, ..
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(type_name, "u32");
        assert_eq!(message, "invalid type: null, expected u32");
    }
}

#[natural]
async fn screen(words: Vec<String>) -> north_natural::Result<Vec<String>> {
    let mut seen = Vec::new();
    for word in words {
        'check: {
            if word.is_empty() {
                break 'check;
            }
            "natural
            Screen {word}: continue to skip it, break to stop.
            ";
            seen.push(word.clone());
        }
        seen.push(format!("{word}!"));
    }
    Ok(seen)
}

#[natural]
async fn screen_labeled(words: Vec<String>) -> north_natural::Result<Vec<String>> {
    let mut seen = Vec::new();
    let mut i = 0;
    'words: while i < words.len() {
        let word = words[i].clone();
        i += 1;
        'check: {
            if word.is_empty() {
                break 'check;
            }
            "natural
            Screen {word}: continue to skip it, break to stop.
            ";
            seen.push(word.clone());
        }
        seen.push(format!("{word}!"));
        if i > 10 {
            break 'words;
        }
    }
    Ok(seen)
}

/// A stub that continues at `b`, breaks at `d` and goes on otherwise.
fn screener() -> Environment {
    Environment::stub(StubBackend::from_fn(|block| {
        match block.program.split_whitespace().nth(1) {
            Some("b:") => Envelope::done().continue_loop(),
            Some("d:") => Envelope::done().break_loop(),
            _ => Envelope::done(),
        }
    }))
}

#[tokio::test]
async fn a_block_inside_a_labeled_block_acts_on_the_loop_around_it() {
    let words = ["a", "b", "", "c", "d", "e"].map(String::from).to_vec();
    let expected = ["a", "a!", "!", "c", "c!"];
    assert_eq!(
        environment(screener(), screen(words.clone()))
            .await
            .unwrap(),
        expected
    );
    // With the loop labeled by the user, the block uses that label.
    assert_eq!(
        environment(screener(), screen_labeled(words))
            .await
            .unwrap(),
        expected
    );
}

#[natural]
async fn rounds(limit: u32) -> north_natural::Result<(u32, u32)> {
    let mut round = 0;
    let mut steps = 0;
    let last = loop {
        round += 1;
        for step in 0..3 {
            steps += 1;
            "natural
            Round {round}, step {step}: break to end the round.
            ";
        }
        if round == limit {
            break round;
        }
    };
    Ok((last, steps))
}

#[tokio::test]
async fn a_value_break_of_an_outer_loop_leaves_a_block_in_an_inner_loop_free_to_break() {
    // Each round's first step breaks its `for`; the `loop` ends with a value.
    let env = stub((0..2).map(|_| Envelope::done().break_loop()));
    assert_eq!(environment(env, rounds(2)).await.unwrap(), (2, 2));
}
