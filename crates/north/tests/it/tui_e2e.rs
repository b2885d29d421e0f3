//! The real `north` binary in a pseudo-terminal, on the scripted backend,
//! read back through a VT100 screen parser: requests with newlines, a
//! streamed answer, diffs accepted and rejected (checked on disk), "Always
//! execute", Ctrl+C, and a terminal left as it was found.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_test_support::recorded::texts;
use portable_pty::PtySize;
use serde_json::json;

use crate::tty;
use tty::*;

#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, read top to bottom"
)]
#[test]
fn a_full_session_streams_reviews_diffs_approves_commands_and_restores_the_terminal() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "hello world\n").unwrap();
    std::fs::write(sb.project().join("b.txt"), "bee\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "# Plan\n\nI will **edit** two files:\n\n- `a.txt`\n- `b.txt`\n\nThen run the check. The answer streams in pieces and ends here: STREAM-END"},
            {"text": "Editing a.", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "hello", "new": "bonjour", "expectedOccurrences": 1}}]},
            {"text": "Editing b.", "tool_calls": [{"id": "e2", "name": "edit_replace_exact", "args": {"path": "b.txt", "old": "bee", "new": "wasp", "expectedOccurrences": 1}}]},
            {"text": "EDITS-DONE"},
            {"text": "Running.", "tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": "echo north-ran-$((40+2))", "cwd": null, "timeoutMs": 20000}}]},
            {"text": "FIRST-RUN-DONE"},
            {"text": "Again.", "tool_calls": [{"id": "s2", "name": "shell_run", "args": {"command": "echo north-ran-$((40+2))", "cwd": null, "timeoutMs": 20000}}]},
            {"text": "SECOND-RUN-DONE"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?; stty -a",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");

    // A request with a newline in it (ctrl+j), then Enter sends it.
    tty.type_text("plan the change");
    tty.send("\n");
    tty.type_text("for both files");
    tty.send("\r");
    let screen = tty.wait_for("STREAM-END");
    assert!(screen.contains("› plan the change"), "{screen}");
    assert!(screen.contains("  for both files"), "{screen}");
    assert!(
        screen.contains("\nPlan") && !screen.contains("# Plan") && screen.contains("• a.txt"),
        "markdown rendered:\n{screen}"
    );
    let first = &recorded(&requests)[0];
    let user = first.to_string();
    assert!(user.contains("plan the change\\nfor both files"), "{user}");

    // Two proposals: accept the first, reject the second.
    tty.type_text("edit them");
    tty.send("\r");
    tty.wait_for("Review edits");
    tty.wait_for("+bonjour world");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "hello world\n",
        "nothing written before Accept"
    );
    tty.send("y");
    tty.wait_for("+wasp");
    // Rejecting with a reason lets the model go on (plain n/Esc would stop
    // the turn and wait for the user).
    tty.send("f");
    tty.wait_for("why? North gets your words");
    tty.type_text("keep the bee");
    tty.send("\r");
    tty.wait_for("EDITS-DONE");
    let screen = tty.screen();
    assert!(screen.contains("Accepted edits to a.txt"), "{screen}");
    assert!(screen.contains("Rejected edits to b.txt"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "bonjour world\n"
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("b.txt")).unwrap(),
        "bee\n"
    );

    // "Always execute", then the identical command runs without a prompt.
    tty.type_text("run the check");
    tty.send("\r");
    tty.wait_for("Command requested — run it?");
    tty.send("2");
    tty.wait_for("FIRST-RUN-DONE");
    let allow = std::fs::read_to_string(sb.project().join(".north/allowlist.json")).unwrap();
    assert!(allow.contains("echo north-ran-$((40+2))"), "{allow}");
    tty.type_text("again");
    tty.send("\r");
    let screen = tty.wait_for("SECOND-RUN-DONE");
    let after_again = screen
        .split("› again")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        !after_again.contains("run it?"),
        "no second prompt:\n{screen}"
    );
    assert!(after_again.contains("exit code 0"), "{screen}");

    // Quit with ctrl+d on the empty composer.
    tty.send("\x04");
    let screen = tty.wait_for("EXIT=0");
    assert!(screen.contains("north: session"), "{screen}");
    tty.wait_for("speed");
    stty_ok(&tty.screen());
    tty.wait_exit();
    tty.assert_restored();
    // The conversation stays in the terminal after exit.
    let all = tty.transcript();
    for needle in [
        "› plan the change",
        "STREAM-END",
        "Accepted edits to a.txt",
        "SECOND-RUN-DONE",
    ] {
        assert!(all.contains(needle), "{needle} kept in scrollback:\n{all}");
    }
}

