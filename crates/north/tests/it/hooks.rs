//! Hooks through the real binary and the scripted provider: the user's
//! commands at North's events, in Claude Code's format, under the trust
//! boundary and the OS sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::recorded::tool_result;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, json_lines, text};

const KEY: &str = "sk-ant-HOOKLEAKCHECK-7f1e2d3c4b5a6978";

fn user_config(sb: &Sandbox, config: &Value) {
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
}

fn command(c: &str) -> Value {
    json!({"type": "command", "command": c})
}

/// Runs `north exec` with `turns` scripted, with a key in North's
/// environment; returns the output and the recorded requests.
fn exec(sb: &Sandbox, turns: &Value, extra: &[&str]) -> (Output, Vec<Value>) {
    sb.exec_scripted(turns, extra, &[("ANTHROPIC_API_KEY", KEY)])
}

fn shell(id: &str, cmd: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "shell_run", "args": {"command": cmd}}]})
}

fn create(id: &str, path: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "edit_create_file", "args": {"path": path, "content": "x\n"}}]})
}

fn say(text: &str) -> Value {
    json!({"text": text})
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_users_hooks_block_add_context_see_edits_and_keep_the_turn_going() {
    let sb = Sandbox::new();
    let p = sb.project();
    user_config(
        &sb,
        &json!({"hooks": {
            "UserPromptSubmit": [{"hooks": [command("echo 'TICKET-42: the ticket text'")]}],
            "PreToolUse": [{"matcher": "shell_run", "hooks": [command(
                "input=$(cat); case \"$input\" in *forbidden*) echo 'forbidden files are off limits' >&2; exit 2;; esac"
            )]}],
            "PostToolUse": [{"matcher": "edit_.*", "hooks": [command("cat > \"$NORTH_PROJECT_DIR/post.json\"")]}],
            "Stop": [{"hooks": [command(
                "if [ -e \"$NORTH_PROJECT_DIR/.stopped-once\" ]; then exit 0; fi; touch \"$NORTH_PROJECT_DIR/.stopped-once\"; echo 'run the tests first' >&2; exit 2"
            )]}]
        }}),
    );
    let (out, requests) = exec(
        &sb,
        &json!([
            shell("s1", "touch forbidden.txt"),
            create("e1", "new.txt"),
            say("done"),
            say("tests pass, done")
        ]),
        &["--yes", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests: Vec<String> = requests.iter().map(Value::to_string).collect();
    assert_eq!(requests.len(), 4, "the Stop hook added a step");

    // UserPromptSubmit: its stdout reaches the first request.
    assert!(requests[0].contains("TICKET-42: the ticket text"));
    // PreToolUse exit 2: the command did not run; the reason is the result.
    assert!(!p.join("forbidden.txt").exists(), "a blocked command ran");
    assert!(requests[1].contains("forbidden files are off limits"));
    // PostToolUse on an accepted edit: the file exists, the hook saw it.
    assert!(p.join("new.txt").exists());
    let post = read_json(&p.join("post.json"));
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_name"], "edit_create_file");
    assert_eq!(post["tool_input"]["path"], "new.txt");
    assert_eq!(post["tool_input"]["file_path"], "new.txt");
    assert_eq!(post["tool_response"]["applied"], true);
    assert!(post["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        post["transcript_path"]
            .as_str()
            .is_some_and(|t| Path::new(t).exists())
    );
    // Stop exit 2 once: the turn went on with its message.
    assert!(requests[3].contains("run the tests first"));

    // exec --json reports each hook.
    let hooks: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "hook")
        .collect();
    let seen: Vec<(String, String)> = hooks
        .iter()
        .map(|h| {
            (
                h["event"].as_str().unwrap().to_string(),
                h["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for want in [
        ("UserPromptSubmit", "ran"),
        ("PreToolUse", "blocked"),
        ("PostToolUse", "ran"),
        ("Stop", "blocked"),
        ("Stop", "ran"),
    ] {
        assert!(
            seen.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} not in {seen:?}"
        );
    }
}

#[test]
fn a_json_deny_blocks_like_exit_two_and_claude_code_files_and_names_work() {
    let sb = Sandbox::new();
    let p = sb.project();
    // A real Claude Code settings file: other keys, Claude's tool names,
    // an event North does not have, the usual $CLAUDE_PROJECT_DIR script.
    std::fs::create_dir_all(p.join(".claude/hooks")).unwrap();
    std::fs::write(
        p.join(".claude/hooks/deny.sh"),
        "#!/bin/sh\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no pushes from the assistant\"}}'\n",
    )
    .unwrap();
    std::fs::write(
        p.join(".claude/settings.json"),
        json!({
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [command("sh \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/deny.sh")]}],
                "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [command("cat > \"$CLAUDE_PROJECT_DIR/claude-post.json\"")]}],
                "TeammateIdle": [{"hooks": [command("touch never.txt")]}]
            }
        })
        .to_string(),
    )
    .unwrap();
    let (out, requests) = exec(
        &sb,
        &json!([
            shell("s1", "touch pushed.txt"),
            create("e1", "made.txt"),
            say("ok")
        ]),
        &["--yes", "--trust"],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!p.join("pushed.txt").exists(), "a denied command ran");
    let blocked = tool_result(&requests[1], "s1");
    assert_eq!(blocked["ok"], false, "{blocked}");
    assert!(
        blocked.to_string().contains("no pushes from the assistant"),
        "{blocked}"
    );
    let post = read_json(&p.join("claude-post.json"));
    assert_eq!(post["tool_name"], "edit_create_file");
    assert!(!p.join("never.txt").exists());
    assert!(
        stderr.contains("TeammateIdle"),
        "the skipped event is named: {stderr}"
    );
}

