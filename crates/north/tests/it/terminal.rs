//! The TUI in a real terminal emulator with scrollback (tmux): what a user
//! sees on screen *and* when scrolling up, through long streamed answers,
//! resizes and several turns.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use north_test_support::{FakeServer, Reply, openai};

use crate::emulator;
use emulator::*;

/// `n` numbered lines, each its own paragraph or each a line of one
/// paragraph.
fn long_answer(tag: &str, n: usize, paragraphs: bool) -> Vec<String> {
    let end = if paragraphs { "\n\n" } else { "\n" };
    (1..=n)
        .map(|i| format!("{tag}-{i:03} of a long streamed answer{end}"))
        .collect()
}

fn push_answer(server: &FakeServer, parts: &[String]) {
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    // About 25 lines a second.
    server.push(Reply::sse(openai::text_stream(&refs)).paced(Duration::from_millis(40)));
}

/// Every numbered line exactly once in scrollback and screen, and none of
/// `chrome` in scrollback.
fn assert_once_without(term: &Term, tag: &str, n: usize, chrome: &[&str]) {
    let all = term.everything();
    for i in 1..=n {
        let line = format!("{tag}-{i:03} ");
        assert_eq!(count(&all, &line), 1, "{line} once in\n{all}");
    }
    let scrollback = term.scrollback();
    for chrome in chrome {
        assert_eq!(
            count(&scrollback, chrome),
            0,
            "{chrome:?} in scrollback:\n{scrollback}"
        );
    }
}

/// Every numbered line exactly once in scrollback and screen, no live
/// area text in scrollback, and the answer's last lines on screen right
/// above the composer.
fn assert_whole(term: &Term, tag: &str, n: usize) {
    let chrome = [
        "Working",
        "esc interrupts",
        "enter send",
        "Ask North to do something",
        "tokens",
        "──────",
    ];
    assert_once_without(term, tag, n, &chrome);
    let screen = term.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let composer = rows.iter().rposition(|r| r.starts_with("──")).unwrap();
    let last = rows
        .iter()
        .rposition(|r| r.contains(&format!("{tag}-{n:03} ")))
        .unwrap_or_else(|| panic!("{tag}-{n} on screen:\n{screen}"));
    assert!(last < composer, "{screen}");
    for i in n - 9..=n {
        assert!(
            screen.contains(&format!("{tag}-{i:03} ")),
            "{tag}-{i} on screen:\n{screen}"
        );
    }
    assert!(
        rows[last + 1..composer].iter().all(|r| r.trim().is_empty()),
        "the end of the answer sits right above the composer:\n{screen}"
    );
}

/// A session asked for a 300-line answer, then a 60-line one; the
/// runtime and server live as long as the terminal.
struct Streaming {
    term: Term,
    _sb: Sandbox,
    _server: FakeServer,
    _rt: tokio::runtime::Runtime,
}

fn streaming(paragraphs: bool) -> Streaming {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FakeServer::start()).unwrap();
    push_answer(&server, &long_answer("LINE", 300, paragraphs));
    push_answer(&server, &long_answer("MORE", 60, paragraphs));
    let sb = Sandbox::new();
    let term = Term::start(&sb, 120, 40, &north_openai(&server.url(), ""), &[]);
    term.wait_for("/help");
    term.type_text("write a long answer");
    term.keys(&["Enter"]);
    Streaming {
        term,
        _sb: sb,
        _server: server,
        _rt: rt,
    }
}

fn session(paragraphs: bool, resize: bool) {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let s = streaming(paragraphs);
    let term = &s.term;
    if resize {
        term.wait_seen("LINE-080");
        term.resize_quietly(80, 24);
        term.wait_seen("LINE-120");
        term.resize_quietly(120, 40);
    }
    term.wait_seen("LINE-300");
    term.wait_until("the turn to end", |s| !s.contains("Working"));
    assert_whole(term, "LINE", 300);
    // A second turn follows the first, in order.
    term.type_text("and some more");
    term.keys(&["Enter"]);
    term.wait_for("MORE-060");
    term.wait_until("the turn to end", |s| !s.contains("Working"));
    assert_whole(term, "MORE", 60);
    let all = term.everything();
    let first = all.find("LINE-300 ").unwrap();
    let asked = all.find("› and some more").unwrap();
    let second = all.find("MORE-001 ").unwrap();
    assert!(first < asked && asked < second, "{all}");
}

