//! `north mesh` end to end: the real binary on the scripted backend and
//! against the fake Anthropic server — progress, JSONL events, memory,
//! exit codes, secrets kept out of `bash`, and the audit in trace and log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use north_agent::memory::{MemoryEntry, MemoryFile, memory_id};
use north_test_support::{FakeServer, Reply, anthropic};
use serde_json::{Value, json};

const GOAL: &str = "Find all Rust files and count their lines";
const SUMMARY: &str =
    "2 Rust files in src: lib.rs (1 line) and main.rs (3 lines), 4 lines in total.";
const FAKE_KEY: &str = "sk-ant-MESHCLILEAKCHECK-5e1d2c3b4a";

use crate::common;
use common::mesh_script::{bash, plan, say};
use common::text;

/// The shared sandbox with a small Rust project, plus mesh helpers.
struct Sandbox {
    inner: common::Sandbox,
}

impl std::ops::Deref for Sandbox {
    type Target = common::Sandbox;
    fn deref(&self) -> &common::Sandbox {
        &self.inner
    }
}

impl Sandbox {
    fn new() -> Self {
        let inner = common::Sandbox::new();
        let p = inner.project();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::write(
            p.join("src/main.rs"),
            "fn main() {\n    println!(\"hi\");\n}\n",
        )
        .unwrap();
        std::fs::write(p.join("src/lib.rs"), "// lib\n").unwrap();
        Sandbox { inner }
    }

    /// Writes the user's own `policy.json` and trusts the project, as its
    /// author does once (`north trust`), so the policy applies as written.
    fn policy(&self, value: Value) {
        std::fs::write(self.project().join("policy.json"), value.to_string()).unwrap();
        let out = self.north().arg("trust").output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }

    /// `north mesh` on a script, recording requests.
    fn mesh(&self, script: &Value, extra: &[&str]) -> Command {
        let script = self.file("script.json", script);
        let mut cmd = self.north();
        cmd.arg("mesh")
            .arg("--script")
            .arg(script)
            .arg("--record-requests")
            .arg(self.requests_path())
            .args(extra);
        cmd
    }

    fn requests_path(&self) -> PathBuf {
        self.dir.path().join("requests.jsonl")
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.requests_path())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn memory(&self) -> Vec<MemoryEntry> {
        MemoryFile::project(&self.project()).load().unwrap()
    }

