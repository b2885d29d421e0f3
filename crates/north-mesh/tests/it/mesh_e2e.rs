//! The mesh end to end on the scripted backend: plan → tools → memory, the
//! memory entry's id, the last five memories in the next executor request,
//! the typed plan, and the extension points (a custom tool and agent).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::mesh_common;

use std::sync::Arc;

use futures::future::BoxFuture;
use mesh_common::*;
use north_agent::memory::{MemoryEntry, MemoryFile};
use north_llm::LlmError;
use north_mesh::{
    ExecutionLog, MeshAgent, MeshNote, MeshPhase, MeshStatus, PLANNER_ROLE, RoleAgent, Step,
    Verdict,
};
use north_policy::MeshPolicy;
use north_protocol::{ApprovalPolicy, ToolOutcome, ToolSpec};
use north_tools::{Tool, ToolContext};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

const GOAL: &str = "Find all Rust files and count their lines";
const SUMMARY: &str =
    "Found 2 Rust files: src/main.rs (3 lines) and src/lib.rs (1 line), 4 lines in total.";

fn count_lines_script() -> Value {
    json!([
        plan_turn(&[
            ("List all .rs files with find", Some("bash")),
            ("Count the lines of each file with wc", Some("bash")),
            ("Sum the totals", None),
        ]),
        bash_turn("b1", "find . -name '*.rs'"),
        text_turn("Found src/main.rs and src/lib.rs."),
        bash_turn("b2", "wc -l src/main.rs src/lib.rs"),
        text_turn("3 and 1 lines."),
        text_turn("4 lines in total."),
        text_turn(SUMMARY),
    ])
}