#[test]
fn a_long_answer_of_paragraphs_lands_in_scrollback_exactly_once() {
    session(true, false);
}

#[test]
fn a_long_answer_of_lines_lands_in_scrollback_exactly_once() {
    session(false, false);
}

#[test]
fn a_resize_mid_stream_leaves_every_line_once_and_no_live_area_behind() {
    session(true, true);
}

#[test]
fn a_resize_mid_paragraph_leaves_every_line_once_and_no_live_area_behind() {
    session(false, true);
}

#[test]
fn exit_and_quit_leave_with_the_live_area_erased() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FakeServer::start()).unwrap();
    for word in ["/exit", "/quit"] {
        let sb = Sandbox::new();
        let term = Term::start(&sb, 120, 40, &north_openai(&server.url(), ""), &[]);
        term.wait_for("/help");
        term.type_text(word);
        // The palette may be open over the composer: Esc closes it, the
        // text stays.
        term.keys(&["Enter"]);
        let all = term.wait_exit();
        assert!(all.contains("EXIT=0"), "{word}:\n{all}");
        assert_eq!(
            count(&all, "enter send"),
            0,
            "{word}: live area left behind:\n{all}"
        );
    }
}

/// North on a scripted model, recording the requests it would send.
fn scripted(sb: &Sandbox, turns: serde_json::Value) -> (Term, std::path::PathBuf) {
    let script = sb.file("script.json", &serde_json::json!({ "turns": turns }));
    let requests = sb.dir.path().join("requests.jsonl");
    let term = Term::start(
        sb,
        120,
        40,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            script.display(),
            requests.display()
        ),
        &[],
    );
    term.wait_for("Ask North to do something");
    (term, requests)
}

#[test]
fn a_failed_command_shows_its_stderr_and_a_failure_mark() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, _) = scripted(
        &sb,
        serde_json::json!([
            {"text": "Looking.", "tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "ls nonexistent-file", "cwd": null, "timeoutMs": 20000}}]},
            {"text": "It is not there."}
        ]),
    );
    term.type_text("is the file there?");
    term.keys(&["Enter"]);
    let screen = term.wait_until("the prompt or the result", |s| {
        s.contains("run it?") || s.contains("exit code")
    });
    if screen.contains("run it?") {
        term.keys(&["1"]);
    }
    let screen = term.wait_for("It is not there.");
    assert!(screen.contains("✗ exit code 2"), "{screen}");
    assert!(screen.contains("┆ ls: cannot access"), "{screen}");
}

#[test]
fn esc_at_an_edit_prompt_ends_the_turn_with_no_further_request() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "hello world\n").unwrap();
    let (term, requests) = scripted(
        &sb,
        serde_json::json!([
            {"text": "Editing.", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "hello", "new": "bonjour", "expectedOccurrences": 1}}]},
            {"text": "SHOULD-NOT-BE-ASKED"}
        ]),
    );
    term.type_text("translate it");
    term.keys(&["Enter"]);
    term.wait_for("Review edits");
    term.keys(&["Escape"]);
    let screen = term.wait_for("Interrupted");
    term.wait_for("enter send");
    assert!(screen.contains("Rejected edits to"), "{screen}");
    assert_eq!(recorded(&requests).len(), 1, "no request after Esc");
    assert!(!term.everything().contains("SHOULD-NOT-BE-ASKED"));
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "hello world\n"
    );
}

