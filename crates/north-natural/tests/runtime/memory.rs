//! Memory: valid, invalid and atomic updates, and accumulation across calls.

use north_natural::{Envelope, Error, Memory, environment, natural};
use serde_json::json;

use crate::{Notes, Recorder, stub};

#[natural]
async fn learn(fact: String) -> north_natural::Result<()> {
    "natural
    Add <fact> to the memory's facts and count one more.
    ";
    Ok(())
}

#[tokio::test]
async fn a_valid_memory_update_is_stored() {
    let memory = Memory::new(Notes::default()).unwrap();
    let env = stub([Envelope::done()
        .bind("memory.facts", ["sky is blue"])
        .bind("memory.count", 1)])
    .with_memory(&memory);
    environment(env, learn("sky is blue".into())).await.unwrap();
    assert_eq!(
        memory.get(),
        Notes {
            facts: vec!["sky is blue".into()],
            count: 1
        }
    );
}

#[tokio::test]
async fn memory_accumulates_across_calls_through_jq() {
    let memory = Memory::new(Notes::default()).unwrap();
    let add = || {
        Envelope::done()
            .call(
                "nh_assign",
                json!({"target": "memory.facts", "expression": ".memory.facts + [.fact]"}),
            )
            .call(
                "nh_assign",
                json!({"target": "memory.count", "expression": ".memory.count + 1"}),
            )
    };
    let envelopes = [add(), add(), add()];
    let env = stub(envelopes).with_memory(&memory);
    environment(env, async {
        for fact in ["a", "b", "c"] {
            learn(fact.into()).await.unwrap();
        }
    })
    .await;
    assert_eq!(memory.get().facts, ["a", "b", "c"]);
    assert_eq!(memory.get().count, 3);
}

#[tokio::test]
async fn an_invalid_memory_update_changes_nothing() {
    let memory = Memory::new(Notes {
        facts: vec!["kept".into()],
        count: 4,
    })
    .unwrap();
    let env = stub([Envelope::done().bind("memory.count", "many")]).with_memory(&memory);
    let err = environment(env, learn("x".into())).await.unwrap_err();
    let Error::ToolValidation(v) = &err else {
        panic!("{err}")
    };
    assert_eq!(v.target, "memory.count");
    insta::assert_snapshot!("memory_validation_error", err.to_string());
    assert_eq!(memory.get().count, 4);
    assert_eq!(memory.get().facts, ["kept"]);
}

#[tokio::test]
async fn memory_updates_are_atomic_per_assignment() {
    // The first update succeeds, the second fails: the first stays, the
    // second leaves no partial change.
    let memory = Memory::new(Notes::default()).unwrap();
    let recorder = Recorder::new(north_natural::StubBackend::new([Envelope::done()
        .call(
            "nh_assign",
            json!({"target": "memory.count", "expression": "2"}),
        )
        .call(
            "nh_assign",
            json!({"target": "memory.facts", "expression": "[\"ok\", 3]"}),
        )]));
    let env = crate::on(recorder.clone()).with_memory(&memory);
    assert!(environment(env, learn("x".into())).await.is_err());
    assert_eq!(
        memory.get(),
        Notes {
            facts: vec![],
            count: 2
        }
    );
}

#[tokio::test]
async fn unknown_memory_fields_are_refused() {
    let memory = Memory::new(Notes::default()).unwrap();
    let env = stub([Envelope::done().bind("memory.nope", 1)]).with_memory(&memory);
    let err = environment(env, learn("x".into())).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("memory has no field `nope` (fields: facts, count)"),
        "{err}"
    );
}

#[test]
fn memory_must_be_an_object() {
    assert!(matches!(Memory::new(3u32), Err(Error::Memory { .. })));
}

#[tokio::test]
async fn a_memory_target_must_be_a_single_top_level_field() {
    let memory = Memory::new(Notes {
        facts: vec!["kept".into()],
        count: 4,
    })
    .unwrap();
    for target in ["memory.facts.0", "memory.a.b", "memory.", "memory.2x"] {
        let env = stub([Envelope::done().bind(target, 1)]).with_memory(&memory);
        let err = environment(env, learn("x".into())).await.unwrap_err();
        let Error::ToolEval(e) = &err else {
            panic!("{target}: {err}")
        };
        assert_eq!(e.tool, "nh_assign");
        assert_eq!(
            e.message,
            format!(
                "invalid memory target `{target}`: use memory.<field> with a top-level field name"
            )
        );
    }
    assert_eq!(
        memory.get(),
        Notes {
            facts: vec!["kept".into()],
            count: 4
        }
    );
}

#[tokio::test]
async fn an_environment_without_memory_refuses_every_memory_field() {
    // `Environment::stub` uses `Memory::none()`.
    let env = stub([Envelope::done().bind("memory.count", 1)]);
    assert_eq!(env.memory().json(), json!({}));
    let err = environment(env, learn("x".into())).await.unwrap_err();
    let Error::ToolValidation(v) = &err else {
        panic!("{err}")
    };
    assert_eq!(v.target, "memory.count");
    assert_eq!(v.type_name, "NoMemory");
    assert_eq!(v.message, "memory has no field `count` (fields: none)");
    assert_eq!(v.path, None);
}