#[test]
fn esc_interrupts_a_running_command_without_another_request_and_ctrl_c_keeps_drafts() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "Starting the long job.", "tool_calls": [{"id": "long", "name": "shell_run", "args": {"command": "sleep 30", "cwd": null, "timeoutMs": 60000}}]},
            {"text": "AFTER-INTERRUPT"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?; stty -a",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");
    tty.type_text("run the long job");
    tty.send("\r");
    tty.wait_for("Command requested — run it?");
    tty.send("1");
    tty.wait_gone("Command requested — run it?");
    tty.wait_for("Working");
    // While the command runs the UI still takes input.
    tty.type_text("typed while busy");
    tty.wait_for("typed while busy");
    tty.send("\x1b");
    let screen = tty.wait_for("Interrupted");
    assert!(
        !screen.contains("AFTER-INTERRUPT"),
        "the model is not asked again:\n{screen}"
    );
    tty.wait_gone("Working");
    // Esc keeps the draft. Waited for: the screen is read between two
    // writes of a frame (the live area is erased, then drawn).
    tty.wait_for("typed while busy");
    assert_eq!(
        recorded(&requests).len(),
        1,
        "no request after the interrupt"
    );
    // Ctrl+C clears the draft first, and never quits with one.
    tty.send("\x03");
    tty.wait_gone("typed while busy");
    tty.send("\x1b[A");
    tty.wait_for("typed while busy");
    tty.send("\x03");
    tty.wait_gone("typed while busy");
    // On an empty composer: the first press asks, the second quits.
    tty.send("\x03");
    tty.wait_for("again");
    tty.send("\x03");
    let screen = tty.wait_for("EXIT=0");
    tty.wait_for("speed");
    stty_ok(&tty.screen());
    assert!(screen.contains("north: session"), "{screen}");
    tty.wait_exit();
    tty.assert_restored();
    assert_eq!(recorded(&requests).len(), 1);
}

#[test]
fn without_a_key_or_script_north_says_how_to_start() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_north"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sb.home())
        .env("XDG_CONFIG_HOME", sb.home().join("config"))
        .env("XDG_STATE_HOME", sb.home().join("state"))
        .env("XDG_DATA_HOME", sb.home().join("data"))
        .current_dir(sb.project())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(
        err.contains("--script"),
        "points at the scripted backend: {err}"
    );
    assert!(err.contains("--provider"), "{err}");
}