#[test]
fn a_bang_command_runs_without_a_prompt_and_shows_its_output() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, requests) = scripted(&sb, serde_json::json!([{"text": "unused"}]));
    term.type_text("!echo hi-from-the-shell");
    term.keys(&["Enter"]);
    let screen = term.wait_for("│ hi-from-the-shell");
    assert!(
        screen.contains("You ran: echo hi-from-the-shell"),
        "{screen}"
    );
    assert!(!screen.contains("run it?"), "{screen}");
    assert!(!requests.exists() || recorded(&requests).is_empty());
}

#[test]
fn after_resume_the_exit_line_names_the_resumed_session() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let old = sb.file(
        "old.json",
        &serde_json::json!({"turns": [{"text": "OLD-ANSWER"}]}),
    );
    let out = sb
        .north()
        .args(["exec", "--script"])
        .arg(&old)
        .arg("an earlier question")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (term, _) = scripted(&sb, serde_json::json!([{"text": "unused"}]));
    term.type_text("/resume");
    term.keys(&["Enter"]);
    let screen = term.wait_for("Resume which session?");
    let id = screen
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("▶ "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no selected session in:\n{screen}"))
        .to_string();
    term.keys(&["Enter"]);
    term.wait_for("OLD-ANSWER");
    term.type_text("/exit");
    term.keys(&["Enter"]);
    let all = term.wait_exit();
    assert!(
        all.contains(&format!(
            "north: session {id} (resume with: north --resume {id})"
        )),
        "{all}"
    );
}

#[test]
fn the_composer_takes_typing_while_the_server_hangs() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    // Accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    let sb = Sandbox::new();
    let term = Term::start(&sb, 120, 40, &north_openai(&url, ""), &[]);
    term.wait_for("Ask North to do something");
    term.type_text("hello?");
    term.keys(&["Enter"]);
    term.wait_for("Working");
    term.type_text("typed while waiting");
    let screen = term.wait_for("typed while waiting");
    assert!(screen.contains("Working"), "{screen}");
    // Esc stops the wait; the draft is still there.
    term.keys(&["Escape"]);
    let screen = term.wait_for("enter send");
    assert!(screen.contains("typed while waiting"), "{screen}");
}

#[test]
fn retries_show_in_the_status_line_while_north_waits() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    // A port nothing listens on: every attempt is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let sb = Sandbox::new();
    let term = Term::start(&sb, 120, 40, &north_openai(&url, ""), &[]);
    term.wait_for("Ask North to do something");
    term.type_text("hello?");
    term.keys(&["Enter"]);
    let screen = term.wait_for("retrying 1/");
    assert!(screen.contains("Working"), "{screen}");
    term.keys(&["Escape"]);
    term.wait_for("enter send");
}

#[test]
fn rewind_after_undo_rewinds_the_conversation() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, requests) = scripted(
        &sb,
        serde_json::json!([
            {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "echo made > made.txt"}}]},
            {"text": "FIRST-DONE"},
            {"text": "AFTER-REWIND"}
        ]),
    );
    term.type_text("make a file");
    term.keys(&["Enter"]);
    let screen = term.wait_until("the prompt or the answer", |s| {
        s.contains("run it?") || s.contains("FIRST-DONE")
    });
    if screen.contains("run it?") {
        term.keys(&["1"]);
    }
    term.wait_for("FIRST-DONE");
    term.wait_for("enter send");
    term.type_text("/undo");
    term.keys(&["Enter"]);
    term.wait_for("Undid turn 1");
    assert!(!sb.project().join("made.txt").exists());
    // The code is back already; the conversation still rewinds.
    term.type_text("/rewind 1");
    term.keys(&["Enter"]);
    term.wait_for("Conversation rewound");
    term.type_text("start over");
    term.keys(&["Enter"]);
    term.wait_for("AFTER-REWIND");
    let sent = recorded(&requests);
    let last = sent.last().unwrap().to_string();
    assert!(last.contains("start over"), "{last}");
    assert!(
        !last.contains("make a file"),
        "the rewound turn is gone: {last}"
    );
}

