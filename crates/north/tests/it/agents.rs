//! Custom agents and skills through the real binary: the `agent` tool runs
//! a sub-agent with its own prompt and tools, several at once; skills show
//! their description and load their body on demand; a project's agents and
//! skills apply only once it is trusted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::recorded::{system, tool, tool_names, tool_result};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use north_test_support::anthropic;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common;
use common::{Sandbox, json_lines, text};

fn write(path: &std::path::Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn exec(sb: &Sandbox, turns: &Value, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    sb.exec_scripted(turns, extra, &[])
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "args": args}]})
}

const REVIEWER: &str = "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: read_file, search_text\n---\nYou are REVIEWER-BODY-7731: review carefully and report bugs.\n";

#[test]
fn a_sub_agent_has_its_own_prompt_and_only_its_tools_and_its_answer_is_the_result() {
    let sb = Sandbox::new();
    let p = sb.project();
    write(&p.join(".north/agents/reviewer.md"), REVIEWER);
    let (out, requests) = exec(
        &sb,
        &json!([
            call("a1", "agent", json!({"agent": "reviewer", "prompt": "review the README"})),
            call("s1", "shell_run", json!({"command": "touch by-reviewer.txt"})),
            {"text": "REVIEW-ANSWER-5512: no bugs"},
            {"text": "all reviewed"}
        ]),
        &["--trust", "--yes", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(requests.len(), 4);
    // The parent is offered `agent`; the sub-agent exactly its two tools
    // and its body as the system prompt.
    assert!(tool_names(&requests[0]).contains(&"agent".to_string()));
    for sub in &requests[1..3] {
        assert_eq!(tool_names(sub), ["read_file", "search_text"]);
        assert!(system(sub).contains("REVIEWER-BODY-7731"));
        assert!(!system(sub).contains("You are North"));
    }
    assert!(!system(&requests[0]).contains("REVIEWER-BODY-7731"));
    // A tool it lacks is refused, and did not run.
    let refused = tool_result(&requests[2], "s1").to_string();
    assert!(refused.contains("unknown tool `shell_run`"), "{refused}");
    assert!(!p.join("by-reviewer.txt").exists());
    // Its final text is the `agent` result the parent reads next.
    let parent = tool_result(&requests[3], "a1").to_string();
    assert!(parent.contains("REVIEW-ANSWER-5512"), "{parent}");
    // exec --json shows what the sub-agent did as `agent` events.
    let events = json_lines(&out);
    assert!(events.iter().any(|e| e["type"] == "agent"
        && e["agent"] == "reviewer"
        && e["call_id"] == "a1"
        && e["event"]["type"] == "tool_intent"));
}

#[test]
fn a_sub_agent_cannot_start_another_beyond_the_depth_limit() {
    let sb = Sandbox::new();
    let (out, requests) = exec(
        &sb,
        &json!([
            call("a1", "agent", json!({"agent": "general", "prompt": "delegate further"})),
            call("a2", "agent", json!({"agent": "explore", "prompt": "find x"})),
            {"text": "could not delegate"},
            {"text": "done"}
        ]),
        &["--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!tool_names(&requests[1]).contains(&"agent".to_string()));
    let refused = tool_result(&requests[2], "a2").to_string();
    assert!(
        refused.contains("cannot start sub-agents (the depth limit is 1)"),
        "{refused}"
    );
}

#[test]
fn an_untrusted_projects_agents_and_skills_are_ignored_and_claude_codes_work_once_trusted() {
    let sb = Sandbox::new();
    let p = sb.project();
    write(
        &p.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: inherit\n---\nYou are CLAUDE-REVIEWER-4410.\n",
    );
    write(
        &p.join(".claude/skills/release/SKILL.md"),
        "---\nname: release\ndescription: How to cut a release of this project\n---\nRELEASE-STEPS-9931: bump, tag, push.\n",
    );
    let turns = json!([{"text": "hi"}]);
    let (out, requests) = exec(&sb, &turns, &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for named in [
        ".claude/agents/reviewer.md",
        ".claude/skills/release/SKILL.md",
        "north trust",
    ] {
        assert!(stderr.contains(named), "the notice lacks {named}: {stderr}");
    }
    assert!(!system(&requests[0]).contains("How to cut a release"));
    let offered =
        tool(&requests[0], "agent")["input_schema"]["properties"]["agent"]["enum"].clone();
    assert_eq!(
        offered,
        json!(["general", "explore"]),
        "an untrusted project's agent was offered"
    );

    // Trusted: Claude Code's files work as they are.
    let (out, requests) = exec(
        &sb,
        &json!([
            call("a1", "agent", json!({"agent": "reviewer", "prompt": "look"})),
            {"text": "fine"},
            {"text": "done"}
        ]),
        &["--trust"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(system(&requests[0]).contains("How to cut a release"));
    assert_eq!(tool_names(&requests[1]), ["read_file", "search_text"]);
    assert!(system(&requests[1]).contains("CLAUDE-REVIEWER-4410"));
}

#[test]
fn a_skill_shows_its_description_and_loads_its_body_on_demand() {
    let sb = Sandbox::new();
    let p = sb.project();
    write(
        &p.join(".north/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Deploying this service to staging\n---\nDEPLOY-BODY-2207: run make deploy-staging, then check /health.\n",
    );
    write(
        &p.join(".north/skills/deploy/checklist.md"),
        "1. tests pass\n",
    );
    let (out, requests) = exec(
        &sb,
        &json!([
            call("k1", "skill", json!({"name": "deploy"})),
            {"text": "deployed"}
        ]),
        &["--trust"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = system(&requests[0]);
    assert!(first.contains("deploy: Deploying this service to staging"));
    assert!(
        !first.contains("DEPLOY-BODY-2207"),
        "the body is loaded only on demand"
    );
    let second = tool_result(&requests[1], "k1").to_string();
    assert!(second.contains("DEPLOY-BODY-2207"), "{second}");
    assert!(
        second.contains("checklist.md"),
        "the files beside it are named"
    );
}

#[test]
fn fifty_skills_cost_the_first_request_less_than_six_kilobytes() {
    let sb = Sandbox::new();
    let turns = json!([{"text": "hi"}]);
    let (_, without) = exec(&sb, &turns, &["--trust"]);
    for i in 0..50 {
        write(
            &sb.project()
                .join(format!(".north/skills/skill-{i:02}/SKILL.md")),
            &format!(
                "---\nname: skill-{i:02}\ndescription: Task {i} of the build\n---\n{}\n",
                "Long body. ".repeat(200)
            ),
        );
    }
    let (_, with) = exec(&sb, &turns, &["--trust"]);
    let (a, b) = (without[0].to_string().len(), with[0].to_string().len());
    assert!(
        with[0]
            .to_string()
            .contains("skill-49: Task 49 of the build")
    );
    assert!(b - a < 6 * 1024, "50 skills added {} bytes", b - a);
}

/// An Anthropic endpoint whose sub-agent requests are answered only once
/// `gate` of them are waiting at the same time: sub-agents that ran one
/// after the other would never be answered.
async fn gated_endpoint(gate: usize) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let waiting = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(tokio::sync::Barrier::new(gate));
    let parent_calls = Arc::new(AtomicUsize::new(0));
    let seen = waiting.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let (barrier, waiting, parent_calls) =
                (barrier.clone(), seen.clone(), parent_calls.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 8192];
                let body_start = loop {
                    let n = conn.read(&mut tmp).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..n]);
                    if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < body_start + len {
                    let n = conn.read(&mut tmp).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..n]);
                }
                let body = String::from_utf8_lossy(&buf[body_start..]).to_string();
                let sse = if body.contains("GATED-AGENT-") {
                    waiting.fetch_add(1, Ordering::SeqCst);
                    barrier.wait().await;
                    let who = if body.contains("GATED-AGENT-A") {
                        "A"
                    } else {
                        "B"
                    };
                    anthropic::text_stream(&[&format!("ANSWER-{who}")])
                } else if parent_calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    anthropic::StreamBuilder::new()
                        .tool_use(
                            "a1",
                            "agent",
                            &[r#"{"agent": "alpha", "prompt": "task A"}"#],
                        )
                        .tool_use("a2", "agent", &[r#"{"agent": "beta", "prompt": "task B"}"#])
                        .build()
                } else {
                    anthropic::text_stream(&["both answered"])
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    sse.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(&sse).await;
                let _ = conn.shutdown().await;
            });
        }
    });
    (url, waiting)
}

/// `north exec --json` against the Anthropic endpoint at `url`.
fn anthropic_exec(sb: &Sandbox, url: &str) -> std::process::Command {
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-0000000000000000")
        .env("ANTHROPIC_BASE_URL", url)
        .args([
            "exec",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--json",
            "go",
        ]);
    cmd
}

/// The `agent` tool results of an `exec --json` run.
fn agent_results(out: &std::process::Output) -> Vec<Value> {
    json_lines(out)
        .into_iter()
        .filter(|e| e["type"] == "tool_result" && e["tool"] == "agent")
        .collect()
}

fn two_agents(sb: &Sandbox) {
    for (name, marker) in [("alpha", "GATED-AGENT-A"), ("beta", "GATED-AGENT-B")] {
        write(
            &sb.home().join(format!("config/north/agents/{name}.md")),
            &format!(
                "---\nname: {name}\ndescription: Agent {name}\ntools: read_file\n---\nYou are {marker}.\n"
            ),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agent_calls_in_one_message_run_at_the_same_time() {
    let sb = Sandbox::new();
    two_agents(&sb);
    let (url, _) = gated_endpoint(2).await;
    let cmd = anthropic_exec(&sb, &url);
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), common::output(cmd))
        .await
        .expect("the sub-agents did not run concurrently: each waited for the other");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results = agent_results(&out);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["ok"] == true), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_cancels_every_running_sub_agent() {
    let sb = Sandbox::new();
    two_agents(&sb);
    // Three must wait for the gate: it never opens.
    let (url, waiting) = gated_endpoint(3).await;
    let mut cmd = anthropic_exec(&sb, &url);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id() as i32;
    let w = waiting.clone();
    common::poll_until(
        "both sub-agents waiting at the model",
        std::time::Duration::from_secs(60),
        || w.load(Ordering::SeqCst).to_string(),
        |n| n == "2",
        |n| format!("{n} waiting"),
    );
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let results = agent_results(&out);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results.iter().all(|r| r["ok"] == false), "{results:?}");
}
