//! Requirements of north.md that were implemented but untested, each shown
//! through the real binary: "Always execute" across processes, the project
//! card, its cache, the product rules in the system prompt, and the log.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_test_support::recorded::system;
use serde_json::{Value, json};

use crate::tty;
use tty::*;

/// The system prompt of the first request a scripted run recorded.
fn first_system(requests: &std::path::Path) -> String {
    recorded(requests)[0]["system"]
        .as_str()
        .expect("a system prompt")
        .to_string()
}

/// Runs `north exec` on `script` with `prompt`, recording its requests to
/// `record`; asserts it succeeded and returns its stderr.
fn exec_script(sb: &Sandbox, script: &std::path::Path, record: &str, prompt: &str) -> String {
    let requests = sb.dir.path().join(record);
    let out = sb
        .north()
        .args(["exec", "--script"])
        .arg(script)
        .arg("--record-requests")
        .arg(&requests)
        .arg(prompt)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The value of `key=` on a log line (up to the next space).
fn log_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {key}="))? + key.len() + 2;
    line[start..].split(' ').next()
}

/// north.md §2.4 and §8: "Always execute" runs the command at once and
/// stores the rule; a later North process in the same project runs the
/// identical command without asking.
#[test]
fn always_execute_runs_now_and_a_later_north_process_runs_the_command_unasked() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let command = "echo hit >> hits.txt";
    let hits = sb.project().join("hits.txt");
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": command}}]},
            {"text": "FIRST-RUN-DONE"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.type_text("run it");
    tty.send("\r");
    let screen = tty.wait_for("Command requested — run it?");
    assert!(screen.contains(command), "{screen}");
    assert!(!hits.exists(), "nothing runs before the decision");
    tty.send("2");
    tty.wait_for("FIRST-RUN-DONE");
    assert_eq!(
        std::fs::read_to_string(&hits).unwrap(),
        "hit\n",
        "the command ran once, at once"
    );
    let allow = read_json(&sb.project().join(".north/allowlist.json"));
    assert_eq!(allow["allowedCommands"], json!([command]), "{allow}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();

    // A new process, headless: it cannot ask anyone, so the command runs
    // only if the stored rule applies.
    let again = sb.file(
        "again.json",
        &json!([
            {"tool_calls": [{"id": "s2", "name": "shell_run", "args": {"command": command}}]},
            {"text": "SECOND-RUN-DONE"}
        ]),
    );
    let out = sb
        .north()
        .args(["exec", "--json", "--script"])
        .arg(&again)
        .arg("run it again")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&hits).unwrap(), "hit\nhit\n");
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let all = text(&out.stdout);
    assert!(
        !events.iter().any(|e| e["type"] == "approval_requested"),
        "nobody was asked:\n{all}"
    );
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["call_id"] == "s2")
        .expect(&all);
    assert_eq!(result["ok"], true, "{result}");
    let session = std::fs::read_dir(sb.project().join(".north/sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            std::fs::read_to_string(p.join("trace.jsonl")).is_ok_and(|t| t.contains("\"s2\""))
        })
        .expect("the second run's session");
    let trace = std::fs::read_to_string(session.join("trace.jsonl")).unwrap();
    let approval: Value = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "approval")
        .expect("the command's approval is traced");
    assert_eq!(approval["data"]["decision"], "auto", "{approval}");
    assert_eq!(approval["data"]["by"], "ExactRule", "{approval}");
}