#[test]
fn ctrl_z_suspends_to_the_shell_and_fg_brings_north_back_with_its_draft() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &serde_json::json!({"turns": [{"text": "ANSWER-AFTER-FG"}]}),
    );
    // A shell with job control, as a user has.
    let term = Term::start(
        &sb,
        120,
        40,
        "PS1='SHELL$ ' exec bash --norc --noprofile -i",
        &[],
    );
    term.wait_for("SHELL$");
    term.type_text(&format!("\"$NORTH\" --script '{}'", script.display()));
    term.keys(&["Enter"]);
    term.wait_for("Ask North to do something");
    term.type_text("draft text");
    term.wait_for("› draft text");
    term.keys(&["C-z"]);
    let screen = term.wait_for("Stopped");
    // The terminal is the shell's again: its prompt, no live area left.
    assert!(
        screen.trim_end().ends_with("SHELL$"),
        "the shell prompt is last:\n{screen}"
    );
    assert!(!screen.contains("enter send"), "{screen}");
    assert!(!screen.contains("› draft text"), "{screen}");
    term.type_text("fg");
    term.keys(&["Enter"]);
    term.wait_for("› draft text");
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-AFTER-FG");
    term.wait_for("Ask North to do something");
    term.keys(&["C-d"]);
    let screen = term.wait_until("the shell after North", |s| {
        s.trim_end().ends_with("SHELL$") && !s.contains("enter send")
    });
    assert_eq!(count(&screen, "ANSWER-AFTER-FG"), 1, "{screen}");
}

#[test]
fn ctrl_g_edits_the_draft_in_the_users_editor_and_a_failed_editor_keeps_it() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &serde_json::json!({"turns": [{"text": "GOT-THE-EDITED-DRAFT"}]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    // The editor appends a line the first time and fails the second.
    let editor = sb.dir.path().join("editor.sh");
    let ran = sb.dir.path().join("editor-ran");
    Sandbox::executable(
        &editor,
        format!(
            "#!/bin/sh\nif [ -e '{ran}' ]; then exit 3; fi\ntouch '{ran}'\nprintf '%s\\nADDED-IN-EDITOR\\n' \"$(cat \"$1\")\" > \"$1\"\n",
            ran = ran.display()
        ),
    );
    let term = Term::start(
        &sb,
        120,
        40,
        &format!(
            "VISUAL='{}' \"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            editor.display(),
            script.display(),
            requests.display()
        ),
        &[],
    );
    term.wait_for("Ask North to do something");
    term.type_text("fix the bug");
    term.keys(&["C-g"]);
    term.wait_for("ADDED-IN-EDITOR");
    let screen = term.screen();
    assert!(screen.contains("› fix the bug"), "{screen}");
    // The second run fails: the draft stays and North says why.
    term.keys(&["C-g"]);
    let screen = term.wait_for("the draft is as it was");
    assert!(screen.contains("ADDED-IN-EDITOR"), "{screen}");
    term.keys(&["Enter"]);
    term.wait_for("GOT-THE-EDITED-DRAFT");
    let sent = north_test_support::recorded::texts(&recorded(&requests)[0]);
    assert!(sent.contains("fix the bug\nADDED-IN-EDITOR"), "{sent}");
}

/// The user's `statusLine` command (Claude Code's schema) in their config.
fn status_line_config(sb: &Sandbox, command: &str) {
    let dir = sb.home().join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        serde_json::json!({"statusLine": {"type": "command", "command": command, "padding": 0}})
            .to_string(),
    )
    .unwrap();
}

