//! What the user sees, state by state: the real `InlineTerminal` drawing
//! into ratatui's `TestBackend`, snapshotted as text (scrollback, then the
//! screen). Colours are checked separately where they carry meaning.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use north_protocol::FileDiff;
use north_protocol::{
    ApprovalDecision, ApprovalKind, ChatMessage, Checkpoint, ErrorKind, Event, State, Usage,
};
use north_tui::{Action, PromptKind, UiMsg};
use ratatui::style::Color;
use serde_json::json;

use crate::ui;
use ui::*;

#[test]
fn idle_start_shows_the_composer_and_status() {
    let mut ui = Ui::new(80, 8);
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn streaming_text_renders_markdown_as_it_arrives() {
    let mut ui = Ui::new(80, 24);
    ui.typed("Explain the layout");
    assert_eq!(
        ui.key(KeyCode::Enter),
        vec![Action::Submit("Explain the layout".into())]
    );
    ui.event(Event::TurnStarted { turn: 1 });
    for piece in [
        "# The ",
        "layout\n\nNorth keeps **three** parts apart: the *agent*, the `tools` and the UI.\n\n",
        "- `north-agent` runs turns\n- `north-tools` does the work\n  - nested: policy\n\n1. first\n2. second\n\n> quoted advice\n\n",
        "```rust\nfn main() {\n    println!(\"hi\");\n",
    ] {
        ui.text(piece);
    }
    insta::assert_snapshot!("streaming_mid_code_block", ui.screen());
    ui.text("}\n```\n\nThat is all.");
    ui.event(usage(1200, 80));
    ui.event(Event::TurnEnd {
        stop_reason: None,
        usage: Usage::default(),
    });
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    insta::assert_snapshot!("streaming_finished", ui.screen());
}

#[test]
fn intent_lines_and_compact_and_expanded_results() {
    let mut ui = Ui::new(80, 30);
    ui.app.start_turn("Where is the greeting?");
    ui.text("Let me look.");
    for (id, tool, line) in [
        ("c1", "search_text", "Searching: `greeting` in `src/`"),
        ("c2", "read_file", "Reading `src/main.rs`"),
        ("c3", "shell_run", "Command requested: `cargo test`"),
    ] {
        ui.event(Event::ToolIntent {
            call_id: id.into(),
            tool: tool.into(),
            line: line.into(),
            kind: Default::default(),
        });
        let (ok, summary, details) = match tool {
            "search_text" => (
                true,
                "2 matches in 1 file",
                json!({"ok": true, "output": {"matches": 2}}),
            ),
            "read_file" => (
                true,
                "read 3 lines of `src/main.rs`",
                json!({"ok": true, "output": {"content": "fn main() {\n    println!(\"hello\");\n}\n"}}),
            ),
            _ => (
                false,
                "failed: exit status 101",
                json!({"ok": false, "error": "exit status 101"}),
            ),
        };
        ui.event(Event::ToolResult {
            call_id: id.into(),
            tool: tool.into(),
            ok,
            summary: summary.into(),
            details: Some(details),
        });
    }
    insta::assert_snapshot!("results_compact", ui.screen());
    // Ctrl+O opens every result's whole output in the transcript view; the
    // timeline gets nothing appended.
    let before = ui.app.items().len();
    assert_eq!(ui.ctrl('o'), vec![Action::Transcript]);
    assert_eq!(ui.app.items().len(), before);
    let lines: Vec<String> = ui
        .app
        .transcript_lines(80)
        .iter()
        .map(|l| l.to_string().trim_end().to_string())
        .collect();
    insta::assert_snapshot!("results_expanded", lines.join("\n"));
}

#[test]
fn a_multi_file_diff_review_is_accepted_in_the_timeline() {
    let mut ui = Ui::new(80, 30);
    ui.app.start_turn("Greet in French and add greet()");
    ui.text("Here are the edits.");
    ui.event(Event::ToolIntent {
        call_id: "e1".into(),
        tool: "edit_apply_batch".into(),
        line: "Preparing edits in `src/main.rs`, `src/greet.rs`".into(),
        kind: Default::default(),
    });
    let files = two_file_edit();
    let diff: String = files.iter().map(|f| f.diff.clone()).collect();
    ui.event(Event::Diff {
        call_id: "e1".into(),
        diff,
    });
    ui.event(Event::ApprovalRequested {
        call_id: "e1".into(),
        kind: ApprovalKind::Edit,
        subject: "src/main.rs, src/greet.rs".into(),
    });
    let mut rx = ui.prompt("e1", PromptKind::Edit { files });
    let screen = ui.screen();
    insta::assert_snapshot!("diff_review", screen);
    // Colour carries meaning: added lines green, removed red.
    let buf = ui.term.backend().buffer().clone();
    let find = |needle: &str| {
        rows(&buf)
            .iter()
            .position(|r| r.contains(needle))
            .map(|y| buf.cell((1, y as u16)).unwrap().fg)
    };
    assert_eq!(find("+    println!(\"bonjour\");"), Some(Color::Green));
    assert_eq!(find("-    println!(\"hello\");"), Some(Color::Red));
    assert!(rx.try_recv().is_err(), "nothing decided before a key");
    ui.key(KeyCode::Char('y'));
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Accept);
    ui.event(Event::ApprovalDecided {
        call_id: "e1".into(),
        decision: ApprovalDecision::Accept,
    });
    ui.event(Event::ToolResult {
        call_id: "e1".into(),
        tool: "edit_apply_batch".into(),
        ok: true,
        summary: "applied edits to 2 files".into(),
        details: None,
    });
    insta::assert_snapshot!("diff_accepted", ui.screen());
}