fn project_hooks(p: &Path, hooks: &Value) {
    std::fs::write(
        p.join(".north/project.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
}

#[test]
fn an_untrusted_projects_hooks_never_run_and_a_changed_hook_asks_again() {
    let sb = Sandbox::new();
    let p = sb.project();
    std::fs::create_dir_all(p.join(".north/hooks")).unwrap();
    std::fs::write(
        p.join(".north/hooks/ctx.sh"),
        "#!/bin/sh\ntouch hook-ran.txt\n",
    )
    .unwrap();
    project_hooks(
        &p,
        &json!({"UserPromptSubmit": [{"hooks": [command("sh .north/hooks/ctx.sh")]}]}),
    );

    let (out, _) = exec(&sb, &json!([say("hi")]), &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !p.join("hook-ran.txt").exists(),
        "an untrusted project's hook ran"
    );
    assert!(
        stderr.contains("UserPromptSubmit hook runs `sh .north/hooks/ctx.sh`"),
        "the notice names the hook: {stderr}"
    );

    // Trusted as it is: the hook runs.
    let trusted = sb.north().arg("trust").output().unwrap();
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    assert!(text(&trusted.stdout).contains("sh .north/hooks/ctx.sh"));
    let (out, _) = exec(&sb, &json!([say("hi")]), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        p.join("hook-ran.txt").exists(),
        "a trusted project's hook did not run"
    );
    std::fs::remove_file(p.join("hook-ran.txt")).unwrap();

    // Only the script changes: the project is asked about again.
    std::fs::write(
        p.join(".north/hooks/ctx.sh"),
        "#!/bin/sh\ntouch hook-ran.txt; curl evil\n",
    )
    .unwrap();
    let (out, _) = exec(&sb, &json!([say("hi")]), &[]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
    assert!(!p.join("hook-ran.txt").exists());

    // The hook's command changes: asked again too.
    sb.north().arg("trust").output().unwrap();
    project_hooks(
        &p,
        &json!({"UserPromptSubmit": [{"hooks": [command("touch other.txt")]}]}),
    );
    let (out, _) = exec(&sb, &json!([say("hi")]), &[]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
    assert!(stderr.contains("touch other.txt"), "{stderr}");
    assert!(!p.join("other.txt").exists());
}

#[test]
fn a_hook_gets_no_key_and_runs_in_the_sandbox() {
    let sb = Sandbox::new();
    let p = sb.project();
    let outside = common::outside_temp_dir("north-hook-outside");
    let escaped: PathBuf = outside.path().join("escaped.txt");
    user_config(
        &sb,
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [command(&format!(
            "env > env.txt; cat /proc/$PPID/environ > parent-env.txt 2>/dev/null; touch {} 2>/dev/null; true",
            escaped.display()
        ))]}]}}),
    );
    let (out, requests) = exec(&sb, &json!([say("hi")]), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(requests.len(), 1);
    let env = std::fs::read_to_string(p.join("env.txt")).unwrap();
    assert!(
        env.contains(&format!(
            "NORTH_PROJECT_DIR={}",
            p.canonicalize().unwrap().display()
        )),
        "{env}"
    );
    assert!(env.contains("CLAUDE_PROJECT_DIR="), "{env}");
    assert!(!env.contains(KEY), "the key reached a hook's environment");
    assert!(!env.contains("ANTHROPIC_API_KEY"), "{env}");
    let parent = std::fs::read(p.join("parent-env.txt")).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&parent).contains(KEY),
        "the key is in /proc/$PPID/environ"
    );
    assert!(
        !escaped.exists(),
        "a hook wrote outside the project: the sandbox did not hold"
    );
}

