//! Mesh requirements that were implemented but untested (docs/conformance/mesh.md,
//! "Gaps found"), on the scripted backend with recorded requests: what the
//! planner and the memory agent are sent, the summary cut, the `bash`
//! timeout (default and from `policy.json`), memory time in seconds, and a
//! `policy.json` that an untrusted project cannot use to widen the policy.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::mesh_common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mesh_common::*;
use north_agent::memory::{MemoryFile, memory_id};
use north_agent::redact::Redactor;
use north_agent::trust::{ProjectTrust, TrustStore};
use north_agent::{AgentOptions, Approver};
use north_llm::Backend;
use north_mesh::{MEMORY_ROLE, Mesh, MeshOptions, MeshStatus, PLANNER_ROLE, Verdict};
use north_policy::MeshPolicy;
use north_policy::mesh::DEFAULT_TIMEOUT_SECONDS;
use north_tools::shell::tools::Bash;
use north_tools::{Tool, ToolContext};
use serde_json::{Value, json};

const GOAL: &str = "Count the Rust files under src (goal-marker-7f3a)";

/// A mesh like `mesh_common::mesh`, with the trust and summary length chosen.
fn mesh_with(
    root: &Path,
    backend: Arc<dyn Backend>,
    policy: MeshPolicy,
    trust: ProjectTrust,
    summary_chars: usize,
) -> Mesh {
    let approver: Arc<dyn Approver> = yes();
    let opts = MeshOptions {
        agent: AgentOptions {
            provider: "scripted".into(),
            model: "test-model".into(),
            project_trust: trust,
            ..Default::default()
        },
        summary_chars,
        ..Default::default()
    };
    mesh_from(root, backend, policy, approver, Redactor::default(), opts)
}

/// The text blocks of a request's messages, as (role, text).
fn texts(req: &Value) -> Vec<(String, String)> {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            let role = m["role"].as_str().unwrap().to_owned();
            m["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(move |b| b["text"].as_str().map(|t| (role.clone(), t.to_owned())))
        })
        .collect()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// §4.2: the planner's input is the user's goal, sent as `Goal: <goal>`.
#[tokio::test]
async fn the_planner_request_holds_the_goal() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Say how many files there are", None)]),
        text_turn("Two."),
        text_turn("src holds two Rust files."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, GOAL).await;
    assert_eq!(ran.report.status, MeshStatus::Completed, "{:?}", ran.events);
    let reqs = requests(&record);
    let planner = &reqs[0];
    assert!(planner["system"].as_str().unwrap().contains(PLANNER_ROLE));
    assert_eq!(
        texts(planner),
        [("user".to_owned(), format!("Goal: {GOAL}"))],
        "the planner gets the goal as its one user message"
    );
    // The goal is the planner's input, not part of its fixed instructions.
    assert!(!planner["system"].as_str().unwrap().contains(GOAL));
}

/// §4.4: the memory agent's input is the execution log with the goal and
/// the plan, before the tool results.
#[tokio::test]
async fn the_memory_agent_request_holds_the_goal_and_the_plan() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[
            ("List the files of src", Some("bash")),
            ("Say how many are Rust files", None),
        ]),
        bash_turn("b1", "ls src"),
        text_turn("lib.rs and main.rs."),
        text_turn("Two Rust files."),
        text_turn("src holds lib.rs and main.rs: two Rust files."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, GOAL).await;
    assert_eq!(ran.report.status, MeshStatus::Completed, "{:?}", ran.events);
    let reqs = requests(&record);
    assert_eq!(reqs.len(), 5);
    let memory = &reqs[4];
    assert!(memory["system"].as_str().unwrap().contains(MEMORY_ROLE));
    let sent = texts(memory);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, "user");
    let log = &sent[0].1;
    let goal_at = log.find(&format!("Goal: {GOAL}")).expect(log);
    let plan_at = log.find("Plan:\n").expect(log);
    let step1 = log.find("1. List the files of src [bash]").expect(log);
    let step2 = log.find("2. Say how many are Rust files").expect(log);
    let result = log.find("main.rs").expect(log);
    assert!(
        goal_at < plan_at && plan_at < step1 && step1 < step2,
        "{log}"
    );
    assert!(step2 < log.find("Execution:").expect(log), "{log}");
    assert!(
        step2 < result,
        "the plan comes before the tool results: {log}"
    );
}