#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, read top to bottom"
)]
#[tokio::test]
async fn find_rust_files_and_count_lines_runs_plan_tools_memory() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let backend = scripted(count_lines_script(), &record);
    let mesh = mesh(&root, backend, policy(&["find", "wc"]), yes(), "scripted");
    let ran = run(&mesh, &root, GOAL).await;
    assert_eq!(ran.report.status, MeshStatus::Completed, "{:?}", ran.events);

    // The plan is the planner's typed output.
    let notes = ran.notes();
    assert!(
        matches!(
            notes[1],
            MeshNote::Phase {
                phase: MeshPhase::Planning
            }
        ),
        "planning is announced before the planner answers: {notes:?}"
    );
    let MeshNote::Plan { steps } = &notes[2] else {
        panic!("{notes:?}")
    };
    assert_eq!(steps.len(), 3);
    assert_eq!(
        steps[0],
        Step {
            description: "List all .rs files with find".into(),
            tool: Some("bash".into())
        }
    );
    assert_eq!(steps[2].tool, None);

    // Tools ran for real.
    let results = ran.results();
    assert_eq!(results.len(), 2, "{results:?}");
    let found = results[0].3.as_str().unwrap();
    assert!(
        found.contains("./src/main.rs") && found.contains("./src/lib.rs"),
        "{found}"
    );
    let counted = results[1].3.as_str().unwrap();
    assert!(counted.contains("3 src/main.rs"), "{counted}");
    assert!(counted.contains("4 total"), "{counted}");
    assert_eq!(ran.report.log.steps.len(), 3);
    assert_eq!(ran.report.log.steps[1].calls[0].tool, "bash");

    // Memory: a correctly hashed entry in the project memory file.
    let entries = MemoryFile::project(&root).load().unwrap();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry.goal, GOAL);
    assert_eq!(entry.summary, SUMMARY);
    let digest = format!(
        "{:x}",
        Sha256::digest(format!("{GOAL}{SUMMARY}").as_bytes())
    );
    assert_eq!(entry.id, digest[..12]);
    assert!(entry.time > 1_700_000_000);
    assert_eq!(ran.report.memory.as_ref(), Some(entry));
    assert!(notes.iter().any(
        |n| matches!(n, MeshNote::MemoryWritten { entry: e, path } if e == entry && path == ".north/memory.json")
    ));

    // The progress stream, in order.
    let kinds: Vec<String> = ran
        .jsonl()
        .iter()
        .map(|v| v["type"].as_str().unwrap().to_owned())
        .filter(|t| {
            matches!(
                t.as_str(),
                "mesh_started"
                    | "plan"
                    | "step_started"
                    | "tool_intent"
                    | "policy"
                    | "tool_result"
                    | "step_finished"
                    | "memory_written"
                    | "mesh_finished"
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "mesh_started",
            "plan",
            "step_started",
            "tool_intent",
            "policy",
            "tool_result",
            "step_finished",
            "step_started",
            "tool_intent",
            "policy",
            "tool_result",
            "step_finished",
            "step_started",
            "step_finished",
            "memory_written",
            "mesh_finished",
        ]
    );

    // The requests: planner, executor per step, memory agent.
    let reqs = requests(&record);
    assert_eq!(reqs.len(), 7);
    assert!(reqs[0]["system"].as_str().unwrap().contains(PLANNER_ROLE));
    assert!(reqs[0]["output_schema"]["properties"]["items"].is_object());
    assert!(message_text(&reqs[1]).contains("You execute plans strictly using tools."));
    assert!(message_text(&reqs[1]).contains("1. List all .rs files with find [bash]"));
    let names: Vec<&str> = reqs[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bash", "read", "write"]);
    let memory_req = &reqs[6];
    assert!(
        memory_req["system"]
            .as_str()
            .unwrap()
            .contains("Summarize execution into durable memory.")
    );
    let log = message_text(memory_req);
    assert!(
        log.contains("find . -name '*.rs'") && log.contains("4 total"),
        "{log}"
    );
}

#[tokio::test]
async fn the_next_run_sees_the_last_five_memories() {
    let dir = project();
    let root = root(&dir);
    let memory = MemoryFile::project(&root);
    let old: Vec<MemoryEntry> = (1..=6)
        .map(|i| MemoryEntry::new(format!("goal {i}"), format!("remembered fact number {i}")))
        .collect();
    for e in &old {
        memory.append(e.clone()).unwrap();
    }
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Say what is known", None)]),
        text_turn("Facts 2 to 6 are known."),
        text_turn("Recalled five earlier facts."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, "What do we know?").await;
    assert_eq!(ran.report.status, MeshStatus::Completed);

    let reqs = requests(&record);
    let executor = message_text(&reqs[1]);
    assert!(executor.contains("Recent memory"), "{executor}");
    for e in &old[1..] {
        assert!(
            executor.contains(&format!("[mem:{}]", e.id)),
            "{} missing",
            e.id
        );
        assert!(executor.contains(&e.summary));
    }
    assert!(
        !executor.contains(&format!("[mem:{}]", old[0].id)),
        "only the last five"
    );
    // Summaries 2..=6 are present; the oldest one's text is not.
    assert!(!executor.contains(&old[0].summary), "{executor}");
    // The new entry joins them for the run after.
    let all = memory.load().unwrap();
    assert_eq!(all.len(), 7);
    assert_eq!(all[6].summary, "Recalled five earlier facts.");
    assert_eq!(memory.recent(5).unwrap()[4], all[6]);
}

#[tokio::test]
async fn a_bad_plan_gets_one_repair_then_fails_without_memory() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        text_turn("I would list the files."),
        text_turn("[{\"step\": \"list\"}]"),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, "list").await;
    let MeshStatus::PlanFailed { message } = &ran.report.status else {
        panic!("{:?}", ran.report.status)
    };
    assert!(
        message.contains("description") || message.contains("unknown"),
        "{message}"
    );
    let reqs = requests(&record);
    assert_eq!(reqs.len(), 2);
    assert!(message_text(&reqs[1]).contains("cannot be used"));
    assert!(MemoryFile::project(&root).load().unwrap().is_empty());
    assert!(matches!(
        ran.notes().last(),
        Some(MeshNote::MeshFinished {
            status: MeshStatus::PlanFailed { .. },
            ..
        })
    ));
}

#[tokio::test]
async fn a_repaired_plan_is_used() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        text_turn("Plan: list files."),
        plan_turn(&[("List the files", Some("bash"))]),
        bash_turn("b1", "ls"),
        text_turn("Listed."),
        text_turn("The project has README.md and src."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, "list").await;
    assert_eq!(ran.report.status, MeshStatus::Completed);
    assert!(ran.results()[0].3.as_str().unwrap().contains("README.md"));
}

/// A custom tool: counts words of a file in the project.
struct WordCount;

