//! The mesh policy: each preset, each enforcement point, and the five closed
//! security gaps (path escapes, shell injection, secrets in the environment
//! — see crates/north/tests/it/mesh_cli.rs for the process-level test —,
//! runaway commands stopped by quotas, and the audit trail).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::mesh_common;

use std::path::Path;
use std::sync::Arc;

use mesh_common::*;
use north_agent::FlagApprover;
use north_agent::memory::MemoryFile;
use north_mesh::{Audit, MeshStatus, Verdict};
use north_policy::{MeshPolicy, PolicyPreset};
use north_protocol::ToolOutcome;
use north_tools::{Registry, ToolContext};
use serde_json::{Value, json};

struct Gate {
    tools: Registry,
    audit: Arc<Audit>,
    ctx: ToolContext,
}

fn gate(root: &Path, policy: MeshPolicy) -> Gate {
    gate_with(root, policy, yes())
}

fn gate_with(root: &Path, policy: MeshPolicy, approver: Arc<dyn north_agent::Approver>) -> Gate {
    let backend = scripted(json!([]), &root.join("unused.jsonl"));
    let mesh = mesh(root, backend, policy, approver, "scripted");
    let audit = Arc::new(Audit::new(None));
    Gate {
        tools: mesh.tools(audit.clone()),
        audit,
        ctx: ToolContext::new(root.to_path_buf()),
    }
}

impl Gate {
    async fn bash(&self, cmd: &str) -> ToolOutcome {
        self.tools
            .call("bash", json!({ "cmd": cmd }), &self.ctx)
            .await
    }

    async fn read(&self, path: &str) -> ToolOutcome {
        self.tools
            .call("read", json!({ "path": path }), &self.ctx)
            .await
    }

    /// The write as the executor does it: the proposal step, through the gate.
    fn write(&self, path: &str, content: &str) -> Result<(), String> {
        self.tools
            .propose(
                "write",
                json!({"path": path, "content": content}),
                &self.ctx,
            )
            .map(|_| ())
            .map_err(|o| o.error.unwrap_or_default())
    }

    fn last(&self) -> north_mesh::AuditEntry {
        self.audit.entries().last().cloned().unwrap()
    }
}

fn error(o: &ToolOutcome) -> String {
    assert!(!o.ok, "expected a refusal, got {o:?}");
    o.error.clone().unwrap_or_default()
}

fn text(o: &ToolOutcome) -> String {
    assert!(o.ok, "expected success, got {o:?}");
    o.output
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| o.output.to_string())
}

fn big_file(root: &Path, name: &str, bytes: usize) {
    std::fs::write(root.join(name), "a".repeat(bytes)).unwrap();
}

#[tokio::test]
async fn conservative_preset_is_read_only_analysis() {
    let dir = project();
    let root = root(&dir);
    big_file(&root, "big.txt", 150_000);
    let g = gate(&root, MeshPolicy::preset(PolicyPreset::Conservative));
    assert!(text(&g.bash("find . -name '*.rs'").await).contains("./src/lib.rs"));
    assert!(text(&g.bash("grep -c main src/main.rs").await).contains('1'));
    assert_eq!(
        error(&g.bash("echo hi").await),
        "Command denied by policy: `echo` is not in allowed_commands"
    );
    assert_eq!(g.last().check, "command");
    assert_eq!(
        g.write("notes.txt", "x"),
        Err("Write disabled by policy".to_owned())
    );
    assert_eq!(g.last().check, "write_enabled");
    assert_eq!(
        error(&g.read("big.txt").await),
        "File too large: 150000 bytes exceeds max_file_size of 100000 bytes"
    );
    assert_eq!(g.last().check, "max_file_size");
    assert!(g.read("README.md").await.ok);
}

#[tokio::test]
async fn balanced_preset_is_the_default() {
    let dir = project();
    let root = root(&dir);
    big_file(&root, "big.txt", 150_000);
    big_file(&root, "bigger.txt", 250_000);
    let g = gate(&root, MeshPolicy::default());
    assert_eq!(text(&g.bash("echo hi").await), "hi\n");
    assert!(text(&g.bash("pwd").await).trim_end().ends_with("project"));
    assert!(error(&g.bash("find .").await).starts_with("Command denied by policy"));
    assert_eq!(g.write("notes.txt", "hello"), Ok(()));
    assert!(
        !root.join("notes.txt").exists(),
        "a proposal writes nothing"
    );
    let read = g.read("big.txt").await;
    assert!(read.ok);
    assert_eq!(read.output["meta"]["size"], 150_000);
    assert_eq!(read.output["content"].as_str().unwrap().len(), 4000);
    assert!(error(&g.read("bigger.txt").await).starts_with("File too large: 250000 bytes"));
    // Writes are held to the size limit too.
    assert!(
        g.write("huge.txt", &"b".repeat(200_001))
            .unwrap_err()
            .starts_with("File too large")
    );
}