/// §4.4 "concise summary": the stored summary is cut to
/// `MeshOptions::summary_chars` (600 by default) characters, and the memory
/// agent is told that limit.
#[tokio::test]
async fn a_long_summary_is_stored_cut_to_summary_chars() {
    assert_eq!(MeshOptions::default().summary_chars, 600);
    // 1,000 characters, most of them two bytes long: the cut counts characters.
    let long: String = (0..100).map(|i| format!("Résumé {i:02}. ")).collect();
    let long = &long[..long.char_indices().nth(1_000).unwrap().0];
    assert_eq!(long.chars().count(), 1_000);

    for (chars, opts) in [(600, MeshOptions::default().summary_chars), (40, 40)] {
        let dir = project();
        let root = root(&dir);
        let record = dir.path().join("requests.jsonl");
        let script = json!([
            plan_turn(&[("Summarize the project", None)]),
            text_turn("It is a demo."),
            text_turn(long),
        ]);
        let mesh = mesh_with(
            &root,
            scripted(script, &record),
            MeshPolicy::default(),
            ProjectTrust::Trusted { store: None },
            opts,
        );
        let ran = run(&mesh, &root, GOAL).await;
        assert_eq!(ran.report.status, MeshStatus::Completed);
        let expected: String = long.chars().take(chars).collect();
        let entries = MemoryFile::project(&root).load().unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].summary.chars().count(), chars);
        assert_eq!(entries[0].summary, expected);
        assert_eq!(entries[0].id, memory_id(GOAL, &expected));
        assert_eq!(ran.report.memory.as_ref(), Some(&entries[0]));
        let system = requests(&record)[2]["system"].as_str().unwrap().to_owned();
        assert!(
            system.contains(&format!("at most {chars} characters")),
            "{system}"
        );
    }
}

/// §3 / §4.6: `bash` stops a command after 20 s by default. The policy's
/// default timeout is 20 s, the `bash` tool takes its timeout from the
/// policy, and the model is told the 20 s.
#[tokio::test]
async fn bash_defaults_to_a_20_second_timeout() {
    assert_eq!(DEFAULT_TIMEOUT_SECONDS, 20);
    let default = MeshPolicy::default();
    assert_eq!(default.timeout_seconds, None, "no override in the default");
    assert_eq!(default.timeout(), Duration::from_secs(20));
    assert_eq!(Bash::new().policy().timeout(), Duration::from_secs(20));
    assert_eq!(Bash::default().policy(), &default);
    let sleepy = policy(&["sleep"]);
    assert_eq!(sleepy.timeout(), Duration::from_secs(20));

    // The default lets a one-second command finish.
    let dir = project();
    let root = root(&dir);
    let mut ctx = ToolContext::new(root.clone());
    // As the mesh's gate leaves it: the policy's approval of this line.
    ctx.approved =
        north_policy::ShellPolicy::mesh(&root, &sleepy, north_policy::AllowRules::default(), true)
            .approve("sleep 1", None, north_policy::Consent::None)
            .ok();
    let out = Bash::with_policy(sleepy.clone())
        .call(json!({"cmd": "sleep 1"}), &ctx)
        .await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.error, None);

    // The mesh runs `bash` with that timeout and tells the model so.
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Wait a second", Some("bash"))]),
        bash_turn("s1", "sleep 1"),
        text_turn("Waited."),
        text_turn("Waited one second."),
    ]);
    let mesh = mesh(&root, scripted(script, &record), sleepy, yes(), "scripted");
    assert_eq!(mesh.policy().timeout(), Duration::from_secs(20));
    let ran = run(&mesh, &root, "wait").await;
    assert_eq!(ran.report.status, MeshStatus::Completed, "{:?}", ran.events);
    let results = ran.results();
    assert!(results[0].1, "{results:?}");
    assert_eq!(results[0].2, None);
    let reqs = requests(&record);
    let told = "commands stop after 20 s";
    assert!(reqs[0]["system"].as_str().unwrap().contains(told));
    assert!(message_text(&reqs[1]).contains(told));
}