impl Tool for WordCount {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "word_count".into(),
            description: "Count the words of a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            approval: ApprovalPolicy::None,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let path = ctx.root.join(args["path"].as_str().unwrap_or_default());
            match std::fs::read_to_string(path) {
                Ok(t) => ToolOutcome::ok(json!(t.split_whitespace().count())),
                Err(e) => ToolOutcome::err(e.to_string()),
            }
        })
    }
}

/// A custom agent: reviews the log with its own role.
struct Reviewer(RoleAgent);

impl MeshAgent for Reviewer {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn run<'a>(
        &'a self,
        log: &'a ExecutionLog,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<String>, LlmError>> {
        Box::pin(async move { Ok(Some(self.0.ask(&log.render(), cancel).await?)) })
    }
}

#[tokio::test]
async fn a_custom_tool_and_agent_plug_in() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Count the words of the README", Some("word_count"))]),
        {"tool_calls": [
            {"id": "w1", "name": "word_count", "args": {"path": "README.md"}},
            {"id": "w2", "name": "word_count", "args": {"path": "../outside.txt"}}
        ]},
        text_turn("The README has 5 words."),
        text_turn("Checked: the count is right."),
        text_turn("README.md has 5 words."),
    ]);
    let backend = scripted(script, &record);
    let reviewer = RoleAgent::new(
        "reviewer",
        "You check results for mistakes.",
        backend.clone(),
        "test-model",
    );
    let mesh = mesh(&root, backend, MeshPolicy::default(), yes(), "scripted")
        .with_tool(
            Arc::new(WordCount),
            |args: &Value, _: &MeshPolicy, _: &ToolContext| match args["path"].as_str() {
                Some(p) if !p.contains("..") => Ok(()),
                _ => Err("Command denied by policy: word_count stays in the project".into()),
            },
        )
        .with_agent(Arc::new(Reviewer(reviewer)));
    let ran = run(&mesh, &root, "How many words has the README?").await;
    assert_eq!(ran.report.status, MeshStatus::Denied);
    let results = ran.results();
    assert_eq!(results[0].3, json!(5));
    assert!(!results[1].1);
    assert!(
        results[1]
            .2
            .as_deref()
            .unwrap()
            .contains("word_count stays in the project")
    );
    let audit = &ran.report.audit;
    assert_eq!(audit.len(), 2);
    assert_eq!(
        (audit[0].verdict, audit[0].check.as_str()),
        (Verdict::Allow, "rule")
    );
    assert_eq!(
        (audit[1].verdict, audit[1].check.as_str()),
        (Verdict::Deny, "rule")
    );

    let reqs = requests(&record);
    assert!(north_test_support::recorded::tool_names(&reqs[1]).contains(&"word_count".to_string()));
    assert!(reqs[1]["system"].is_string());
    assert_eq!(reqs[3]["system"], "You check results for mistakes.");
    // The reviewer's note reaches the memory agent.
    assert!(message_text(&reqs[4]).contains("reviewer: Checked: the count is right."));
    assert!(
        ran.notes()
            .iter()
            .any(|n| matches!(n, MeshNote::AgentNote { agent, .. } if agent == "reviewer"))
    );
}

#[test]
fn concurrent_runs_never_corrupt_the_memory_file() {
    let dir = project();
    let root = root(&dir);
    std::thread::scope(|s| {
        for t in 0..4 {
            let root = root.clone();
            let record = dir.path().join(format!("requests-{t}.jsonl"));
            s.spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    for i in 0..3 {
                        let script = json!([
                            plan_turn(&[("Think", None)]),
                            text_turn("Thought."),
                            text_turn(&format!("run {t}.{i} remembered")),
                        ]);
                        let mesh = mesh(
                            &root,
                            scripted(script, &record),
                            MeshPolicy::default(),
                            yes(),
                            "scripted",
                        );
                        let ran = run(&mesh, &root, &format!("goal {t}.{i}")).await;
                        assert_eq!(ran.report.status, MeshStatus::Completed);
                    }
                });
            });
        }
    });
    let entries = MemoryFile::project(&root).load().unwrap();
    assert_eq!(entries.len(), 12);
    for e in &entries {
        assert_eq!(e.id, north_agent::memory::memory_id(&e.goal, &e.summary));
    }
}