#[test]
fn the_users_status_line_command_reads_the_session_and_is_shown_sandboxed_and_cut_off() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let bin = sb.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("status.sh");
    let escaped = sb.home().join("escaped.txt");
    Sandbox::executable(
        &script,
        format!(
            "#!/bin/sh\ninput=$(cat)\ntouch '{}' 2>/dev/null\nmodel=$(printf '%s' \"$input\" | sed 's/.*\"display_name\":\"\\([^\"]*\\)\".*/\\1/')\necho \"STATUS-OF model=$model\"\necho never-shown\n",
            escaped.display()
        ),
    );
    status_line_config(&sb, &script.display().to_string());
    let (term, _) = scripted(&sb, serde_json::json!([{"text": "hi"}]));
    let screen = term.wait_for("STATUS-OF model=scripted");
    assert!(!screen.contains("never-shown"), "{screen}");
    // It ran in the sandbox: the home directory is not writable there.
    let confined = sb.north().args(["sandbox", "--", "true"]).output().unwrap();
    if confined.status.success() && !text(&confined.stderr).contains("partial") {
        assert!(!escaped.exists(), "the status line command wrote outside");
    }
    drop(term);

    // A command that hangs is cut off, and North says so.
    let sb = Sandbox::new();
    status_line_config(&sb, "sleep 30");
    let (term, _) = scripted(&sb, serde_json::json!([{"text": "hi"}]));
    term.wait_for("status line: stopped after 2 s");
    term.type_text("still typing");
    term.wait_for("› still typing");
}

#[test]
fn ctrl_r_finds_an_earlier_prompt_to_send_again() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, requests) = scripted(
        &sb,
        serde_json::json!([{"text": "ANSWER-ONE"}, {"text": "ANSWER-TWO"}, {"text": "ANSWER-THREE"}]),
    );
    for prompt in ["check the ALPHA module", "now something else"] {
        term.type_text(prompt);
        term.keys(&["Enter"]);
        term.wait_for(if prompt.contains("ALPHA") {
            "ANSWER-ONE"
        } else {
            "ANSWER-TWO"
        });
        term.wait_for("enter send");
    }
    term.keys(&["C-r"]);
    term.type_text("alpha");
    let screen = term.wait_for("history search: \"alpha\"");
    assert!(screen.contains("› check the ALPHA module"), "{screen}");
    term.keys(&["Enter"]);
    term.type_text(" again");
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-THREE");
    let sent = recorded(&requests);
    let last = north_test_support::recorded::texts(sent.last().unwrap());
    assert!(
        last.trim_end().ends_with("check the ALPHA module again"),
        "{last}"
    );
}

#[test]
fn per_hunk_review_applies_the_kept_hunk_and_tells_the_model_the_refused_one() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let original: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(sb.project().join("notes.txt"), &original).unwrap();
    let edit = |old: &str, new: &str| {
        serde_json::json!({"toolName": "edit_replace_exact",
            "args": {"path": "notes.txt", "old": old, "new": new, "expectedOccurrences": 1}})
    };
    let (term, requests) = scripted(
        &sb,
        serde_json::json!([
            {"tool_calls": [{"id": "b1", "name": "edit_apply_batch", "args": {"edits": [
                edit("line 3\n", "line three\n"),
                edit("line 25\n", "line twenty-five\n")
            ]}}]},
            {"text": "EDITED"}
        ]),
    );
    term.type_text("spell two numbers");
    term.keys(&["Enter"]);
    term.wait_for("Review edits");
    term.wait_for("]/[ hunk · x refuse hunk");
    // To the second hunk, refuse it, accept the rest.
    term.keys(&["]", "]", "x"]);
    let screen = term.wait_for("✗ refused");
    assert!(screen.contains("Accept 1 of 2 hunks"), "{screen}");
    term.keys(&["y"]);
    term.wait_for("EDITED");
    let now = std::fs::read_to_string(sb.project().join("notes.txt")).unwrap();
    assert_eq!(now, original.replace("line 3\n", "line three\n"));
    let result = north_test_support::recorded::tool_result(&recorded(&requests)[1], "b1");
    assert_eq!(result["ok"], true, "{result}");
    let refused = result["output"]["refusedHunks"].to_string();
    assert!(refused.contains("notes.txt @@ -22,7 +22,7 @@"), "{result}");
}