#[tokio::test]
async fn permissive_preset_is_for_development() {
    let dir = project();
    let root = root(&dir);
    big_file(&root, "bigger.txt", 250_000);
    big_file(&root, "huge.txt", 1_000_001);
    let g = gate(&root, MeshPolicy::preset(PolicyPreset::Permissive));
    assert_eq!(
        text(&g.bash("head -n 1 src/main.rs").await),
        "fn main() {\n"
    );
    assert_eq!(text(&g.bash("tail -n 1 src/main.rs").await), "}\n");
    assert!(text(&g.bash("find src -name main.rs").await).contains("src/main.rs"));
    assert!(error(&g.bash("rm -rf src").await).contains("`rm` is not in allowed_commands"));
    assert!(g.read("bigger.txt").await.ok);
    assert!(error(&g.read("huge.txt").await).starts_with("File too large: 1000001 bytes"));
    assert_eq!(g.write("notes.txt", "x"), Ok(()));
}

#[tokio::test]
async fn policy_is_checked_before_every_call_of_a_run() {
    let dir = project();
    let root = root(&dir);
    big_file(&root, "big.txt", 150_000);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Try everything", None)]),
        {"tool_calls": [
            {"id": "c1", "name": "bash", "args": {"cmd": "echo hi"}},
            {"id": "c2", "name": "write", "args": {"path": "notes.txt", "content": "x"}},
            {"id": "c3", "name": "read", "args": {"path": "big.txt"}},
            {"id": "c4", "name": "read", "args": {"path": "README.md"}}
        ]},
        text_turn("Three calls were refused."),
        text_turn("The policy refused echo, the write and the large read."),
    ]);
    // Even with --yes the policy has the last word, and the user is never
    // asked about what the policy refuses.
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::preset(PolicyPreset::Conservative),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, "try").await;
    assert_eq!(ran.report.status, MeshStatus::Denied);
    let results = ran.results();
    assert_eq!(
        results.iter().map(|r| r.1).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    let sent = message_text(&requests(&record)[2]);
    for message in [
        "Command denied by policy: `echo` is not in allowed_commands",
        "Write disabled by policy",
        "File too large: 150000 bytes exceeds max_file_size of 100000 bytes",
    ] {
        assert!(
            sent.contains(message),
            "{message} not sent to the model: {sent}"
        );
    }
    assert!(!root.join("notes.txt").exists());
    assert!(
        !ran.jsonl()
            .iter()
            .any(|e| e["type"] == "approval_requested"),
        "nothing the policy refuses is put to the user"
    );
    // The planner and the executor are told the policy.
    let reqs = requests(&record);
    assert!(
        reqs[0]["system"]
            .as_str()
            .unwrap()
            .contains("bash may run only: ls, cat, grep, find")
    );
    assert!(message_text(&reqs[1]).contains("write is disabled"));
}