#[test]
fn a_long_diff_scrolls_and_can_be_rejected() {
    let mut ui = Ui::new(60, 16);
    let old: String = (1..=40).map(|i| format!("-line {i}\n")).collect();
    let new: String = (1..=40).map(|i| format!("+LINE {i}\n")).collect();
    let f = FileDiff {
        path: "big.txt".into(),
        diff: format!("--- a/big.txt\n+++ b/big.txt\n@@ -1,40 +1,40 @@\n{old}{new}"),
        added: 40,
        removed: 40,
        created: false,
        diagnostics: None,
    };
    ui.app.start_turn("shout");
    let mut rx = ui.prompt("e2", PromptKind::Edit { files: vec![f] });
    insta::assert_snapshot!("diff_long_top", ui.screen());
    for _ in 0..3 {
        ui.key(KeyCode::PageDown);
    }
    insta::assert_snapshot!("diff_long_scrolled", ui.screen());
    // Esc rejects and ends the turn (the runner cancels, then replies).
    assert_eq!(ui.key(KeyCode::Esc), vec![Action::Interrupt]);
    ui.app.release_deferred();
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Reject);
}

#[test]
fn the_review_shows_what_a_language_server_says_of_the_change() {
    use north_protocol::{Diagnostic, FileDiagnostics, Severity};
    let mut ui = Ui::new(80, 20);
    let problem = |line, severity, message: &str| Diagnostic {
        line,
        column: 16,
        severity,
        message: message.into(),
    };
    let f = FileDiff {
        path: "main.py".into(),
        diff: "--- a/main.py\n+++ b/main.py\n@@ -1,3 +1,3 @@\n from lib import greet\n \n-message: str = greet('x')\n+message: int = greet('x')\n".into(),
        added: 1,
        removed: 1,
        created: false,
        diagnostics: Some(FileDiagnostics {
            path: "main.py".into(),
            server: "python".into(),
            checked: true,
            no_answer: None,
            introduced: vec![problem(
                3,
                Severity::Error,
                "Type \"str\" is not assignable to declared type \"int\"",
            )],
            resolved: vec![problem(9, Severity::Warning, "unused import")],
            remaining: 0,
        }),
    };
    let silent = FileDiff {
        path: "util.py".into(),
        diff: "--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n".into(),
        added: 1,
        removed: 1,
        created: false,
        diagnostics: Some(FileDiagnostics {
            path: "util.py".into(),
            server: "python".into(),
            checked: false,
            no_answer: Some("the python language server gave no diagnostics within 8 s".into()),
            introduced: Vec::new(),
            resolved: Vec::new(),
            remaining: 0,
        }),
    };
    ui.app.start_turn("retype it");
    let _rx = ui.prompt(
        "e3",
        PromptKind::Edit {
            files: vec![f, silent],
        },
    );
    insta::assert_snapshot!("diff_with_diagnostics", ui.screen());
}