#[test]
fn an_edit_is_changed_in_the_users_editor_before_it_is_accepted() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("greet.txt"), "hello\n").unwrap();
    let editor = sb.dir.path().join("editor.sh");
    Sandbox::executable(
        &editor,
        "#!/bin/sh\nfor f in \"$@\"; do sed -i 's/bonjour/servus/' \"$f\"; done\n",
    );
    let script = sb.file(
        "script.json",
        &serde_json::json!({"turns": [
            {"tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {
                "path": "greet.txt", "old": "hello", "new": "bonjour", "expectedOccurrences": 1}}]},
            {"text": "EDITED"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let term = Term::start(
        &sb,
        120,
        40,
        &format!(
            "EDITOR='{}' \"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            editor.display(),
            script.display(),
            requests.display()
        ),
        &[],
    );
    term.wait_for("Ask North to do something");
    term.type_text("translate it");
    term.keys(&["Enter"]);
    let screen = term.wait_for("Review edits");
    assert!(screen.contains("Edit, then accept"), "{screen}");
    term.keys(&["e"]);
    term.wait_for("EDITED");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("greet.txt")).unwrap(),
        "servus\n",
        "what the user saved is what was written"
    );
    let result = north_test_support::recorded::tool_result(&recorded(&requests)[1], "e1");
    assert_eq!(result["ok"], true, "{result}");
    let changes = result["output"]["userChanges"].to_string();
    assert!(
        changes.contains("-bonjour") && changes.contains("+servus"),
        "the model is told what the user changed: {result}"
    );
}

#[test]
fn keys_typed_while_a_slow_server_is_asked_wait_for_the_composer_unechoed() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FakeServer::start()).unwrap();
    // The context-window probes hang: North waits for them as it starts.
    for (method, path) in [
        ("GET", "/props"),
        ("GET", "/v1/models"),
        ("POST", "/api/show"),
    ] {
        server.route(
            method,
            path,
            Reply::json(200, "{}").with_fault(north_test_support::Fault::StallAfter(0)),
        );
    }
    let sb = Sandbox::new();
    let term = Term::start(&sb, 120, 40, &north_openai(&server.url(), ""), &[]);
    // While North waits for the server, a line and Enter: echoed, they
    // would stay above the header.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while server.requests_to("/props").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "North never asked the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The wait is shown, not a blank terminal.
    let waiting = term.wait_for("North is starting: asking http://127.0.0.1");
    assert!(waiting.contains("for the context window"), "{waiting}");
    term.type_text("typed early");
    term.keys(&["Enter"]);
    let screen = term.wait_for("› typed early");
    assert!(
        !term.everything().contains("North is starting"),
        "the wait's line is gone once North is up:\n{screen}"
    );
    let header = screen
        .lines()
        .position(|l| l.starts_with("North "))
        .unwrap_or_else(|| panic!("the header:\n{screen}"));
    let above: Vec<&str> = screen.lines().take(header).collect();
    assert!(
        !above.iter().any(|l| l.contains("typed early")),
        "the keys were echoed above the header:\n{screen}"
    );
    assert_eq!(count(&term.everything(), "typed early"), 1, "{screen}");
}

/// Resizes that land while North is drawing (tmux moves its lines, and the
/// cursor with them, before North is told of the new size, so a frame
/// computed for the old size arrives after): every line of the answer
/// still lands exactly once and no status or composer text stays behind.
/// Frames reach the live area from where the cursor was left, so such a
/// frame is drawn where the live area went, not over the transcript lines
/// that moved into its old rows (which lost blocks of 4–10 lines in about
/// one resize in eight before).
#[test]
fn resizes_while_north_draws_keep_every_line_once() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let s = streaming(true);
    let term = &s.term;
    term.wait_seen("LINE-030");
    let sizes = [
        (80, 24),
        (120, 40),
        (60, 30),
        (100, 35),
        (70, 20),
        (120, 40),
        (90, 30),
        (120, 40),
    ];
    for (i, (cols, rows)) in sizes.into_iter().enumerate() {
        term.wait_seen(&format!("LINE-{:03}", 40 + i * 25));
        term.resize(cols, rows);
    }
    term.wait_seen("LINE-300");
    term.wait_until("the turn to end", |s| !s.contains("Working"));
    let chrome = [
        "Working",
        "esc interrupts",
        "enter send",
        "Ask North to do something",
    ];
    assert_once_without(term, "LINE", 300, &chrome);
}