#[tokio::test]
async fn approvals_follow_the_exec_flags_after_the_policy() {
    let dir = project();
    let root = root(&dir);
    let g = gate_with(
        &root,
        MeshPolicy::default(),
        Arc::new(FlagApprover::default()),
    );
    let refused = error(&g.bash("ls").await);
    assert!(refused.starts_with("Command not approved"), "{refused}");
    assert_eq!(
        (g.last().verdict, g.last().check.as_str()),
        (Verdict::Deny, "approval")
    );
    // The project allowlist approves exact commands, as for `north exec`.
    std::fs::create_dir_all(root.join(".north")).unwrap();
    std::fs::write(
        root.join(".north/allowlist.json"),
        r#"{"allowedCommands": ["ls"]}"#,
    )
    .unwrap();
    assert!(text(&g.bash("ls").await).contains("README.md"));
    // ... but never past the policy.
    std::fs::write(
        root.join(".north/allowlist.json"),
        r#"{"allowedCommands": ["ls", "rm -rf src"]}"#,
    )
    .unwrap();
    assert!(error(&g.bash("rm -rf src").await).starts_with("Command denied by policy"));
    assert!(root.join("src/main.rs").exists());

    // Edits need --approve-edits: rejected in review, nothing written.
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Write notes", Some("write"))]),
        {"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "notes.txt", "content": "hello"}}]},
        text_turn("The write was rejected."),
        text_turn("Writing notes.txt was rejected."),
    ]);
    let refusing = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        Arc::new(FlagApprover::default()),
        "scripted",
    );
    let ran = run(&refusing, &root, "write notes").await;
    assert_eq!(ran.report.status, MeshStatus::Denied);
    assert!(!root.join("notes.txt").exists());
    assert!(
        ran.jsonl()
            .iter()
            .any(|e| e["type"] == "approval_decided" && e["decision"] == "reject")
    );

    // With --approve-edits the write lands, atomically, and says so.
    let record = dir.path().join("requests2.jsonl");
    let script = json!([
        plan_turn(&[("Write notes", Some("write"))]),
        {"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "notes.txt", "content": "hello"}}]},
        text_turn("Written."),
        text_turn("Wrote notes.txt."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, "write notes").await;
    assert_eq!(ran.report.status, MeshStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "hello"
    );
    assert_eq!(ran.results()[0].3, json!("wrote 5 bytes"));
}

#[tokio::test]
async fn gap1_paths_cannot_escape_the_working_directory() {
    let dir = project();
    let root = root(&dir);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
    }
    let g = gate(&root, policy(&["cat", "ls", "grep", "head"]));
    let mut refusals = Vec::new();
    for path in [
        "../outside.txt",
        "src/../../outside.txt",
        "/etc/passwd",
        "link.txt",
        "up/outside.txt",
        "src/\0x",
    ] {
        refusals.push(error(&g.read(path).await));
        assert_eq!(g.last().check, "sandbox", "{path}");
    }
    for path in [
        "../escaped.txt",
        "/tmp/north-mesh-escape.txt",
        "up/escaped.txt",
        ".git/hooks/x",
    ] {
        refusals.push(g.write(path, "x").unwrap_err());
        assert_eq!(g.last().check, "sandbox", "{path}");
    }
    for cmd in [
        "cat ../outside.txt",
        "cat /etc/hostname",
        "ls ..",
        "ls /",
        "grep -r SECRET ..",
        "grep -r SECRET ~",
        "cat link.txt",
        "cat up/outside.txt",
        "head --lines=1 ../outside.txt",
        "grep -f../outside.txt README.md",
        "cat src/../../outside.txt",
    ] {
        let refused = error(&g.bash(cmd).await);
        assert!(
            refused.starts_with("Command denied by policy"),
            "{cmd}: {refused}"
        );
        assert_eq!(g.last().check, "paths", "{cmd}");
        refusals.push(refused);
    }
    assert!(refusals.iter().all(|r| !r.contains("TOP SECRET")));
    assert!(!dir.path().join("escaped.txt").exists());
    // Inside the directory everything works, patterns that merely look like
    // paths included.
    assert!(text(&g.bash("cat src/../README.md").await).contains("# Demo"));
    assert!(g.bash("grep -c /api README.md").await.ok);
    assert_eq!(g.audit.denied(), refusals.len());
}

#[tokio::test]
async fn gap2_shell_operators_cannot_smuggle_commands() {
    let dir = project();
    let root = root(&dir);
    let g = gate(&root, MeshPolicy::default());
    let attempts = [
        "ls; rm -rf src",
        "ls && rm -rf src",
        "ls || rm -rf src",
        "ls | sh",
        "ls | rm -rf src",
        "ls $(rm -rf src)",
        "ls `rm -rf src`",
        "ls\nrm -rf src",
        "ls & rm -rf src",
        "echo pwned > src/main.rs",
        "echo pwned >> src/main.rs",
        "cat < /etc/passwd",
        "echo $ANTHROPIC_API_KEY",
        "echo ${IFS}",
        "l\\s",
        "(rm -rf src)",
        "{ rm -rf src; }",
        "eval ls",
        "ls # comment",
        "echo hi; ",
        "ls\u{037e} rm -rf src",
        "grep -r x . | xargs rm",
        "cat <(rm -rf src)",
    ];
    for cmd in attempts {
        let refused = error(&g.bash(cmd).await);
        assert!(
            refused.starts_with("Command denied by policy"),
            "{cmd:?}: {refused}"
        );
        assert_eq!(g.last().check, "command", "{cmd:?}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    // Allowed programs still combine.
    assert_eq!(text(&g.bash("ls src | grep main").await), "main.rs\n");
    assert_eq!(text(&g.bash("echo a && echo b").await), "a\nb\n");
}

#[tokio::test]
async fn gap4_a_runaway_command_is_stopped_by_its_cpu_quota() {
    let dir = project();
    let root = root(&dir);
    let policy = MeshPolicy {
        allowed_commands: vec!["yes".into()],
        // Long enough that only the quota can stop it.
        timeout_seconds: Some(120),
        max_cpu_seconds: Some(1),
        ..MeshPolicy::default()
    };
    let g = gate(&root, policy);
    let out = g.bash("yes").await;
    assert!(out.ok, "stopped by the quota, not the timeout: {out:?}");
    let text = out.output.as_str().unwrap();
    assert!(
        text.contains("[stopped: CPU time quota of 1 s exceeded]")
            || text.contains("[killed: CPU time quota of 1 s reached"),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert!(text.chars().count() <= 4000 + 200, "output stays cut");
}

#[tokio::test]
async fn gap4_memory_and_output_quotas_hold() {
    let dir = project();
    let root = root(&dir);
    // One 32 MiB line: grep must hold it whole.
    std::fs::write(root.join("line.txt"), "a".repeat(32 << 20)).unwrap();
    big_file(&root, "many.txt", 0);
    std::fs::write(
        root.join("many.txt"),
        (0..20_000)
            .map(|i| format!("line {i}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let policy = MeshPolicy {
        allowed_commands: vec!["grep".into(), "cat".into()],
        max_memory_bytes: Some(24 << 20),
        max_output: Some(1000),
        max_file_size: 100 << 20,
        ..MeshPolicy::default()
    };
    let g = gate(&root, policy);
    let out = text(&g.bash("grep -c b line.txt").await);
    assert!(
        out.contains("memory exhausted") || out.contains("[exit code"),
        "{out}"
    );
    assert!(
        !out.starts_with('0'),
        "grep could not finish under the quota: {out}"
    );
    // Without the quota the same command works.
    let g = gate(
        &root,
        MeshPolicy {
            allowed_commands: vec!["grep".into()],
            max_memory_bytes: Some(1 << 30),
            ..MeshPolicy::default()
        },
    );
    assert_eq!(
        text(&g.bash("grep -c b line.txt").await).lines().next(),
        Some("0")
    );
    // Output is cut to max_output characters, head and tail kept.
    let g = gate(
        &root,
        MeshPolicy {
            allowed_commands: vec!["cat".into()],
            max_output: Some(1000),
            ..MeshPolicy::default()
        },
    );
    let out = text(&g.bash("cat many.txt").await);
    assert!(
        out.starts_with("line 0\n") && out.ends_with("line 19999\n"),
        "{out}"
    );
    assert!(out.contains("truncated"));
    assert!(out.chars().count() < 1100);
}

#[tokio::test]
async fn gap5_every_decision_is_in_the_trace() {
    let dir = project();
    let root = root(&dir);
    let record = dir.path().join("requests.jsonl");
    let script = json!([
        plan_turn(&[("Look around", Some("bash"))]),
        {"tool_calls": [
            {"id": "a1", "name": "bash", "args": {"cmd": "ls"}},
            {"id": "a2", "name": "bash", "args": {"cmd": "ls; rm -rf src"}},
            {"id": "a3", "name": "read", "args": {"path": "../outside.txt"}},
            {"id": "a4", "name": "read", "args": {"path": "README.md"}}
        ]},
        text_turn("Listed; two calls refused."),
        text_turn("Listed the project; an injection and an escape were refused."),
    ]);
    let mesh = mesh(
        &root,
        scripted(script, &record),
        MeshPolicy::default(),
        yes(),
        "scripted",
    );
    let ran = run(&mesh, &root, "look").await;
    let trace = ran.trace(&root);
    let policy: Vec<&Value> = trace.iter().filter(|e| e["kind"] == "policy").collect();
    assert_eq!(policy.len(), 4, "{trace:?}");
    let decisions: Vec<(&str, &str, &str)> = policy
        .iter()
        .map(|e| {
            (
                e["data"]["tool"].as_str().unwrap(),
                e["data"]["verdict"].as_str().unwrap(),
                e["data"]["check"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("bash", "allow", "approval"),
            ("bash", "deny", "command"),
            ("read", "deny", "sandbox"),
            ("read", "allow", "max_file_size"),
        ]
    );
    assert_eq!(policy[1]["data"]["subject"], "ls; rm -rf src");
    assert!(
        policy[1]["data"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("Command denied by policy")
    );
    // The same decisions are events, each before its tool result.
    let events = ran.jsonl();
    let at = |t: &str, n: usize| {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| e["type"] == t)
            .nth(n)
            .unwrap()
            .0
    };
    for n in 0..4 {
        assert!(at("policy", n) < at("tool_result", n));
    }
    // The agent's own trace of each call is there too, and the run's ends.
    let kinds: Vec<&str> = trace.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in [
        "mesh_start",
        "mesh_plan",
        "tool_start",
        "tool_done",
        "mesh_memory",
        "mesh_done",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert_eq!(MemoryFile::project(&root).load().unwrap().len(), 1);
}