#[test]
fn the_three_way_shell_approval() {
    let mut ui = Ui::new(80, 14);
    ui.app.start_turn("run the tests");
    ui.event(Event::ToolIntent {
        call_id: "s1".into(),
        tool: "shell_run".into(),
        line: "Command requested: `cargo test --workspace`".into(),
        kind: Default::default(),
    });
    ui.event(Event::ApprovalRequested {
        call_id: "s1".into(),
        kind: ApprovalKind::Shell,
        subject: "cargo test --workspace".into(),
    });
    let mut rx = ui.prompt(
        "s1",
        PromptKind::Shell {
            command: "cargo test --workspace".into(),
            why: None,
            prefix: None,
        },
    );
    insta::assert_snapshot!("shell_prompt", ui.screen());
    ui.key(KeyCode::Right);
    insta::assert_snapshot!("shell_prompt_always_selected", ui.screen());
    ui.key(KeyCode::Enter);
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Always);
    ui.event(Event::ApprovalDecided {
        call_id: "s1".into(),
        decision: ApprovalDecision::Always,
    });
    insta::assert_snapshot!("shell_always_decided", ui.screen());
}

#[test]
fn shell_shortcuts_map_to_each_decision() {
    for (key, want) in [
        ('1', ApprovalDecision::RunOnce),
        ('2', ApprovalDecision::Always),
        ('3', ApprovalDecision::Deny),
        ('a', ApprovalDecision::Always),
        ('n', ApprovalDecision::Deny),
    ] {
        let mut ui = Ui::new(80, 14);
        let mut rx = ui.prompt(
            "s",
            PromptKind::Shell {
                command: "ls".into(),
                why: None,
                prefix: None,
            },
        );
        ui.key(KeyCode::Char(key));
        assert_eq!(rx.try_recv().unwrap(), want, "key {key}");
        assert!(!ui.app.has_prompt());
    }
}

#[test]
fn capability_requests_are_prompts_too() {
    let mut ui = Ui::new(80, 12);
    ui.app.start_turn("fetch the docs");
    let mut rx = ui.prompt(
        "n1",
        PromptKind::Capability {
            capability: "net:docs.rs".into(),
            reason: "http.get https://docs.rs/ratatui".into(),
        },
    );
    insta::assert_snapshot!("capability_prompt", ui.screen());
    ui.key(KeyCode::Char('n')); // Deny ends the turn: replied after the cancel.
    ui.app.release_deferred();
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Deny);
}

#[test]
fn ctrl_c_during_a_prompt_refuses_it_and_interrupts() {
    let mut ui = Ui::new(80, 12);
    ui.app.start_turn("run it");
    let mut rx = ui.prompt(
        "s",
        PromptKind::Shell {
            command: "make".into(),
            why: None,
            prefix: None,
        },
    );
    assert_eq!(ui.ctrl('c'), vec![Action::Interrupt]);
    ui.app.release_deferred();
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Deny);
    assert_eq!(ui.ctrl('c'), vec![Action::Quit], "a second ctrl+c quits");
}

