//! Permission modes in the real TUI (pseudo-terminal): Shift+Tab cycles
//! ask → accept-edits → plan → auto, the status line shows the mode, and in
//! auto a command runs inside the sandbox without a prompt while one the
//! sandbox stops runs outside it only after the user allows it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tty;

use serde_json::json;
use tty::{Sandbox, Tty, one_tty};

#[test]
fn shift_tab_reaches_auto_which_runs_sandboxed_and_escalates_only_when_allowed() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join(".git")).unwrap();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "touch inside.txt"}}]},
            {"tool_calls": [{"id": "c2", "name": "shell_run", "args": {"command": "echo hook > .git/hooks/evil"}}]},
            {"text": "AUTO-DONE"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    for want in ["accept edits", "plan mode", "auto (commands sandboxed)"] {
        tty.send("\x1b[Z");
        tty.wait_for(want);
    }
    tty.type_text("go");
    tty.send("\r");
    let screen = tty.wait_for("The sandbox stopped this command");
    assert!(
        !screen.contains("run it?"),
        "the first command ran unasked: {screen}"
    );
    assert!(sb.project().join("inside.txt").exists());
    assert!(
        !sb.project().join(".git/hooks/evil").exists(),
        "nothing runs outside the sandbox before the user allows it"
    );
    tty.send("1");
    tty.wait_for("AUTO-DONE");
    assert_eq!(
        std::fs::read_to_string(sb.project().join(".git/hooks/evil")).unwrap(),
        "hook\n"
    );
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn a_plan_is_accepted_into_accept_edits_and_carried_out() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "one\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "PLAN: change one to two in a.txt"},
            {"tool_calls": [{"id": "e1", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
            {"text": "EDIT-DONE"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");
    tty.send("\x1b[Z");
    tty.wait_for("accept edits");
    tty.send("\x1b[Z");
    tty.wait_for("plan mode");
    tty.type_text("plan the change");
    tty.send("\r");
    tty.wait_for("Plan ready — carry it out?");
    tty.send("2");
    tty.wait_for("EDIT-DONE");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "two\n",
        "applied without a review prompt in accept-edits"
    );
    let sent = tty::recorded(&requests);
    let tools = |i: usize| sent[i]["tools"].to_string();
    assert!(
        !tools(0).contains("edit_replace_exact"),
        "plan offers no edit tools"
    );
    assert!(
        tools(1).contains("edit_replace_exact"),
        "accepted: the edit tools are back"
    );
    assert!(sent[1].to_string().contains("The plan is approved"));
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn in_ask_mode_an_approved_command_is_sandboxed_and_escalation_is_offered() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(2) {
            drop(conn);
        }
    });
    let command = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})).close(); print('OK-' + 'LINKED')\""
    );
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": command}}]},
            {"text": "ASK-DONE"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.type_text("go");
    tty.send("\r");
    // The user approves the line once: it runs, but inside the sandbox,
    // where the connection is refused …
    tty.wait_for("Run this time");
    tty.send("1");
    let screen = tty.wait_for("The sandbox stopped this command");
    assert!(!screen.contains("OK-LINKED"), "{screen}");
    // … and only the user's second, explicit answer lets it out once.
    tty.send("1");
    let screen = tty.wait_for("ASK-DONE");
    assert!(
        screen.contains("exit code 0"),
        "it ran outside once: {screen}"
    );
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn in_the_default_mode_a_reading_command_runs_unasked_and_shows_its_last_lines() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(sb.project())
        .output()
        .unwrap();
    assert!(git.status.success());
    std::fs::write(sb.project().join("LISTED-FILE.txt"), "x\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [
                {"id": "c1", "name": "shell_run", "args": {"command": "ls"}},
                {"id": "c2", "name": "shell_run", "args": {"command": "git status --short"}},
                {"id": "c3", "name": "shell_run", "args": {"command": "touch made.txt"}}
            ]},
            {"text": "READ-DONE"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.type_text("go");
    tty.send("\r");
    // `ls` and `git status` ran without a prompt, their last lines shown;
    // the first prompt is for `touch`.
    let screen = tty.wait_for("Run this time");
    assert!(screen.contains("│ LISTED-FILE.txt"), "{screen}");
    assert!(screen.contains("?? LISTED-FILE.txt"), "{screen}");
    assert!(screen.contains("touch made.txt"), "{screen}");
    assert!(!sb.project().join("made.txt").exists());
    tty.send("\x1b");
    tty.wait_for("Interrupted");
    tty.wait_gone("esc interrupts");
    tty.send("\x04");
    tty.wait_for("EXIT=");
    tty.wait_exit();
}