#[test]
fn a_hook_past_its_timeout_is_killed_and_reported_and_north_goes_on() {
    let sb = Sandbox::new();
    let p = sb.project();
    user_config(
        &sb,
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "sleep 30; touch late.txt", "timeout": 1}
        ]}]}}),
    );
    let (out, requests) = exec(
        &sb,
        &json!([shell("s1", "touch ran.txt"), say("ok")]),
        &["--yes"],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("PreToolUse hook `sleep 30; touch late.txt` timed out"),
        "{stderr}"
    );
    assert!(
        p.join("ran.txt").exists(),
        "a timed-out hook does not block"
    );
    assert_eq!(requests.len(), 2);
    assert!(!p.join("late.txt").exists());
}

#[test]
fn a_bad_hooks_block_is_an_error_naming_the_field() {
    let sb = Sandbox::new();
    user_config(
        &sb,
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}}),
    );
    let (out, requests) = exec(&sb, &json!([say("hi")]), &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("hooks.PreToolUse[0].hooks[0].command"),
        "{stderr}"
    );
    assert!(requests.is_empty());
}

#[test]
fn a_pre_tool_use_hooks_updated_input_is_what_runs_and_what_the_policy_judges() {
    let sb = Sandbox::new();
    let p = sb.project();
    // Claude Code's answer shape: allow, with the command rewritten.
    let rewrite = sb.dir.path().join("rewrite.sh");
    Sandbox::executable(
        &rewrite,
        "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\", \"updatedInput\": {\"command\": \"touch rewritten.txt\"}}}'\n",
    );
    user_config(
        &sb,
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [command(&rewrite.display().to_string())]}]}}),
    );
    let (out, requests) = exec(
        &sb,
        &json!([shell("s1", "touch original.txt"), say("ok")]),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(p.join("rewritten.txt").exists(), "the hook's command ran");
    assert!(
        !p.join("original.txt").exists(),
        "the model's command did not"
    );
    let result = tool_result(&requests[1], "s1");
    assert_eq!(
        result["output"]["inputChangedByHook"]["input"]["command"], "touch rewritten.txt",
        "{result}"
    );
    // A rewrite does not escape the policy: the user's deny rule judges
    // the command that would run, not the one the model asked for.
    std::fs::create_dir_all(p.join(".claude")).unwrap();
    std::fs::write(
        p.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Bash(git push:*)"]}}).to_string(),
    )
    .unwrap();
    Sandbox::executable(
        &rewrite,
        "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\", \"updatedInput\": {\"command\": \"git push origin main\"}}}'\n",
    );
    let (_, requests) = exec(&sb, &json!([shell("s2", "ls"), say("ok")]), &[]);
    let result = tool_result(&requests[1], "s2");
    assert_eq!(result["ok"], false, "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("your rule `git push`"),
        "{result}"
    );
}

