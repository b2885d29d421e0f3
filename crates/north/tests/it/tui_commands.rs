//! The interactive affordances through the real binary in a pseudo-terminal:
//! the command palette with a custom command, `@` mentions (picker and line
//! ranges), `/compact focus`, `/model` switching provider mid-session,
//! reject-with-feedback, an "always allow" prefix rule, and the `/resume`
//! picker. Requests are checked where the model would see them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_test_support::recorded::{texts, tool_result};
use north_test_support::{FakeServer, Reply, anthropic, openai};
use serde_json::json;

use crate::tty;
use tty::*;

fn north_with_script(sb: &Sandbox, turns: serde_json::Value) -> (Tty, std::path::PathBuf) {
    let script = sb.file("script.json", &json!({ "turns": turns }));
    let requests = sb.dir.path().join("requests.jsonl");
    let tty = Tty::spawn(
        sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");
    (tty, requests)
}

fn quit(mut tty: Tty) {
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn the_palette_runs_a_custom_command_and_mentions_attach_files() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join(".north/commands")).unwrap();
    std::fs::write(
        sb.project().join(".north/commands/review.md"),
        "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS carefully.\n",
    )
    .unwrap();
    std::fs::create_dir_all(sb.project().join("src")).unwrap();
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(sb.project().join("src/lib.rs"), &body).unwrap();
    let (tty, requests) = north_with_script(
        &sb,
        json!([{"text": "REVIEWED"}, {"text": "EXPLAINED"}, {"text": "SHOWN"}]),
    );

    // `/` opens the palette; typing filters it; Tab completes.
    tty.type_text("/");
    tty.wait_for("keys and commands");
    tty.type_text("rev");
    let screen = tty.wait_for("Review a file for bugs");
    assert!(!screen.contains("keys and commands"), "{screen}");
    tty.send("\t");
    tty.wait_for("› /review ");
    tty.type_text("src/lib.rs");
    tty.send("\r");
    tty.wait_for("REVIEWED");
    let sent = texts(&recorded(&requests)[0]);
    assert!(sent.contains("Review src/lib.rs carefully."), "{sent}");

    // A line range is attached, and only it.
    tty.type_text("explain @src/lib.rs:10-12");
    tty.send("\r");
    tty.wait_for("EXPLAINED");
    let sent = texts(&recorded(&requests)[1]);
    assert!(
        sent.contains(
            "<file path=\"src/lib.rs\" lines=\"10-12\">\nline 10\nline 11\nline 12\n</file>"
        ),
        "{sent}"
    );
    assert!(!sent.contains("line 13"), "{sent}");

    // `@` opens the file picker; Tab puts the path in the message.
    tty.type_text("show @lib");
    tty.wait_for("tab/enter attach");
    tty.send("\t");
    tty.wait_for("› show @src/lib.rs ");
    tty.type_text("please");
    tty.send("\r");
    tty.wait_for("SHOWN");
    let sent = texts(&recorded(&requests)[2]);
    assert!(sent.contains("line 30"), "the whole file: {sent}");
    quit(tty);
}

#[test]
fn compact_with_a_focus_steers_the_summary() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let (tty, requests) = north_with_script(
        &sb,
        json!([
            {"text": "FIRST-ANSWER about the parser"},
            {"text": "SUMMARY-OF-EVERYTHING"},
            {"text": "AFTER-COMPACT"}
        ]),
    );
    tty.type_text("tell me about the parser");
    tty.send("\r");
    // The answer's line is in history before the turn ends: wait for both.
    tty.wait_until("the answer and the end of the turn", |s| {
        s.contains("FIRST-ANSWER") && s.contains("enter send")
    });
    tty.type_text("/compact keep the parser notes");
    tty.send("\r");
    tty.wait_for("compacted");
    let all = recorded(&requests);
    let summarizer = all[1].to_string();
    assert!(
        summarizer.contains("keep above all: keep the parser notes"),
        "{summarizer}"
    );
    tty.type_text("go on");
    tty.send("\r");
    tty.wait_for("AFTER-COMPACT");
    let next = recorded(&requests)[2].to_string();
    assert!(next.contains("SUMMARY-OF-EVERYTHING"), "{next}");
    quit(tty);
}

#[test]
fn model_switches_provider_mid_session_and_keeps_the_history() {
    let _tty = one_tty();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (claude, gpt) = rt.block_on(async {
        let claude = FakeServer::start().await.unwrap();
        claude.push(Reply::sse(anthropic::text_stream(&["ANTHROPIC-SAYS hi"])));
        let gpt = FakeServer::start().await.unwrap();
        gpt.push(Reply::sse(openai::text_stream(&["OPENAI-SAYS hello"])));
        (claude, gpt)
    });
    let sb = Sandbox::new();
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "ANTHROPIC_API_KEY=sk-ant-test ANTHROPIC_BASE_URL='{}' OPENAI_BASE_URL='{}/v1' \"$NORTH\"; echo EXIT=$?",
            claude.url(),
            gpt.url()
        ),
    );
    tty.wait_for("/help for commands");
    tty.type_text("first question");
    tty.send("\r");
    tty.wait_for("ANTHROPIC-SAYS");
    tty.type_text("/model openai:gpt-test");
    tty.send("\r");
    tty.wait_for("now on openai gpt-test");
    tty.type_text("second question");
    tty.send("\r");
    tty.wait_for("OPENAI-SAYS");
    assert_eq!(claude.requests_to("/v1/messages").len(), 1);
    let to_gpt = gpt.requests_to("/v1/chat/completions");
    assert_eq!(to_gpt.len(), 1);
    let body = to_gpt[0].json();
    assert_eq!(body["model"], "gpt-test");
    let history = body["messages"].to_string();
    for said in ["first question", "ANTHROPIC-SAYS hi", "second question"] {
        assert!(history.contains(said), "{said} missing: {history}");
    }
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn a_rejection_with_feedback_reaches_the_model() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "hello world\n").unwrap();
    let (tty, requests) = north_with_script(
        &sb,
        json!([
            {"text": "Editing.", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "hello", "new": "bonjour", "expectedOccurrences": 1}}]},
            {"text": "NOTED-THE-REASON"}
        ]),
    );
    tty.type_text("translate it");
    tty.send("\r");
    tty.wait_for("Review edits");
    tty.send("f");
    tty.wait_for("why? North gets your words");
    tty.type_text("keep it in English, translate the docs instead");
    tty.send("\r");
    tty.wait_for("NOTED-THE-REASON");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "hello world\n"
    );
    let next = tool_result(&recorded(&requests)[1], "e1").to_string();
    assert!(
        next.contains("keep it in English, translate the docs instead"),
        "{next}"
    );
    quit(tty);
}