#[test]
fn errors_and_interruptions() {
    let mut ui = Ui::new(80, 12);
    ui.app.start_turn("hello");
    ui.text("Half an ans");
    ui.event(Event::Error {
        kind: ErrorKind::Provider,
        message: "anthropic: HTTP 529 overloaded_error: Overloaded (after 4 attempts)".into(),
    });
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::ProviderFailed(
            "x".into(),
        )));
    ui.app.start_turn("try again");
    ui.event(Event::Error {
        kind: ErrorKind::Interrupted,
        message: "interrupted".into(),
    });
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Interrupted));
    ui.command("/nope");
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn slash_help_and_model() {
    let mut ui = Ui::new(80, 30);
    ui.command("/help");
    ui.command("/model");
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn slash_clear_clears_the_screen_but_not_the_scrollback() {
    let mut ui = Ui::new(60, 10);
    ui.app.start_turn("first question");
    ui.text("first answer");
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    ui.screen();
    // As in Claude Code, /clear also starts a new conversation (so does /new).
    let actions = ui.command("/clear");
    assert_eq!(actions, vec![Action::ClearScreen, Action::New]);
    ui.term.clear_screen().unwrap();
    ui.app.screen_cleared();
    ui.app.handle_msg(UiMsg::Started {
        session_id: "20251122-111111-b2c3".into(),
    });
    assert_eq!(ui.command("/new"), vec![Action::New]);
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn slash_memory_and_allowlist_show_project_files() {
    let mut ui = Ui::new(90, 20);
    ui.command("/memory");
    ui.command("/allowlist");
    let root = ui.dir.path().to_path_buf();
    let mem = north_agent::memory::MemoryFile::project(&root);
    let mut e = north_agent::memory::MemoryEntry::new("greeting", "main.rs greets in French.");
    e.tags = vec!["i18n".into()];
    mem.append(e).unwrap();
    std::fs::write(
        root.join(".north/allowlist.json"),
        r#"{"allowedCommands": ["cargo test", "pnpm lint"], "allowedPrefixes": ["cargo build"], "allowedTools": ["mcp__docs"]}"#,
    )
    .unwrap();
    ui.command("/memory");
    ui.command("/allowlist");
    insta::assert_snapshot!(ui.screen());
}

fn write_session(root: &std::path::Path, id: &str, ts: f64, first: &str) {
    let dir = root.join(".north/sessions").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let cp = Checkpoint {
        session_id: id.into(),
        revision: 2,
        updated_ts: ts,
        state: State::default(),
        recent_messages: vec![
            ChatMessage {
                role: north_protocol::Role::User,
                content: first.into(),
            },
            ChatMessage {
                role: north_protocol::Role::Assistant,
                content: "ok".into(),
            },
        ],
        trace_tail: Vec::new(),
        messages: Vec::new(),
        model: None,
        usage: None,
    };
    std::fs::write(
        dir.join("checkpoint.json"),
        serde_json::to_string(&cp).unwrap(),
    )
    .unwrap();
}

#[test]
fn slash_sessions_and_the_resume_picker() {
    let mut ui = Ui::new(90, 20);
    let root = ui.dir.path().to_path_buf();
    write_session(&root, SESSION, 300.0, "current work");
    write_session(&root, "20251121-090000-0001", 200.0, "fix the parser");
    write_session(&root, "20251120-080000-0002", 100.0, "add a README");
    ui.command("/sessions");
    insta::assert_snapshot!("sessions", ui.screen());
    ui.command("/resume");
    ui.key(KeyCode::Down);
    insta::assert_snapshot!("resume_picker", ui.screen());
    assert_eq!(
        ui.key(KeyCode::Enter),
        vec![Action::Resume("20251120-080000-0002".into())]
    );
    assert_eq!(
        ui.command("/resume 20251121-090000-0001"),
        vec![Action::Resume("20251121-090000-0001".into())]
    );
    ui.app.handle_msg(UiMsg::Resumed {
        session_id: "20251121-090000-0001".into(),
        messages: vec![
            north_protocol::Message::user("fix the parser"),
            north_protocol::Message {
                role: north_protocol::Role::Assistant,
                content: vec![north_protocol::ContentBlock::text(
                    "Fixed: the parser now accepts `;`.",
                )],
            },
        ],
        tools: north_agent::Describer::builtin(),
        usage: Default::default(),
    });
    insta::assert_snapshot!("resumed", ui.screen());
}

fn mixed(ui: &mut Ui) {
    ui.app
        .start_turn("Rename `hello` to `bonjour` everywhere and run the tests please");
    ui.text(
        "I'll search first, then edit every match and run the test suite to confirm nothing broke.",
    );
    ui.event(Event::ToolIntent {
        call_id: "c1".into(),
        tool: "search_text".into(),
        line: "Searching: `hello` in `src/`".into(),
        kind: Default::default(),
    });
    ui.event(Event::ToolResult {
        call_id: "c1".into(),
        tool: "search_text".into(),
        ok: true,
        summary: "3 matches in 2 files".into(),
        details: None,
    });
    ui.prompt(
        "s1",
        PromptKind::Shell {
            command: "cargo test --workspace --all-features".into(),
            why: None,
            prefix: None,
        },
    );
}

#[test]
fn narrow_terminal() {
    let mut ui = Ui::new(40, 20);
    mixed(&mut ui);
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn wide_terminal() {
    let mut ui = Ui::new(120, 16);
    mixed(&mut ui);
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn enter_sends_while_newline_keys_and_paste_do_not() {
    let mut ui = Ui::new(60, 10);
    ui.typed("first line");
    assert!(ui.ctrl('j').is_empty());
    ui.typed("second");
    assert!(
        ui.app
            .handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT))
            .is_empty()
    );
    ui.typed("third");
    assert!(
        ui.app
            .handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT))
            .is_empty()
    );
    ui.app.handle_paste("pasted a\r\npasted b");
    assert_eq!(
        ui.app.composer_text(),
        "first line\nsecond\nthird\npasted a\npasted b"
    );
    insta::assert_snapshot!("composer_multiline", ui.screen());
    let sent = ui.key(KeyCode::Enter);
    assert_eq!(
        sent,
        vec![Action::Submit(
            "first line\nsecond\nthird\npasted a\npasted b".into()
        )]
    );
    // History: Up brings the last input back.
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    ui.key(KeyCode::Up);
    assert!(ui.app.composer_text().starts_with("first line"));
}