#[test]
fn the_newer_claude_code_events_fire_with_their_fields_and_a_permission_hook_answers() {
    let sb = Sandbox::new();
    let p = sb.project();
    std::fs::create_dir_all(p.join(".north/agents")).unwrap();
    std::fs::write(
        p.join(".north/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews\ntools: read_file\n---\nReview.\n",
    )
    .unwrap();
    let record = |event: &str| command(&format!("cat > \"$CLAUDE_PROJECT_DIR/{event}.json\""));
    let answer = sb.dir.path().join("answer.sh");
    Sandbox::executable(
        &answer,
        "#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/PermissionRequest.json\"\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"allow\"}}}'\n",
    );
    user_config(
        &sb,
        &json!({"hooks": {
            "SessionStart": [{"hooks": [record("SessionStart"), command("cat >> \"$CLAUDE_PROJECT_DIR/starts.jsonl\"; echo >> \"$CLAUDE_PROJECT_DIR/starts.jsonl\"")]}],
            "PostToolUseFailure": [{"matcher": "Read", "hooks": [record("PostToolUseFailure")]}],
            "PermissionRequest": [{"matcher": "Bash", "hooks": [command(&answer.display().to_string())]}],
            "SubagentStart": [{"hooks": [record("SubagentStart")]}],
            "PostCompact": [{"hooks": [record("PostCompact")]}]
        }}),
    );
    let (out, _) = exec(
        &sb,
        &json!([
            {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": "missing.txt"}}]},
            shell("s1", "touch by-permission-hook.txt"),
            {"tool_calls": [{"id": "a1", "name": "agent", "args": {"agent": "reviewer", "prompt": "look"}}]},
            say("SUB-DONE"),
            {"text": "<<<NOTES_JSON>>>{\"actions\":[\"condense_now\"]}<<<END_NOTES_JSON>>>Reading.",
             "tool_calls": [{"id": "r2", "name": "read_file", "args": {"path": "README.md"}}]},
            say("SUMMARY-OF-IT-ALL"),
            say("done")
        ]),
        &["--trust"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = |event: &str| -> Value {
        let path = p.join(format!("{event}.json"));
        serde_json::from_str(
            &std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{event} did not fire; stderr: {}", text(&out.stderr))),
        )
        .unwrap()
    };
    for event in [
        "SessionStart",
        "PostToolUseFailure",
        "PermissionRequest",
        "SubagentStart",
        "PostCompact",
    ] {
        let input = read(event);
        assert_eq!(input["hook_event_name"], event, "{input}");
        for field in ["session_id", "transcript_path", "cwd", "permission_mode"] {
            assert!(input.get(field).is_some(), "{event} lacks {field}: {input}");
        }
    }
    // At the start, and again after the compaction, as Claude Code does.
    let starts: Vec<String> = std::fs::read_to_string(p.join("starts.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["source"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(starts, ["startup", "compact"]);
    let failure = read("PostToolUseFailure");
    assert_eq!(failure["tool_use_id"], "r1");
    assert!(!failure["error"].as_str().unwrap().is_empty(), "{failure}");
    let asked = read("PermissionRequest");
    assert_eq!(
        asked["tool_input"]["command"],
        "touch by-permission-hook.txt"
    );
    assert!(
        p.join("by-permission-hook.txt").exists(),
        "the hook's allow answered the question"
    );
    assert_eq!(read("SubagentStart")["agent_type"], "reviewer");
    let compact = read("PostCompact");
    assert_eq!(compact["trigger"], "auto");
    assert!(
        compact["compact_summary"]
            .as_str()
            .unwrap()
            .contains("SUMMARY-OF-IT-ALL"),
        "{compact}"
    );
}

#[test]
fn a_cleared_conversation_starts_with_source_clear() {
    if !crate::emulator::available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let p = sb.project();
    user_config(
        &sb,
        &json!({"hooks": {"SessionStart": [{"hooks": [command("cat >> \"$CLAUDE_PROJECT_DIR/starts.jsonl\"; echo >> \"$CLAUDE_PROJECT_DIR/starts.jsonl\"")]}]}}),
    );
    let script = sb.file(
        "tui-script.json",
        &json!({"turns": [{"text": "FIRST-ANSWER"}, {"text": "SECOND-ANSWER"}]}),
    );
    let term = crate::emulator::Term::start(
        &sb,
        120,
        40,
        &format!("\"$NORTH\" --script '{}'", script.display()),
        &[],
    );
    term.wait_for("Ask North to do something");
    term.type_text("hello");
    term.keys(&["Enter"]);
    term.wait_for("FIRST-ANSWER");
    term.type_text("/new");
    term.keys(&["Enter"]);
    term.type_text("again");
    term.keys(&["Enter"]);
    term.wait_for("SECOND-ANSWER");
    let sources: Vec<String> = std::fs::read_to_string(p.join("starts.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["source"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(sources, ["startup", "clear"]);
}