#[test]
fn an_always_allowed_prefix_runs_its_family_and_still_asks_for_more() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let run = |id: &str, command: &str| json!({"text": "Running.", "tool_calls": [{"id": id, "name": "shell_run", "args": {"command": command, "cwd": null, "timeoutMs": 20000}}]});
    let (tty, requests) = north_with_script(
        &sb,
        json!([
            run("s1", "cargo test -p first"),
            {"text": "ONE-DONE"},
            run("s2", "cargo test -p x"),
            {"text": "TWO-DONE"},
            run("s3", "cargo test; rm x"),
            {"text": "THREE-DONE"}
        ]),
    );
    tty.type_text("test it");
    tty.send("\r");
    let screen = tty.wait_for("run it?");
    assert!(screen.contains("4 Always allow `cargo test …`"), "{screen}");
    tty.send("4");
    tty.wait_for("ONE-DONE");
    let allow = std::fs::read_to_string(sb.project().join(".north/allowlist.json")).unwrap();
    assert!(
        allow.contains("\"allowedPrefixes\"") && allow.contains("\"cargo test\""),
        "{allow}"
    );

    tty.type_text("again");
    tty.send("\r");
    let screen = tty.wait_for("TWO-DONE");
    let after = screen
        .split("› again")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        !after.contains("run it?"),
        "the prefix covers it:\n{screen}"
    );

    tty.type_text("more");
    tty.send("\r");
    let screen = tty.wait_for("run it?");
    assert!(screen.contains("cargo test; rm x"), "{screen}");
    // "Deny" stops the turn: North waits for the user, the model is not
    // asked again.
    let before = recorded(&requests).len();
    tty.send("3");
    let screen = tty.wait_for("Interrupted");
    assert!(screen.contains("✗ Denied: cargo test; rm x"), "{screen}");
    tty.wait_for("enter send");
    assert_eq!(
        recorded(&requests).len(),
        before,
        "no request after the denial"
    );
    assert!(!screen.contains("THREE-DONE"), "{screen}");
    quit(tty);
}

#[test]
fn resume_opens_a_picker_of_earlier_sessions() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let old = sb.file("old.json", &json!({"turns": [{"text": "OLD-ANSWER"}]}));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_north"))
        .current_dir(sb.project())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sb.home())
        .env("XDG_CONFIG_HOME", sb.home().join("config"))
        .env("XDG_STATE_HOME", sb.home().join("state"))
        .env("XDG_DATA_HOME", sb.home().join("data"))
        .args(["exec", "--script"])
        .arg(&old)
        .arg("the earlier question")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (tty, _) = north_with_script(&sb, json!([{"text": "NEW"}]));
    tty.type_text("/resume");
    tty.send("\r");
    let screen = tty.wait_for("Resume which session?");
    assert!(screen.contains("the earlier question"), "{screen}");
    tty.send("\r");
    tty.wait_for("OLD-ANSWER");
    quit(tty);
}

#[test]
fn a_waiting_prompt_notifies_an_unfocused_terminal_and_a_focused_one_is_left_alone() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let config = sb.home().join("config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.json"), r#"{"notifications": "osc9"}"#).unwrap();
    let (tty, _) = north_with_script(
        &sb,
        json!([
            {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "touch one.txt"}}]},
            {"text": "FIRST-DONE"},
            {"tool_calls": [{"id": "c2", "name": "shell_run", "args": {"command": "touch two.txt"}}]},
            {"text": "SECOND-DONE"}
        ]),
    );
    let osc = "\x1b]9;North is waiting for your decision\x07";
    let seen = |needle: &str| {
        String::from_utf8_lossy(&tty.raw.lock().unwrap())
            .matches(needle)
            .count()
    };
    // The terminal reports that it lost focus (ESC [ O).
    tty.send("\x1b[O");
    tty.type_text("make one");
    tty.send("\r");
    tty.wait_for("run it?");
    assert_eq!(seen(osc), 1, "the waiting prompt was announced");
    tty.send("1");
    tty.wait_for("FIRST-DONE");
    assert_eq!(
        seen("\x1b]9;North finished\x07"),
        1,
        "so was the end of the turn"
    );
    // Focused again (ESC [ I): nothing more.
    tty.send("\x1b[I");
    tty.type_text("make two");
    tty.send("\r");
    tty.wait_for("run it?");
    assert_eq!(seen(osc), 1, "a watched terminal is not interrupted");
    tty.send("1");
    tty.wait_for("SECOND-DONE");
    quit(tty);
}