    fn trace(&self) -> Vec<Value> {
        let sessions = self.project().join(".north/sessions");
        let session = std::fs::read_dir(sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        std::fs::read_to_string(session.path().join("trace.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Every file North wrote (the test's own script holds the key on purpose).
    fn everything_written(&self) -> String {
        let mut all = String::new();
        for entry in self.files() {
            if entry.file_name().is_some_and(|n| n == "script.json") {
                continue;
            }
            all.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry).unwrap_or_default(),
            ));
        }
        all
    }
}

fn output(mut cmd: Command) -> Output {
    cmd.output().unwrap()
}

fn count_lines_script() -> Value {
    json!([
        plan(&[
            ("List the files in src", Some("bash")),
            ("Count the lines of each .rs file", Some("bash")),
            ("Add up the totals", None),
        ]),
        bash("b1", "ls src"),
        say("src has lib.rs and main.rs."),
        bash("b2", "wc -l src/lib.rs src/main.rs"),
        say("lib.rs has 1 line, main.rs 3."),
        say("4 lines in total."),
        say(SUMMARY),
    ])
}

#[test]
fn a_goal_runs_plan_tools_memory_with_progress() {
    let sb = Sandbox::new();
    sb.policy(json!({"allowed_commands": ["ls", "wc"], "write_enabled": false}));
    let out = output(sb.mesh(&count_lines_script(), &["--yes", GOAL]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    insta::assert_snapshot!("mesh_progress", text(&out.stdout));
    assert!(text(&out.stderr).contains("north: session "));
    let memory = sb.memory();
    assert_eq!(memory.len(), 1);
    assert_eq!(memory[0].goal, GOAL);
    assert_eq!(memory[0].summary, SUMMARY);
    assert_eq!(memory[0].id, memory_id(GOAL, SUMMARY));
}

#[test]
fn json_prints_one_event_per_line() {
    let sb = Sandbox::new();
    sb.policy(json!({"allowed_commands": ["ls", "wc"]}));
    let out = output(sb.mesh(&count_lines_script(), &["--yes", "--json", GOAL]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types[0], "mesh_started");
    assert_eq!(events[1], json!({"type": "phase", "phase": "planning"}));
    assert_eq!(types[2], "plan");
    assert_eq!(*types.last().unwrap(), "mesh_finished");
    assert_eq!(events.last().unwrap()["status"], "completed");
    assert_eq!(events[0]["policy"]["allowed_commands"], json!(["ls", "wc"]));
    assert_eq!(
        events[2]["steps"][2],
        json!({"description": "Add up the totals", "tool": null})
    );
    for t in [
        "step_started",
        "tool_intent",
        "policy",
        "tool_result",
        "step_finished",
        "memory_written",
    ] {
        assert!(types.contains(&t), "{t} missing: {types:?}");
    }
    let written = events
        .iter()
        .find(|e| e["type"] == "memory_written")
        .unwrap();
    assert_eq!(written["entry"]["id"], memory_id(GOAL, SUMMARY));
}

#[test]
fn the_next_run_sees_the_last_five_memories() {
    let sb = Sandbox::new();
    let memory = MemoryFile::project(&sb.project());
    let old: Vec<MemoryEntry> = (1..=6)
        .map(|i| MemoryEntry::new(format!("goal {i}"), format!("fact {i} about the project")))
        .collect();
    for e in &old {
        memory.append(e.clone()).unwrap();
    }
    let script = json!([
        plan(&[("Recall", None)]),
        say("Recalled."),
        say("Recalled facts 2 to 6.")
    ]);
    let out = output(sb.mesh(&script, &["What do we know?"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 3);
    let executor = reqs[1]["messages"].to_string();
    for e in &old[1..] {
        assert!(executor.contains(&format!("[mem:{}]", e.id)), "{executor}");
    }
    assert!(!executor.contains(&format!("[mem:{}]", old[0].id)));
    assert_eq!(sb.memory().len(), 7);
}

#[test]
fn a_secret_in_north_environment_is_invisible_to_bash() {
    let sb = Sandbox::new();
    sb.policy(json!({"allowed_commands": ["printenv"]}));
    let script = json!([
        plan(&[("Show the environment", Some("bash"))]),
        bash("e1", "printenv"),
        say("Printed the environment."),
        say("The shell environment has PATH and NORTH_SHELL only."),
    ]);
    let secrets = [
        ("DEPLOY_TOKEN", "tok-MESHSECRET-41d8cd98f00b204e"),
        ("ANTHROPIC_API_KEY", FAKE_KEY),
        ("DATABASE_PASSWORD", "pw-MESHSECRET-9e107d9d372bb682"),
        ("PLAIN_SETTING", "plain-value-not-passed"),
    ];
    let mut cmd = sb.mesh(&script, &["--yes", "show env"]);
    for (k, v) in secrets {
        cmd.env(k, v);
    }
    let out = output(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // What the model saw (recorded before any redaction).
    let seen = sb.requests()[2]["messages"].to_string();
    assert!(seen.contains("NORTH_SHELL=1"), "{seen}");
    assert!(seen.contains("PATH="), "{seen}");
    for (k, v) in secrets {
        assert!(!seen.contains(v), "{k} reached bash: {seen}");
        assert!(!seen.contains(&format!("{k}=")), "{k} reached bash");
    }
    let all = sb.everything_written() + &text(&out.stdout) + &text(&out.stderr);
    for (k, v) in &secrets[..3] {
        assert!(!all.contains(v), "{k} leaked");
    }
}

#[test]
fn every_policy_decision_is_in_the_trace_and_the_log() {
    let sb = Sandbox::new();
    let script = json!([
        plan(&[("Look around", Some("bash"))]),
        {"tool_calls": [
            {"id": "a1", "name": "bash", "args": {"cmd": "ls"}},
            {"id": "a2", "name": "bash", "args": {"cmd": "cat README.md; rm -rf src"}},
            {"id": "a3", "name": "read", "args": {"path": "../../etc/passwd"}}
        ]},
        say("Listed; two refused."),
        say("Listed the project; an injection and an escape were refused."),
    ]);
    let out = output(sb.mesh(&script, &["--yes", "look around"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(sb.project().join("src/main.rs").exists());
    let trace = sb.trace();
    let decisions: Vec<(String, String)> = trace
        .iter()
        .filter(|e| e["kind"] == "policy")
        .map(|e| {
            (
                e["data"]["verdict"].as_str().unwrap().to_owned(),
                e["data"]["subject"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("allow".to_owned(), "ls".to_owned()),
            ("deny".to_owned(), "cat README.md; rm -rf src".to_owned()),
            ("deny".to_owned(), "../../etc/passwd".to_owned()),
        ]
    );
    let log = std::fs::read_to_string(sb.home().join("state/north/north.log")).unwrap();
    assert!(log.contains("policy decision: allow"), "{log}");
    let denials: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("policy decision: deny"))
        .collect();
    assert_eq!(denials.len(), 2, "{log}");
    assert!(denials[0].contains("cat README.md; rm -rf src"));
    assert!(denials[1].contains("check=sandbox"));
    // The human transcript shows the refusals with the spec's message.
    let shown = text(&out.stdout);
    assert!(
        shown.contains("✗ failed: Command denied by policy"),
        "{shown}"
    );
}

#[test]
fn exit_codes_follow_north_exec() {
    // 3: a command the policy allows, but no --allow-shell or --yes.
    let sb = Sandbox::new();
    let script = json!([
        plan(&[("List", Some("bash"))]),
        bash("l1", "ls"),
        say("Not approved."),
        say("Listing was not approved."),
    ]);
    let out = output(sb.mesh(&script, &["list"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("pass --allow-shell or --yes"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(sb.memory().len(), 1, "a denied call still ends in memory");

    // 1: the planner never gives a usable plan; nothing is remembered.
    let sb = Sandbox::new();
    let out = output(sb.mesh(&json!([say("no plan"), say("still none")]), &["plan this"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no usable plan"));
    assert!(sb.memory().is_empty());

    // 1: the provider fails mid-run.
    let sb = Sandbox::new();
    let script = json!([
        plan(&[("List", Some("bash"))]),
        {"text": "partial", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]);
    let out = output(sb.mesh(&script, &["--yes", "list"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(sb.memory().is_empty());

    // 4: a step hits the step limit.
    let sb = Sandbox::new();
    let script = json!([
        plan(&[("List", Some("bash"))]),
        bash("l1", "ls"),
        say("Done anyway."),
    ]);
    let out = output(sb.mesh(&script, &["--yes", "--max-steps", "1", "list"]));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));

    // 2: bad policy input.
    let sb = Sandbox::new();
    let out = output(sb.mesh(&json!([]), &["--policy", "missing.json", "x"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("missing.json"));
    let out = output(sb.mesh(&json!([]), &["--preset", "lenient", "x"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown policy preset `lenient`"));
    sb.policy(json!({"allowed_command": ["ls"]}));
    let out = output(sb.mesh(&json!([]), &["--json", "x"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("malformed policy file"),
        "{}",
        text(&out.stderr)
    );
    let event: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(event["type"], "error");
    assert!(
        sb.requests().is_empty(),
        "no model call before the policy is valid"
    );
}

#[test]
fn presets_and_flags_choose_the_policy() {
    let sb = Sandbox::new();
    // policy.json would allow echo; the preset replaces it.
    sb.policy(json!({"allowed_commands": ["echo"]}));
    let script = json!([
        plan(&[("Echo", Some("bash"))]),
        {"tool_calls": [
            {"id": "c1", "name": "bash", "args": {"cmd": "echo hi"}},
            {"id": "c2", "name": "bash", "args": {"cmd": "find src -name main.rs"}}
        ]},
        say("Echo refused, find ran."),
        say("Under the conservative preset echo is refused."),
    ]);
    let out = output(sb.mesh(
        &script,
        &[
            "--yes",
            "--json",
            "--preset",
            "conservative",
            "--max-output",
            "5",
            "echo",
        ],
    ));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["policy"]["write_enabled"], false);
    assert_eq!(events[0]["policy"]["max_output"], 5);
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results[0]["ok"], false);
    assert_eq!(
        results[0]["details"]["error"],
        "Command denied by policy: `echo` is not in allowed_commands"
    );
    assert_eq!(results[1]["ok"], true);
    let cut = results[1]["details"]["output"].as_str().unwrap();
    assert!(
        cut.starts_with("sr") && cut.contains("characters truncated"),
        "{cut}"
    );
}

#[test]
fn help_documents_policy_and_exit_codes() {
    let sb = Sandbox::new();
    let mut cmd = sb.north();
    cmd.args(["mesh", "--help"]);
    let out = output(cmd);
    assert!(out.status.success());
    insta::assert_snapshot!("mesh_help", text(&out.stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_run_against_anthropic_with_native_tool_use() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&[
        "[{\"description\": \"List the files in src\", \"tool\": \"bash\"},",
        " {\"description\": \"Count the lines\", \"tool\": \"bash\"}]",
    ])));
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .tool_use("toolu_01", "bash", &["{\"cmd\":", " \"ls src\"}"])
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["Two files."])));
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .tool_use(
                "toolu_02",
                "bash",
                &["{\"cmd\": \"wc -l src/lib.rs src/main.rs\"}"],
            )
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["4 lines."])));
    server.push(Reply::sse(anthropic::text_stream(&[SUMMARY])));
    let sb = Sandbox::new();
    sb.policy(json!({"allowed_commands": ["ls", "wc"]}));
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", FAKE_KEY)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["mesh", "--yes", GOAL]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = server.requests_to("/v1/messages");
    assert_eq!(reqs.len(), 6);
    let executor = reqs[1].json();
    assert_eq!(executor["model"], "claude-sonnet-4-5");
    let tools: Vec<&str> = executor["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["bash", "read", "write"]);
    let after_tool = reqs[2].json()["messages"].to_string();
    assert!(
        after_tool.contains("tool_result") && after_tool.contains("main.rs"),
        "{after_tool}"
    );
    let memory = sb.memory();
    assert_eq!(memory.len(), 1);
    assert_eq!(memory[0].id, memory_id(GOAL, SUMMARY));
    let shown = text(&out.stdout);
    assert!(shown.contains("Step 2/2: Count the lines"), "{shown}");
    assert!(shown.contains(&format!(
        "Memory {} saved to .north/memory.json",
        memory[0].id
    )));
    assert!(!sb.everything_written().contains(FAKE_KEY));
}

#[test]
fn the_documented_mesh_script_example_runs_as_the_readme_says() {
    let sb = Sandbox::new();
    sb.policy(json!({"allowed_commands": ["ls"], "write_enabled": false}));
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mesh.json");
    let out = sb
        .north()
        .arg("mesh")
        .arg("--script")
        .arg(&example)
        .args(["--yes", "Count the files"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("Step 1/2: List the files"), "{stdout}");
    assert!(
        stdout.contains("Step 2/2: Say how many there are"),
        "{stdout}"
    );
    let memory = sb.memory();
    assert_eq!(memory.len(), 1);
    assert_eq!(memory[0].summary, "Listed the project's top-level files.");
}

/// mesh.md's environment: `MODEL` names the model (below `--model` and
/// `NORTH_MODEL`), `WORKDIR` the project when `--path` is not given.
#[test]
fn model_and_workdir_come_from_the_environment() {
    let sb = Sandbox::new();
    sb.policy(json!({"allowed_commands": ["ls"], "write_enabled": false}));
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mesh.json");
    let elsewhere = sb.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = |extra_env: &[(&str, &str)]| {
        let _ = std::fs::remove_file(sb.requests_path());
        let mut cmd = sb.north();
        cmd.current_dir(&elsewhere)
            .env("WORKDIR", sb.project())
            .env("MODEL", "model-from-env")
            .arg("mesh")
            .arg("--script")
            .arg(&example)
            .arg("--record-requests")
            .arg(sb.requests_path())
            .args(["--yes", "Count the files"]);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        sb.requests()
    };
    let requests = run(&[]);
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|r| r["model"] == "model-from-env"),
        "{:?}",
        requests[0]["model"]
    );
    assert_eq!(sb.memory().len(), 1, "the run used WORKDIR's project");
    assert!(!elsewhere.join(".north").exists());

    let requests = run(&[("NORTH_MODEL", "north-model")]);
    assert!(requests.iter().all(|r| r["model"] == "north-model"));

    let out = sb
        .north()
        .env("WORKDIR", sb.dir.path().join("missing"))
        .args(["mesh", "--script"])
        .arg(&example)
        .arg("go")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("missing"),
        "{}",
        text(&out.stderr)
    );
}