#[test]
fn backslash_then_enter_continues_the_line() {
    let mut ui = Ui::new(60, 10);
    ui.typed("line a\\");
    assert!(
        ui.key(KeyCode::Enter).is_empty(),
        "a trailing backslash does not send"
    );
    assert_eq!(ui.app.composer_text(), "line a\n");
    ui.typed("line b");
    let sent = ui.key(KeyCode::Enter);
    assert_eq!(sent, vec![Action::Submit("line a\nline b".into())]);
}

#[test]
fn input_while_busy_is_queued_and_sent_when_the_turn_ends() {
    let mut ui = Ui::new(60, 10);
    ui.app.start_turn("one");
    assert!(ui.command("two").is_empty());
    let next = ui
        .app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    assert_eq!(next, Some(Action::Submit("two".into())));
}

#[test]
fn ctrl_d_quits_on_an_empty_composer_only() {
    let mut ui = Ui::new(60, 10);
    ui.typed("x");
    assert!(ui.ctrl('d').is_empty());
    ui.key(KeyCode::Backspace);
    assert_eq!(ui.ctrl('d'), vec![Action::Quit]);
}

#[test]
fn slash_hooks_lists_where_each_hook_comes_from_and_a_block_is_a_notice() {
    let mut ui = Ui::new(110, 16);
    let hooks = north_agent::hooks::HookSet::parse(
        &serde_json::json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 30}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "make test"}]}]
        }),
        north_agent::hooks::HookOrigin::User("~/.config/north/config.json".into()),
        true,
    )
    .unwrap();
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        root: ui.dir.path().to_path_buf(),
        session_id: SESSION.into(),
        hooks,
        hooks_not_run: vec![
            "UserPromptSubmit runs `touch x` (timeout 60s) — from project .north/project.json"
                .into(),
        ],
        ..Default::default()
    });
    ui.command("/hooks");
    ui.event(north_protocol::Event::Hook {
        event: north_protocol::HookEvent::PreToolUse,
        command: "~/bin/guard.sh".into(),
        outcome: north_protocol::HookOutcome::Blocked,
        message: Some("no force pushes".into()),
    });
    ui.event(north_protocol::Event::Hook {
        event: north_protocol::HookEvent::PostToolUse,
        command: "cargo fmt".into(),
        outcome: north_protocol::HookOutcome::Ran,
        message: None,
    });
    let screen = ui.screen();
    assert!(
        !screen.contains("cargo fmt"),
        "a hook that ran quietly is not shown"
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn slash_agents_lists_agents_skills_and_what_is_not_used() {
    let mut ui = Ui::new(120, 14);
    let root = ui.dir.path().to_path_buf();
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        root,
        session_id: SESSION.into(),
        agents: north_agent::subagents::AgentSet::of(north_agent::subagents::builtin()).describe(),
        skills: vec!["release — How to cut a release (yours)".into()],
        agents_not_used: vec![".north/agents/: the project is not trusted".into()],
        ..Default::default()
    });
    ui.command("/agents");
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn slash_plugin_lists_what_each_plugin_adds_and_how_to_install_one() {
    let mut ui = Ui::new(120, 12);
    let root = ui.dir.path().to_path_buf();
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        root,
        session_id: SESSION.into(),
        plugins: vec![
            "feature-dev — on, commit 801e34eb048d: 1 command(s), 3 agent(s), 0 skill(s), 0 hook(s), 0 MCP server(s)".into(),
            "stamp@team — off here, commit 3f2a1b0c9d8e".into(),
        ],
        ..Default::default()
    });
    ui.command("/plugin");
    insta::assert_snapshot!(ui.screen());
}