/// §10 "Tool execution timeout": `timeout_seconds` in `policy.json` sets
/// when `bash` stops a command; the result says it timed out.
#[tokio::test]
async fn policy_json_timeout_seconds_stops_a_command_at_its_limit() {
    let dir = project();
    let root = root(&dir);
    std::fs::write(
        root.join("policy.json"),
        json!({"allowed_commands": ["sleep"], "timeout_seconds": 1}).to_string(),
    )
    .unwrap();
    let policy = MeshPolicy::load_project(&root, true).unwrap();
    assert_eq!(policy.timeout(), Duration::from_secs(1));
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Wait five seconds", Some("bash"))]),
        bash_turn("s1", "sleep 5"),
        text_turn("It timed out."),
        text_turn("sleep 5 timed out after 1 s."),
    ]);
    let mesh = mesh(&root, scripted(script, &record), policy, yes(), "scripted");
    let ran = run(&mesh, &root, "wait").await;
    let results = ran.results();
    assert_eq!(results.len(), 1, "{:?}", ran.events);
    assert!(!results[0].1, "a timed-out command fails: {results:?}");
    assert_eq!(
        results[0].2.as_deref(),
        Some("command timed out after 1000 ms and was interrupted")
    );
    assert!(message_text(&requests(&record)[0]).contains("Goal: wait"));
    assert!(
        requests(&record)[0]["system"]
            .as_str()
            .unwrap()
            .contains("commands stop after 1 s")
    );
    // The timeout is not a policy refusal: the command was allowed.
    assert!(ran.report.audit.iter().all(|a| a.verdict == Verdict::Allow));
}

/// §5.1: `time` is a Unix timestamp in seconds.
#[tokio::test]
async fn memory_time_is_in_unix_seconds() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Note the time", None)]),
        text_turn("Noted."),
        text_turn("Noted the time."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let before = now_secs();
    let ran = run(&mesh, &root, "note the time").await;
    let after = now_secs();
    assert_eq!(ran.report.status, MeshStatus::Completed);
    // As stored on disk: an integer number of seconds (a millisecond or
    // microsecond value would be ~1,000 times larger).
    let raw: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".north/memory.json")).unwrap())
            .unwrap();
    let time = raw[0]["time"].as_u64().expect("time is an integer");
    assert!(
        before - 120 <= time && time <= after + 120,
        "time {time} is not seconds near {before}..{after}"
    );
    assert_eq!(MemoryFile::project(&root).load().unwrap()[0].time, time);
}

/// A widening `policy.json` (curl, wc, larger limits).
fn widening_policy() -> Value {
    json!({
        "allowed_commands": ["ls", "curl", "wc"],
        "write_enabled": true,
        "max_file_size": 5_000_000,
        "timeout_seconds": 600,
        "max_output": 100_000
    })
}

/// Deliberate difference "policy.json applies as written only when
/// trusted": untrusted, it can only narrow the balanced default.
#[test]
fn an_untrusted_policy_json_only_narrows_the_default() {
    let dir = project();
    let root = root(&dir);
    std::fs::write(root.join("policy.json"), widening_policy().to_string()).unwrap();

    // Trust is decided as North decides it: the user's store says nothing yet.
    let store = TrustStore::at(dir.path().join("trusted.json"));
    let report = store.evaluate(&root).unwrap();
    assert!(!report.applies());
    assert!(
        report
            .wants
            .iter()
            .any(|w| w == "policy.json sets allowed_commands += curl"),
        "{:?}",
        report.wants
    );
    let untrusted = MeshPolicy::load_project(&root, report.applies()).unwrap();
    assert_eq!(untrusted.allowed_commands, ["ls"]);
    assert!(untrusted.write_enabled);
    assert_eq!(untrusted.max_file_size, 200_000);
    assert_eq!(untrusted.timeout(), Duration::from_secs(20));
    assert_eq!(untrusted.output_chars(), 4_000);
    assert!(untrusted.check_command("curl --version").is_err());
    assert!(untrusted.widenings_over(&MeshPolicy::default()).is_empty());

    // Trusted, the same file applies as written.
    let report = store.trust(&root).unwrap();
    assert!(report.applies());
    let trusted = MeshPolicy::load_project(&root, report.applies()).unwrap();
    assert_eq!(
        trusted,
        MeshPolicy::load(&root.join("policy.json")).unwrap()
    );
    assert_eq!(trusted.allowed_commands, ["ls", "curl", "wc"]);
    assert_eq!(trusted.timeout(), Duration::from_secs(600));

    // A narrowing file applies untrusted.
    let narrow = json!({"allowed_commands": ["ls", "grep"], "write_enabled": false,
                        "max_file_size": 10, "timeout_seconds": 1, "max_output": 50});
    std::fs::write(root.join("policy.json"), narrow.to_string()).unwrap();
    let narrowed = MeshPolicy::load_project(&root, false).unwrap();
    assert_eq!(narrowed.allowed_commands, ["ls", "grep"]);
    assert!(!narrowed.write_enabled);
    assert_eq!(narrowed.max_file_size, 10);
    assert_eq!(narrowed.timeout(), Duration::from_secs(1));
    assert_eq!(narrowed.output_chars(), 50);
    // narrowed_by keeps only what both allow, whichever side is wider.
    let written = MeshPolicy::load(&root.join("policy.json")).unwrap();
    assert_eq!(MeshPolicy::default().narrowed_by(&written), narrowed);
    let wide: MeshPolicy = serde_json::from_value(widening_policy()).unwrap();
    assert_eq!(
        wide.narrowed_by(&MeshPolicy::default()).allowed_commands,
        ["ls"]
    );
}

