//! One test per defect found once, named after what went wrong.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::sync::Arc;

use north_agent::AgentOptions;
use north_llm::ScriptedBackend;
use north_protocol::{Capability, Role, TraceEvent, TraceKind};
use support::{QueueApprover, agent_for, project};

const OLD_SESSION: &str = "20261123-230919-fede";

fn install_old_session(root: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session-v0");
    let dir = root.join(".north/sessions").join(OLD_SESSION);
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["checkpoint.json", "trace.jsonl"] {
        std::fs::copy(fixture.join(name), dir.join(name)).unwrap();
    }
}

/// Roles, trace kinds and capabilities became enums; files written while
/// they were strings must still load, resume and keep their wire names.
#[tokio::test]
async fn a_session_saved_before_roles_kinds_and_capabilities_were_typed_still_resumes() {
    let dir = project();
    install_old_session(dir.path());
    let requests = dir.path().join("requests.jsonl");
    let backend = ScriptedBackend::from_json(r#"[{"text": "Still here."}]"#)
        .unwrap()
        .record_to(&requests)
        .unwrap();
    let mut run = agent_for(
        dir.path(),
        Arc::new(backend),
        QueueApprover::new([]),
        AgentOptions::default(),
        Some(OLD_SESSION),
    );
    let roles: Vec<Role> = run.agent.messages().iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert!(
        run.agent.state().capabilities_granted.is_empty(),
        "a resumed session carries no grants: the user grants again in this run"
    );

    run.turn("and now?").await;
    let sent: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&requests)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "the old history and the new input");
    assert_eq!(messages[0]["content"][0]["text"], "read a.txt");

    let cp = run.checkpoint();
    assert_eq!(cp.recent_messages[0].role, Role::User);
    let written = serde_json::to_value(&cp).unwrap();
    assert_eq!(written["recent_messages"][0]["role"], "user");
    assert_eq!(
        written["state"]["capabilities_granted"],
        serde_json::json!([])
    );

    let trace = std::fs::read_to_string(
        dir.path()
            .join(".north/sessions")
            .join(OLD_SESSION)
            .join("trace.jsonl"),
    )
    .unwrap();
    let kinds: Vec<TraceKind> = trace
        .lines()
        .map(|l| serde_json::from_str::<TraceEvent>(l).unwrap().kind)
        .collect();
    assert!(kinds.contains(&TraceKind::NotesPatch));
    assert!(kinds.contains(&TraceKind::Resume), "{kinds:?}");
    assert!(
        !kinds.iter().any(|k| matches!(k, TraceKind::Other(_))),
        "every kind North writes is known: {kinds:?}"
    );
}

/// A checkpoint holding a capability both granted and pending (written by an
/// older version or by hand) is repaired on load instead of asking again.
#[tokio::test]
async fn a_capability_both_granted_and_pending_is_repaired_on_load() {
    let dir = project();
    install_old_session(dir.path());
    let run = agent_for(
        dir.path(),
        Arc::new(ScriptedBackend::from_json("[]").unwrap()),
        QueueApprover::new([]),
        AgentOptions::default(),
        Some(OLD_SESSION),
    );
    let state = run.agent.state();
    assert!(state.capabilities_granted.is_empty(), "never carried over");
    assert_eq!(
        state.capabilities_pending,
        [Capability::Other("fs.write".into())],
        "granted is never pending, and nothing is listed twice"
    );
}

/// A system prompt that failed to render used to be replaced by an empty
/// one and sent: the turn must stop with a clear error and send nothing.
#[tokio::test]
async fn a_system_prompt_failure_stops_the_turn_instead_of_sending_an_empty_prompt() {
    use north_agent::TurnEnd;
    use north_agent::context::{SYSTEM_PROMPT_KEY, SYSTEM_PROMPT_NS};
    use north_prompt::PromptOverrides;
    use north_protocol::{ErrorKind, Event};

    let dir = project();
    let requests = dir.path().join("requests.jsonl");
    let backend = ScriptedBackend::from_json(r#"[{"text": "never sent"}]"#)
        .unwrap()
        .record_to(&requests)
        .unwrap();
    let mut overrides = PromptOverrides::new();
    overrides.set(
        SYSTEM_PROMPT_NS,
        SYSTEM_PROMPT_KEY,
        ["rules"],
        "You are ${rulez}",
    );
    let opts = AgentOptions {
        prompt_overrides: Some(overrides),
        ..AgentOptions::default()
    };
    let mut run = agent_for(
        dir.path(),
        Arc::new(backend),
        QueueApprover::new([]),
        opts,
        None,
    );
    let end = run.turn("hello").await;
    let TurnEnd::PromptFailed(message) = end else {
        panic!("the turn must stop on a prompt failure, ended {end:?}");
    };
    assert!(message.contains("rulez"), "{message}");
    assert!(message.contains("nothing was sent"), "{message}");
    assert!(
        std::fs::read_to_string(&requests)
            .unwrap_or_default()
            .is_empty(),
        "no request reached the model"
    );
    assert!(run.events().iter().any(|e| matches!(
        e,
        Event::Error { kind: ErrorKind::Config, message } if message.contains("rulez")
    )));
}

/// A tool that panics (a bug) used to unwind through the turn and end the
/// session; now the call fails, the model is told, and the turn goes on.
#[tokio::test]
async fn a_panicking_tool_fails_its_call_instead_of_ending_the_session() {
    use futures::future::BoxFuture;
    use north_agent::TurnEnd;
    use north_protocol::{ApprovalPolicy, Event, ToolOutcome, ToolSpec};
    use north_tools::{Tool, ToolContext};

    struct Broken;
    impl Tool for Broken {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: "broken".into(),
                description: "always panics".into(),
                input_schema: serde_json::json!({"type": "object"}),
                approval: ApprovalPolicy::None,
            }
        }
        fn call<'a>(
            &'a self,
            _args: serde_json::Value,
            _ctx: &'a ToolContext,
        ) -> BoxFuture<'a, ToolOutcome> {
            Box::pin(async { panic!("index out of bounds in broken") })
        }
    }

    let dir = project();
    let requests = dir.path().join("req.jsonl");
    let backend = ScriptedBackend::from_json(
        r#"[{"tool_calls": [{"id": "b1", "name": "broken", "args": {}}]}, {"text": "STILL-HERE"}]"#,
    )
    .unwrap()
    .record_to(&requests)
    .unwrap();
    let mut tools = north_tools::north_tools();
    tools.register(Arc::new(Broken));
    let mut run = support::agent_with_tools(
        dir.path(),
        Arc::new(backend),
        QueueApprover::new([]),
        AgentOptions::default(),
        None,
        tools,
    );
    let end = run.turn("use the broken tool").await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    let second = std::fs::read_to_string(&requests)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    assert!(second.contains("failed unexpectedly"), "{second}");
    assert!(second.contains("index out of bounds in broken"), "{second}");
    assert!(run.events().iter().any(|e| matches!(
        e,
        Event::AssistantText { text } if text.contains("STILL-HERE")
    )));
}