#[test]
fn the_status_line_counts_background_commands() {
    let mut ui = Ui::new(140, 6);
    ui.app.handle_msg(north_tui::UiMsg::Background(2));
    let screen = ui.screen();
    assert!(screen.contains("2 in background (/ps)"), "{screen}");
    ui.app.handle_msg(north_tui::UiMsg::Background(0));
    assert!(!ui.screen().contains("in background"));
}

#[test]
fn the_model_list_marks_the_current_model() {
    let mut ui = Ui::new(100, 30);
    ui.app.handle_key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('p'),
        crossterm::event::KeyModifiers::ALT,
    ));
    let screen = ui.screen();
    let current: Vec<&str> = screen.lines().filter(|l| l.contains("· current")).collect();
    assert_eq!(current.len(), 1, "{screen}");
    assert!(current[0].contains("scripted"), "{screen}");
}

#[test]
fn slash_theme_switches_and_says_which_is_on() {
    let mut ui = Ui::new(90, 20);
    ui.command("/theme");
    let screen = ui.screen();
    assert!(screen.contains("Theme: dark"), "{screen}");
    ui.command("/theme light");
    assert!(ui.screen().contains("Theme: light"));
    ui.command("/theme sepia");
    assert!(ui.screen().contains("themes: dark, light, ansi"));
    ui.command("/theme dark");
}

#[test]
fn a_status_line_command_cannot_send_control_sequences_to_the_terminal() {
    let mut ui = Ui::new(100, 12);
    ui.app.handle_msg(UiMsg::StatusLine(Ok(
        "MINE\x1b]0;owned\x07 \x1b[2Jdone".into()
    )));
    let screen = ui.screen();
    assert!(screen.contains("MINE]0;owned [2Jdone"), "{screen}");
    assert!(!screen.contains('\x1b'), "{screen}");
}