#[test]
fn resize_redraws_and_sigterm_restores_the_terminal() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!({"turns": [{"text": "RESIZED-ANSWER"}]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' </dev/tty & pid=$!; echo PID=$pid; wait $pid; echo EXIT=$?; stty -a",
            script.display()
        ),
    );
    let screen = tty.wait_for("/help for commands");
    let pid: i32 = screen
        .split("PID=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("pid printed");
    // The screen model changes size first, so every byte after the
    // resize is read at the new size.
    tty.parser.lock().unwrap().screen_mut().set_size(
        std::num::NonZero::new(24).unwrap(),
        std::num::NonZero::new(60).unwrap(),
    );
    tty.master
        .resize(PtySize {
            rows: 24,
            cols: 60,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    // Type at once: keys that arrive together with the resize signal must
    // not be held back (crossterm's edge-triggered reader lost them; North
    // uses its level-triggered /dev/tty reader).
    tty.type_text("after resize");
    tty.wait_for("after resize");
    tty.send("\r");
    tty.wait_for("RESIZED-ANSWER");
    tty.wait_for("enter send");
    // SAFETY: signalling our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    tty.wait_for("EXIT=143");
    tty.wait_for("speed");
    stty_ok(&tty.screen());
    tty.wait_exit();
    tty.assert_restored();
}

#[test]
fn an_untrusted_project_is_asked_about_once_and_escapes_always_ask() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join(".north")).unwrap();
    std::fs::write(
        sb.project().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["touch ran.txt"]}"#,
    )
    .unwrap();
    std::fs::write(sb.dir.path().join("outside.txt"), "OUTSIDE-TUI-SECRET\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "t1", "name": "shell_run", "args": {"command": "touch ran.txt"}}]},
            {"tool_calls": [{"id": "t2", "name": "shell_run", "args": {"command": "cat ../outside.txt"}}]},
            {"text": "ALL-DONE"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    let screen = tty.wait_for("remember your choice? [y/N]");
    assert!(screen.contains("allows `touch ran.txt`"), "{screen}");
    tty.send("y\r");
    tty.wait_for("/help for commands");
    tty.type_text("go");
    tty.send("\r");
    // The trusted rule runs unasked; the escape asks, saying why.
    let screen = tty.wait_for("Command requested — run it?");
    assert!(screen.contains("cat ../outside.txt"), "{screen}");
    assert!(screen.contains("outside the project"), "{screen}");
    assert!(sb.project().join("ran.txt").exists());
    // "Deny" stops the turn: the model is not asked again.
    tty.send("3");
    tty.wait_for("Interrupted");
    assert!(!tty.screen().contains("ALL-DONE"));
    assert!(!tty.screen().contains("OUTSIDE-TUI-SECRET"));
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
    tty.assert_restored();

    // Trusted now: the next start asks nothing.
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    let screen = tty.wait_for("/help for commands");
    assert!(!screen.contains("remember your choice"), "{screen}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn a_running_command_shows_its_output_and_errors_before_it_ends() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let command = "echo OUT-LIVE; echo ERR-LIVE >&2; while [ ! -e go ]; do sleep 0.05; done; echo CMD-DONE-$((1+1))";
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "Running it.", "tool_calls": [{"id": "live", "name": "shell_run", "args": {"command": command, "timeoutMs": 120000}}]},
            {"text": "FINISHED-TURN"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.type_text("go");
    tty.send("\r");
    tty.wait_for("Command requested — run it?");
    tty.send("1");
    // Both streams are on screen while the command still runs (it waits
    // for a file only this test creates).
    let screen = tty.wait_until("stdout and stderr while running", |s| {
        s.contains("│ OUT-LIVE") && s.contains("┆ ERR-LIVE")
    });
    assert!(screen.contains("Working"), "{screen}");
    assert!(!screen.contains("CMD-DONE-2"), "{screen}");
    std::fs::write(sb.project().join("go"), "").unwrap();
    tty.wait_for("FINISHED-TURN");
    let screen = tty.wait_gone_then("Working");
    // The live lines give way to the result, which shows the command's
    // last lines once.
    assert!(screen.contains("│ CMD-DONE-2"), "{screen}");
    assert_eq!(
        screen.matches("│ OUT-LIVE").count(),
        1,
        "the live lines give way to the result:\n{screen}"
    );
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn ctrl_t_opens_the_whole_transcript_and_q_returns() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "Listing.", "tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": "seq 1 40 | sed 's/^/row-/'"}}]},
            {"text": "LISTED-ALL"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.type_text("list");
    tty.send("\r");
    tty.wait_for("Command requested — run it?");
    tty.send("1");
    tty.wait_for("LISTED-ALL");
    tty.wait_gone("Working");
    // The timeline shows a summary; the transcript view has every row.
    assert!(!tty.screen().contains("row-17"));
    tty.send("\x14");
    tty.wait_for("Transcript ·");
    tty.send("/row-17\r");
    tty.wait_for("row-17");
    tty.send("q");
    tty.wait_gone("Transcript ·");
    tty.wait_for("/help for commands");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn a_pasted_draft_survives_ctrl_c_and_comes_back_with_up() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file("script.json", &json!({"turns": [{"text": "unused"}]}));
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.send("\x1b[200~a long pasted draft\nwith a second line\x1b[201~");
    tty.wait_for("with a second line");
    tty.send("\x03");
    tty.wait_gone("with a second line");
    let screen = tty.screen();
    assert!(
        !screen.contains("EXIT="),
        "one ctrl+c never quits with a draft:\n{screen}"
    );
    tty.send("\x1b[A");
    tty.wait_for("with a second line");
    tty.wait_for("a long pasted draft");
    tty.send("\x03");
    tty.wait_gone("with a second line");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn a_bang_command_runs_in_the_shell_and_its_output_reaches_the_next_request() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file("script.json", &json!({"turns": [{"text": "SEEN-IT"}]}));
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
    tty.type_text("!echo BANG-$((2+3))");
    tty.send("\r");
    // The user typed it: it runs without a prompt (the policy's refusals
    // and the sandbox still apply), and shows what it printed.
    let screen = tty.wait_for("│ BANG-5");
    assert!(!screen.contains("run it?"), "{screen}");
    tty.wait_for("You ran: echo BANG");
    tty.wait_gone("Working");
    assert!(
        recorded(&requests).is_empty(),
        "no model request for a ! command"
    );
    tty.type_text("what did it print?");
    tty.send("\r");
    tty.wait_for("SEEN-IT");
    let sent = recorded(&requests);
    assert_eq!(sent.len(), 1);
    let body = texts(&sent[0]);
    assert!(body.contains("BANG-5"), "{body}");
    assert!(body.contains("what did it print?"), "{body}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}

#[test]
fn ctrl_v_attaches_the_clipboards_image_and_the_model_receives_it() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file("script.json", &json!({"turns": [{"text": "A-SCREENSHOT"}]}));
    let requests = sb.dir.path().join("requests.jsonl");
    // The clipboard: a fake `xclip` that prints a picture, found on PATH
    // the way the real one is, reached because DISPLAY is set.
    let png = sb.dir.path().join("clip.png");
    let img = image::RgbImage::from_fn(8, 6, |x, y| image::Rgb([x as u8 * 30, y as u8 * 40, 9]));
    img.save(&png).unwrap();
    let bin = sb.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let xclip = bin.join("xclip");
    Sandbox::executable(
        &xclip,
        format!(
            "#!/bin/sh\ncase \"$*\" in *image/png*) exec cat '{}' ;; esac\nexit 1\n",
            png.display()
        ),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "PATH='{}':\"$PATH\" DISPLAY=:77 \"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            bin.display(),
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");
    tty.type_text("what is this? ");
    tty.send("\x16");
    tty.wait_for("what is this? [Image #1]");
    tty.send("\r");
    tty.wait_for("A-SCREENSHOT");
    let sent = recorded(&requests);
    assert_eq!(sent.len(), 1);
    let body = sent[0].to_string();
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&png).unwrap());
    assert!(
        body.contains(&data),
        "the clipboard's picture was sent: {body}"
    );
    assert!(body.contains("image/png"), "{body}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}