/// The mesh in an untrusted project refuses what its `policy.json` tried to
/// add; the same file, trusted, lets the command run.
#[tokio::test]
async fn an_untrusted_project_mesh_refuses_the_widened_command() {
    let dir = project();
    let root = root(&dir);
    std::fs::write(root.join("policy.json"), widening_policy().to_string()).unwrap();
    let store = TrustStore::at(dir.path().join("trusted.json"));
    let trusted = store.evaluate(&root).unwrap().applies();
    assert!(!trusted);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Fetch and count", Some("bash"))]),
        {"tool_calls": [
            {"id": "c1", "name": "bash", "args": {"cmd": "curl --version"}},
            {"id": "c2", "name": "bash", "args": {"cmd": "wc -l README.md"}},
            {"id": "c3", "name": "bash", "args": {"cmd": "ls"}}
        ]},
        text_turn("curl and wc were refused; ls ran."),
        text_turn("curl and wc are not allowed here."),
    ]);
    let mesh = mesh_with(
        &root,
        scripted(script, &record),
        MeshPolicy::load_project(&root, trusted).unwrap(),
        ProjectTrust::Untrusted,
        600,
    );
    let ran = run(&mesh, &root, "fetch and count").await;
    assert_eq!(ran.report.status, MeshStatus::Denied, "{:?}", ran.events);
    let results = ran.results();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!results[0].1);
    assert_eq!(
        results[0].2.as_deref(),
        Some("Command denied by policy: `curl` is not in allowed_commands")
    );
    assert!(!results[1].1);
    assert_eq!(
        results[1].2.as_deref(),
        Some("Command denied by policy: `wc` is not in allowed_commands")
    );
    assert!(results[2].1, "{results:?}");
    assert!(results[2].3.as_str().unwrap().contains("README.md"));
    let verdicts: Vec<Verdict> = ran.report.audit.iter().map(|a| a.verdict).collect();
    assert_eq!(verdicts, [Verdict::Deny, Verdict::Deny, Verdict::Allow]);
    // The model was told only the narrowed list.
    let told = requests(&record)[0]["system"].as_str().unwrap().to_owned();
    assert!(told.contains("bash may run only: ls ("), "{told}");

    // Trusted, the same file lets `wc` run.
    let trusted = store.trust(&root).unwrap().applies();
    assert!(trusted);
    let record = dir.path().join("requests-trusted.jsonl");
    let script = json!([
        plan_turn(&[("Count", Some("bash"))]),
        bash_turn("c1", "wc -l README.md"),
        text_turn("2 lines."),
        text_turn("README.md has 2 lines."),
    ]);
    let mesh = mesh_with(
        &root,
        scripted(script, &record),
        MeshPolicy::load_project(&root, trusted).unwrap(),
        ProjectTrust::Trusted { store: None },
        600,
    );
    let ran = run(&mesh, &root, "count").await;
    assert_eq!(ran.report.status, MeshStatus::Completed, "{:?}", ran.events);
    let results = ran.results();
    assert!(results[0].1, "{results:?}");
    assert!(results[0].3.as_str().unwrap().contains("2 README.md"));
}