/// north.md §4.1: `.north/cache.json` holds the project card: written on
/// the first run, reused while `HEAD` and the root listing stay the same,
/// refreshed when either changes.
#[test]
fn the_project_card_cache_is_written_reused_and_refreshed_when_head_or_the_root_changes() {
    let sb = Sandbox::new();
    let git = sb.project().join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let head = git.join("refs/heads/main");
    std::fs::write(&head, format!("{}\n", "1".repeat(40))).unwrap();
    let cache = sb.project().join(".north/cache.json");
    let script = sb.file("script.json", &json!([{"text": "ok"}]));
    assert!(!cache.exists());

    // Written on the first run, from the project as it is.
    exec_script(&sb, &script, "r1.jsonl", "one");
    let card = read_json(&cache);
    assert_eq!(card["readme"], "# Test project\n", "{card}");
    assert_eq!(card["tree"], "README.md", "{card}");
    assert!(
        card["fingerprint"].as_str().is_some_and(|f| !f.is_empty()),
        "{card}"
    );
    assert!(first_system(&sb.dir.path().join("r1.jsonl")).contains("# Test project"));

    // Reused: the next run reads the cache instead of writing it again.
    let inode =
        |p: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let written = inode(&cache);
    exec_script(&sb, &script, "r2.jsonl", "two");
    assert!(first_system(&sb.dir.path().join("r2.jsonl")).contains("# Test project"));
    assert_eq!(inode(&cache), written, "a reused cache is not rewritten");

    // A card edited by anyone but North (a repository can ship one) is
    // not what the next run sends: its mark no longer verifies.
    let mut edited = card.clone();
    edited["readme"] = json!("CACHED-CARD-MARKER\n");
    std::fs::write(&cache, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    exec_script(&sb, &script, "r2b.jsonl", "two-b");
    let system = first_system(&sb.dir.path().join("r2b.jsonl"));
    assert!(!system.contains("CACHED-CARD-MARKER"), "{system}");
    assert!(system.contains("# Test project"), "{system}");

    // A new HEAD refreshes it.
    std::fs::write(&head, format!("{}\n", "2".repeat(40))).unwrap();
    exec_script(&sb, &script, "r3.jsonl", "three");
    let system = first_system(&sb.dir.path().join("r3.jsonl"));
    assert!(system.contains("# Test project"), "{system}");
    let fresh = read_json(&cache);
    assert_eq!(fresh["readme"], "# Test project\n", "{fresh}");
    assert_ne!(fresh["fingerprint"], card["fingerprint"], "{fresh}");

    // Reused again under the new HEAD...
    let written = inode(&cache);
    exec_script(&sb, &script, "r4.jsonl", "four");
    assert_eq!(inode(&cache), written);

    // ...until the root listing changes.
    std::fs::write(sb.project().join("added.txt"), "new\n").unwrap();
    exec_script(&sb, &script, "r5.jsonl", "five");
    let system = first_system(&sb.dir.path().join("r5.jsonl"));
    assert!(system.contains("added.txt"), "{system}");
    let refreshed = read_json(&cache);
    assert!(
        refreshed["tree"].as_str().unwrap().contains("added.txt"),
        "{refreshed}"
    );
    assert_eq!(refreshed["readme"], "# Test project\n", "{refreshed}");
}

/// The first request `north exec` sends to an Anthropic-compatible server
/// for a project prepared by `prepare`.
async fn first_anthropic_request(prepare: impl FnOnce(&Sandbox)) -> Value {
    use north_test_support::{FakeServer, Reply, anthropic};
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    let sb = Sandbox::new();
    prepare(&sb);
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-SPECNORTH-0123456789abcdef")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["exec", "Summarise this repository"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    server.requests_to("/v1/messages")[0].json()
}

/// north.md §5.1: the rule that the model changes nothing in free-form
/// output and acts only through tool calls reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rule_to_act_only_through_tool_calls_reaches_the_model() {
    let request = first_anthropic_request(|_| {}).await;
    let system = system(&request);
    for rule in [
        "Never claim to have changed a file: propose edits with the edit tools",
        "the user reviews a diff and accepts or rejects it",
        "Edits match text exactly (no fuzzy matching)",
        "Shell commands need the user's approval unless allowlisted",
    ] {
        assert!(system.contains(rule), "`{rule}` missing:\n{system}");
    }
    // The rules come first, ahead of the project.
    let rules = system.find("You are North").expect(&system);
    let project = system.find("Languages:").expect(&system);
    assert!(rules < project, "{system}");
    assert!(request["tools"].as_array().unwrap().len() >= 8);
}

/// north.md §5.2: the project card (README snippet, root tree, language
/// composition, hot files) is in the first request's system prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_card_reaches_the_model_in_the_first_request() {
    let request = first_anthropic_request(|sb| {
        let p = sb.project();
        std::fs::write(
            p.join("README.md"),
            "# Orbit\nORBIT-README-SNIPPET: plans satellite passes.\n",
        )
        .unwrap();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::write(p.join("src/engine.rs"), "fn step() {}\n".repeat(400)).unwrap();
        std::fs::write(p.join("src/util.rs"), "fn u() {}\n").unwrap();
        std::fs::write(p.join("Cargo.toml"), "[package]\nname = \"orbit\"\n").unwrap();
    })
    .await;
    let system = system(&request);
    assert!(
        system.contains("ORBIT-README-SNIPPET: plans satellite passes."),
        "README snippet:\n{system}"
    );
    let root = system
        .split("Root:\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect(&system);
    for entry in ["Cargo.toml", "README.md", "src/"] {
        assert!(
            root.lines().any(|l| l == entry),
            "root entry {entry}:\n{root}"
        );
    }
    assert!(!root.contains("engine.rs"), "only the root level:\n{root}");
    let languages = system
        .lines()
        .find(|l| l.starts_with("Languages: "))
        .expect(&system);
    assert!(languages.contains("Rust"), "{languages}");
    let hot = system
        .split("Hot files:\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect(&system);
    assert_eq!(
        hot.lines().next(),
        Some("src/engine.rs"),
        "the largest source file first:\n{hot}"
    );
}

/// north.md §9: one append-only log holding, for each run, the app start
/// with its version, model requests with the model name and token
/// estimate, tool calls with their duration and success or failure, and
/// approvals with their decision, command string and edited paths.
#[test]
fn the_log_is_appended_across_runs_with_start_model_tools_and_approvals() {
    let sb = Sandbox::new();
    let log_path = sb.home().join("state/north/north.log");
    let command = "echo hit >> hits.txt";
    let first = sb.file(
        "first.json",
        &json!([
            {"tool_calls": [
                {"id": "e1", "name": "edit_create_file", "args": {"path": "notes/plan.txt", "content": "LOG-CONTENT-NOT-LOGGED\n"}},
                {"id": "s1", "name": "shell_run", "args": {"command": command}},
                {"id": "r1", "name": "read_file", "args": {"path": "missing.txt"}}
            ]},
            {"text": "Done."}
        ]),
    );
    let out = sb
        .north()
        .args(["exec", "--approve-edits", "--script"])
        .arg(&first)
        .arg("first run")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "the command was denied");
    let after_first = std::fs::read_to_string(&log_path).unwrap();

    let second = sb.file("second.json", &json!([{"text": "Second."}]));
    exec_script(&sb, &second, "r2.jsonl", "second run");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.starts_with(&after_first) && log.len() > after_first.len(),
        "the second run appended to the first run's log:\n{log}"
    );
    assert!(!log.contains("LOG-CONTENT-NOT-LOGGED"), "{log}");

    let lines: Vec<&str> = log.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("north exec starting"))
        .collect();
    assert_eq!(starts.len(), 2, "one start per run:\n{log}");
    let version = format!("\"{}\"", env!("CARGO_PKG_VERSION"));
    for &i in &starts {
        assert_eq!(
            log_field(lines[i], "version"),
            Some(version.as_str()),
            "{}",
            lines[i]
        );
    }
    let finished: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("exec finished"))
        .collect();
    assert_eq!(finished.len(), 2, "{log}");
    assert!(starts[0] < finished[0] && finished[0] < starts[1] && starts[1] < finished[1]);

    // Model requests: three in all (two in the first run, one in the second).
    let requests: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(" model request "))
        .collect();
    assert_eq!(requests.len(), 3, "{log}");
    for line in &requests {
        assert_eq!(log_field(line, "model"), Some("scripted"), "{line}");
        let tokens = log_field(line, "approx_tokens").expect(line);
        assert!(tokens.parse::<u64>().is_ok_and(|n| n > 0), "{line}");
    }

    // Tool calls: name, duration and whether they succeeded.
    let tool = |name: &str| -> &str {
        lines
            .iter()
            .copied()
            .find(|l| l.contains(" tool call ") && log_field(l, "tool") == Some(name))
            .unwrap_or_else(|| panic!("no tool call line for {name}:\n{log}"))
    };
    for (name, ok) in [
        ("edit_create_file", "true"),
        ("shell_run", "false"),
        ("read_file", "false"),
    ] {
        let line = tool(name);
        assert_eq!(log_field(line, "ok"), Some(ok), "{line}");
        assert!(
            log_field(line, "ms").is_some_and(|ms| ms.parse::<u64>().is_ok()),
            "duration: {line}"
        );
    }
    assert!(tool("read_file").contains("does not exist"));

    // Approvals: the decision with the edited path or the command string.
    let approvals: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(" approval "))
        .collect();
    assert_eq!(approvals.len(), 2, "{log}");
    let edit = approvals
        .iter()
        .find(|l| l.contains("kind=Edit"))
        .expect(&log);
    assert!(edit.contains("subject=notes/plan.txt"), "{edit}");
    assert_eq!(log_field(edit, "decision"), Some("Accept"), "{edit}");
    let shell = approvals
        .iter()
        .find(|l| l.contains("kind=Shell"))
        .expect(&log);
    assert!(shell.contains(&format!("subject={command} ")), "{shell}");
    assert_eq!(log_field(shell, "decision"), Some("Deny"), "{shell}");
}
