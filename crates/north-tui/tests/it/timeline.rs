//! The timeline's truthfulness: a resumed session shows what happened (tool
//! calls and their results, not only text), and a refusal is one ✗ line.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_protocol::{
    ApprovalDecision, ApprovalKind, ContentBlock, Event, Message, Role, ToolCall, ToolOutcome,
};
use north_tui::{PromptKind, UiMsg};
use serde_json::json;

use crate::ui;
use ui::*;

#[test]
fn a_resumed_session_replays_tool_calls_and_results() {
    let mut ui = Ui::new(80, 20);
    let result = serde_json::to_string(&ToolOutcome::ok(json!({
        "exitCode": 0, "stdout": "test result: ok. 3 passed\n", "stderr": ""
    })))
    .unwrap();
    ui.app.handle_msg(UiMsg::Resumed {
        session_id: "20251121-090000-0001".into(),
        messages: vec![
            // What a SessionStart hook added is not the user's words.
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::text("run the tests"),
                    ContentBlock::text("<hook-context>\nbranch main\n</hook-context>"),
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Running them now."),
                    ContentBlock::ToolCall(ToolCall {
                        id: "c1".into(),
                        name: "shell_run".into(),
                        arguments: json!({"command": "cargo test"}),
                    }),
                ],
            },
            Message {
                role: Role::Tool,
                content: vec![ContentBlock::ToolResult {
                    call_id: "c1".into(),
                    content: result,
                    is_error: false,
                }],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("All **3** tests pass.")],
            },
        ],
        tools: north_agent::Describer::builtin(),
        usage: north_protocol::Usage {
            input_tokens: 1200,
            output_tokens: 34,
            ..Default::default()
        },
    });
    let screen = ui.screen();
    assert!(!screen.contains("hook-context"), "{screen}");
    assert!(!screen.contains("branch main"), "{screen}");
    insta::assert_snapshot!("resumed_with_tools", screen);
}

#[test]
fn a_resumed_session_shows_where_the_user_interrupted() {
    let mut ui = Ui::new(80, 16);
    ui.app.handle_msg(UiMsg::Resumed {
        session_id: "20251121-090000-0002".into(),
        messages: vec![
            Message::user("refactor the parser"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("Starting with the lexer.")],
            },
            // The note an interrupt leaves, and the next prompt after it.
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::text(north_agent::INTERRUPTED_NOTE),
                    ContentBlock::text("only the tokenizer, please"),
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("Done.")],
            },
        ],
        tools: north_agent::Describer::builtin(),
        usage: north_protocol::Usage::default(),
    });
    let screen = ui.screen();
    assert!(!screen.contains(north_agent::INTERRUPTED_NOTE), "{screen}");
    let lexer = screen.find("Starting with the lexer.").unwrap();
    let mark = screen
        .find("■ Interrupted")
        .expect("the interrupt is shown");
    let next = screen.find("only the tokenizer, please").unwrap();
    assert!(lexer < mark && mark < next, "{screen}");
    insta::assert_snapshot!("resumed_with_an_interrupt", screen);
}

#[test]
fn the_status_line_shows_the_hosts_this_turns_commands_reached_and_were_refused() {
    let mut ui = Ui::new(100, 12);
    ui.app.start_turn("install the deps");
    let output = json!({"stdout": "", "stderr": "", "exitCode": 0, "durationMs": 5,
    "timedOut": false, "truncated": false,
    "hosts": [
        {"host": "registry.npmjs.org", "port": 443, "allowed": true},
        {"host": "telemetry.example", "port": 443, "allowed": false}
    ]});
    ui.event(Event::ToolResult {
        call_id: "s1".into(),
        tool: "shell_run".into(),
        ok: true,
        summary: "exit code 0, 0 line(s) of output; reached registry.npmjs.org; refused telemetry.example".into(),
        details: Some(serde_json::to_value(ToolOutcome::ok(output)).unwrap()),
    });
    let screen = ui.screen();
    assert!(
        screen.contains("net ✓ registry.npmjs.org ✗ telemetry.example"),
        "{screen}"
    );
    // A new turn starts with none.
    ui.app.start_turn("next");
    assert!(!ui.screen().contains("net ✓"));
}

#[test]
fn a_denied_command_is_one_cross_line() {
    let mut ui = Ui::new(80, 14);
    ui.app.start_turn("clean up");
    ui.event(Event::ApprovalRequested {
        call_id: "s1".into(),
        kind: ApprovalKind::Shell,
        subject: "rm -rf build".into(),
    });
    let mut rx = ui.prompt(
        "s1",
        PromptKind::Shell {
            command: "rm -rf build".into(),
            why: None,
            prefix: None,
        },
    );
    // "Deny and stop": the turn is cancelled first, the refusal follows.
    let actions = ui.key(crossterm::event::KeyCode::Char('3'));
    assert_eq!(actions, vec![north_tui::Action::Interrupt]);
    assert!(rx.try_recv().is_err(), "the refusal waits for the cancel");
    ui.app.release_deferred();
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Deny);
    ui.event(Event::ApprovalDecided {
        call_id: "s1".into(),
        decision: ApprovalDecision::Deny,
    });
    ui.event(Event::ToolResult {
        call_id: "s1".into(),
        tool: "shell_run".into(),
        ok: false,
        summary: "failed: user denied the command".into(),
        details: None,
    });
    let screen = ui.screen();
    assert_eq!(screen.matches('✗').count(), 1, "{screen}");
    insta::assert_snapshot!("denied_once", screen);
}

fn pager_screen(pager: &mut north_tui::pager::Pager, w: u16, h: u16) -> String {
    let area = ratatui::layout::Rect::new(0, 0, w, h);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    pager.render(area, &mut buf);
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf.cell((x, y)).map_or(" ", |c| c.symbol()).to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_transcript_view_holds_every_tool_output_and_searches_it() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use north_tui::pager::{Pager, PagerOutcome};
    let mut ui = Ui::new(80, 12);
    ui.app.start_turn("list the numbers");
    ui.event(Event::ToolIntent {
        call_id: "c1".into(),
        tool: "shell_run".into(),
        line: "Command requested: `seq 1 40`".into(),
        kind: Default::default(),
    });
    let output: String = (1..=40).map(|i| format!("number-{i:02}\n")).collect();
    ui.event(Event::ToolResult {
        call_id: "c1".into(),
        tool: "shell_run".into(),
        ok: true,
        summary: "exit code 0, 40 line(s) of output".into(),
        details: Some(
            json!({"ok": true, "output": {"exitCode": 0, "stdout": output, "stderr": ""}}),
        ),
    });
    ui.text("All forty are there.\n\n");
    let lines = ui.app.transcript_lines(80);
    let mut pager = Pager::new(lines);
    // Opens at the end: the newest lines.
    insta::assert_snapshot!("transcript_view_end", pager_screen(&mut pager, 80, 12));
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    pager.key(key(KeyCode::Char('/')), 12);
    for c in "number-07".chars() {
        pager.key(key(KeyCode::Char(c)), 12);
    }
    pager.key(key(KeyCode::Enter), 12);
    let screen = pager_screen(&mut pager, 80, 12);
    assert!(screen.contains("number-07"), "{screen}");
    assert!(screen.contains("“number-07” · 1 of 1 · n next"), "{screen}");
    insta::assert_snapshot!("transcript_view_search", screen);
    pager.key(key(KeyCode::Char('g')), 12);
    assert!(pager_screen(&mut pager, 80, 12).contains("› list the numbers"));
    assert_eq!(pager.key(key(KeyCode::Char('q')), 12), PagerOutcome::Closed);
}

#[test]
fn the_status_line_shows_tokens_in_and_out_context_used_and_cost() {
    let mut ui = Ui::new(140, 6);
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        version: String::new(),
        mode: north_protocol::PermissionMode::Ask,
        modes: north_protocol::PermissionMode::ALL.to_vec(),
        root: ui.dir.path().to_path_buf(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        session_id: "s".into(),
        context_window: Some(200_000),
        catalog: north_llm::catalog::lookup("claude-sonnet-4-5"),
        mcp: Default::default(),
        commands: Vec::new(),
        files: Default::default(),
        trust: None,
        global_memory: None,
        ..Default::default()
    });
    let usage = north_protocol::Usage {
        input_tokens: 40_000,
        output_tokens: 1_500,
        cache_read_input_tokens: 10_000,
        ..Default::default()
    };
    ui.event(Event::Usage {
        usage,
        total: usage,
    });
    let screen = ui.screen();
    assert!(screen.contains("↑50.0k ↓1,500 tokens"), "{screen}");
    assert!(screen.contains("25% context"), "{screen}");
    assert!(
        screen.contains("$0."),
        "the cost of a priced model: {screen}"
    );
    insta::assert_snapshot!("status_line_usage", screen);
}

#[test]
fn a_running_commands_output_is_shown_live_and_gives_way_to_its_result() {
    use north_protocol::OutputStream;
    let mut ui = Ui::new(80, 14);
    ui.app.start_turn("build it");
    ui.event(Event::ToolIntent {
        call_id: "b".into(),
        tool: "shell_run".into(),
        line: "Command requested: `cargo build`".into(),
        kind: Default::default(),
    });
    for (stream, text) in [
        (
            OutputStream::Stderr,
            "   Compiling north-protocol v0.1.0\n   Compiling north-llm v0.1.0\n",
        ),
        (OutputStream::Stdout, "step 1 done\nstep 2 do"),
        (OutputStream::Stdout, "ne\n"),
        (OutputStream::Stderr, "warning: unused variable `x`\n"),
    ] {
        ui.event(Event::ToolOutput {
            call_id: "b".into(),
            stream,
            text: text.into(),
        });
    }
    insta::assert_snapshot!("live_command_output", ui.screen());
    ui.event(Event::ToolResult {
        call_id: "b".into(),
        tool: "shell_run".into(),
        ok: true,
        summary: "exit code 0, 2 line(s) of output".into(),
        details: None,
    });
    let screen = ui.screen();
    assert!(!screen.contains("step 2 done"), "{screen}");
    assert!(screen.contains("↳ exit code 0"), "{screen}");
}

#[test]
fn status_and_cost_commands_report_the_session() {
    let mut ui = Ui::new(100, 24);
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        version: String::new(),
        mode: north_protocol::PermissionMode::Ask,
        modes: north_protocol::PermissionMode::ALL.to_vec(),
        root: "/work/project".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        session_id: "20251122-101500-a1b2".into(),
        context_window: Some(200_000),
        catalog: north_llm::catalog::lookup("claude-sonnet-4-5"),
        mcp: Default::default(),
        commands: Vec::new(),
        files: Default::default(),
        trust: Some(
            "trusted: the project's own allow rules, settings and MCP servers apply".into(),
        ),
        global_memory: None,
        ..Default::default()
    });
    let usage = north_protocol::Usage {
        input_tokens: 12_000,
        output_tokens: 800,
        cache_read_input_tokens: 30_000,
        cache_creation_input_tokens: 2_000,
        ..Default::default()
    };
    ui.event(Event::Usage {
        usage,
        total: usage,
    });
    ui.command("/status");
    insta::assert_snapshot!("slash_status", ui.screen());
    let mut ui2 = Ui::new(100, 14);
    ui2.command("/cost");
    insta::assert_snapshot!("slash_cost_unknown_price", ui2.screen());
}

#[test]
fn mcp_command_shows_each_servers_state_tool_count_and_last_error() {
    use north_tui::{McpServerLine, McpView};
    let mut ui = Ui::new(110, 22);
    let view = McpView::new(std::sync::Arc::new(|| {
        vec![
            McpServerLine {
                name: "github".into(),
                scope: "user".into(),
                state: "ready".into(),
                counts: (26, 1, 2),
                last_error: None,
                resources: vec![("@github:repo://north/README.md".into(), "README".into())],
                prompts: vec![
                    ("/mcp__github__review".into(), "Review a pull request".into()),
                    ("/mcp__github__triage".into(), "Triage new issues".into()),
                ],
            },
            McpServerLine {
                name: "db".into(),
                scope: "project".into(),
                state: "failed".into(),
                counts: (0, 0, 0),
                last_error: Some(
                    "stopped during the request (last stderr: connection refused); North starts it again on the next use".into(),
                ),
                resources: Vec::new(),
                prompts: Vec::new(),
            },
        ]
    }));
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        version: String::new(),
        mode: north_protocol::PermissionMode::Ask,
        modes: north_protocol::PermissionMode::ALL.to_vec(),
        root: "/work/project".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        session_id: "s".into(),
        context_window: Some(200_000),
        catalog: north_llm::catalog::lookup("claude-sonnet-4-5"),
        mcp: view,
        commands: Vec::new(),
        files: Default::default(),
        trust: None,
        global_memory: None,
        ..Default::default()
    });
    ui.command("/mcp");
    let screen = ui.screen();
    assert!(screen.contains("1 of 2 servers ready"), "{screen}");
    assert!(screen.contains("26 tools"), "{screen}");
    assert!(screen.contains("connection refused"), "{screen}");
    insta::assert_snapshot!("slash_mcp", screen);

    let mut empty = Ui::new(110, 10);
    empty.command("/mcp");
    assert!(empty.screen().contains("no servers"), "{}", empty.screen());
}

#[test]
fn the_plan_is_a_checklist_that_updates_in_place() {
    let mut ui = Ui::new(80, 14);
    let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    ui.app.start_turn("refactor the parser");
    ui.event(Event::Plan {
        goals: list(&[
            "split the lexer out",
            "add error recovery",
            "update the tests",
        ]),
        open_loops: list(&["split the lexer out"]),
    });
    let first = ui.screen();
    assert!(first.contains("0 of 3 done"), "{first}");
    ui.event(Event::Plan {
        goals: list(&["add error recovery", "update the tests"]),
        open_loops: list(&["add error recovery"]),
    });
    let screen = ui.screen();
    assert!(screen.contains("1 of 3 done"), "{screen}");
    assert!(screen.contains("☑ split the lexer out"), "{screen}");
    assert!(screen.contains("◐ add error recovery"), "{screen}");
    assert_eq!(
        screen.matches("Plan ·").count(),
        1,
        "updated in place: {screen}"
    );
    insta::assert_snapshot!("plan_checklist", screen);
    ui.event(Event::Plan {
        goals: Vec::new(),
        open_loops: Vec::new(),
    });
    assert!(
        !ui.screen().contains("Plan ·"),
        "a finished plan leaves the screen"
    );
}

/// `/memory` shows the global memory the model also receives, after the
/// project's, naming where it lives.
#[test]
fn slash_memory_shows_the_global_memory_too() {
    let mut ui = Ui::new(110, 14);
    let global = ui.dir.path().join("global-memory.json");
    let file = north_agent::memory::MemoryFile::new(global.clone());
    file.append(north_agent::memory::MemoryEntry::new(
        "tabs or spaces",
        "The user wants four spaces everywhere.",
    ))
    .unwrap();
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        version: String::new(),
        root: ui.dir.path().to_path_buf(),
        provider: "scripted".into(),
        model: "scripted".into(),
        session_id: "s".into(),
        global_memory: Some(global.clone()),
        ..Default::default()
    });
    ui.command("/memory");
    let screen = ui.screen();
    assert!(screen.contains("Memory · no entries"), "{screen}");
    assert!(screen.contains("Global memory · 1 entries"), "{screen}");
    assert!(screen.contains("four spaces everywhere"), "{screen}");
}

#[test]
fn a_failed_command_is_red_with_its_output_and_a_passing_one_shows_its_last_lines() {
    let mut ui = Ui::new(90, 16);
    ui.app.start_turn("check the files");
    ui.event(Event::ToolIntent {
        call_id: "c1".into(),
        tool: "shell_run".into(),
        line: "Command requested: `ls nonexistent-file`".into(),
        kind: Default::default(),
    });
    ui.event(Event::ToolResult {
        call_id: "c1".into(),
        tool: "shell_run".into(),
        ok: true,
        summary: "exit code 2, 1 line(s) of output".into(),
        details: Some(json!({"ok": true, "output": {
            "exitCode": 2, "stdout": "",
            "stderr": "ls: cannot access 'nonexistent-file': No such file or directory\n"
        }})),
    });
    ui.event(Event::ToolIntent {
        call_id: "c2".into(),
        tool: "shell_run".into(),
        line: "Command requested: `ls src`".into(),
        kind: Default::default(),
    });
    ui.event(Event::ToolResult {
        call_id: "c2".into(),
        tool: "shell_run".into(),
        ok: true,
        summary: "exit code 0, 2 line(s) of output".into(),
        details: Some(json!({"ok": true, "output": {
            "exitCode": 0, "stdout": "a.rs\nb.rs\nc.rs\nlib.rs\nmain.rs\n", "stderr": ""
        }})),
    });
    let screen = ui.screen();
    assert!(screen.contains("✗ exit code 2"), "{screen}");
    assert!(screen.contains("┆ ls: cannot access"), "{screen}");
    // A passing command shows its last lines, as a terminal would; the
    // whole is in the transcript view.
    assert!(screen.contains("│ lib.rs"), "{screen}");
    assert!(screen.contains("│ main.rs"), "{screen}");
    assert!(!screen.contains("│ a.rs"), "only the last lines:\n{screen}");
    insta::assert_snapshot!("command_results_failed_and_passing", screen);
}

#[test]
fn a_rejection_shows_the_reason_typed_and_esc_at_a_prompt_ends_the_turn() {
    use crossterm::event::KeyCode;
    let mut ui = Ui::new(80, 18);
    ui.app.start_turn("tidy the greeting");
    ui.event(Event::ApprovalRequested {
        call_id: "e1".into(),
        kind: ApprovalKind::Edit,
        subject: "src/greet.rs".into(),
    });
    let mut rx = ui.prompt(
        "e1",
        PromptKind::Edit {
            files: two_file_edit(),
        },
    );
    ui.key(KeyCode::Char('f'));
    // While the reason is typed, the option it answers is the one marked.
    let screen = ui.screen();
    assert!(screen.contains("▶ f Reject, telling North why"), "{screen}");
    ui.typed("keep the English greeting");
    ui.key(KeyCode::Enter);
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Reject);
    ui.event(Event::ApprovalDecided {
        call_id: "e1".into(),
        decision: ApprovalDecision::Reject,
    });
    let screen = ui.screen();
    assert!(
        screen.contains("why: keep the English greeting"),
        "{screen}"
    );
    insta::assert_snapshot!("rejection_with_reason", screen);

    // Esc at the next prompt refuses it and stops the turn.
    ui.event(Event::ApprovalRequested {
        call_id: "e2".into(),
        kind: ApprovalKind::Edit,
        subject: "src/greet.rs".into(),
    });
    let mut rx = ui.prompt(
        "e2",
        PromptKind::Edit {
            files: two_file_edit(),
        },
    );
    let actions = ui.key(KeyCode::Esc);
    assert_eq!(actions, vec![north_tui::Action::Interrupt]);
    ui.app.release_deferred();
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Reject);
}

#[test]
fn the_start_header_names_version_model_project_trust_mode_and_keys() {
    let mut ui = Ui::new(100, 14);
    ui.app = north_tui::App::new(north_tui::SessionInfo {
        version: "0.1.0".into(),
        mode: north_protocol::PermissionMode::Ask,
        modes: north_protocol::PermissionMode::ALL.to_vec(),
        root: "/work/demo".into(),
        provider: "openai".into(),
        model: "qwen2.5-coder".into(),
        session_id: "20251122-101500-a1b2".into(),
        context_window: Some(32_000),
        trust: Some("nothing to trust (the project asks for no extra access)".into()),
        ..Default::default()
    });
    ui.app.start_header();
    let screen = ui.screen();
    for part in [
        "North 0.1.0 · openai · qwen2.5-coder",
        "/work/demo",
        "nothing to trust",
        "shift+tab",
        "/help",
    ] {
        assert!(screen.contains(part), "{part}:\n{screen}");
    }
    insta::assert_snapshot!("start_header", screen);
}

#[test]
fn the_transcript_view_follows_the_session_and_counts_matches() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use north_tui::pager::Pager;
    let mut ui = Ui::new(60, 8);
    ui.app.start_turn("first");
    ui.text("answer one\n\n");
    let mut pager = Pager::new(ui.app.transcript_lines(60));
    let _ = pager_screen(&mut pager, 60, 8);
    // More arrives while the view is open at its end: the view follows.
    ui.app.start_turn("second");
    ui.text("answer two, long enough to wrap: ".repeat(4).as_str());
    ui.text("\n\n");
    pager.update(ui.app.transcript_lines(60), 8);
    let screen = pager_screen(&mut pager, 60, 8);
    assert!(screen.contains("› second"), "{screen}");
    // Long lines wrap instead of being cut.
    assert!(screen.matches("answer two").count() >= 2, "{screen}");
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    pager.key(key(KeyCode::Char('/')), 8);
    for c in "answer".chars() {
        pager.key(key(KeyCode::Char(c)), 8);
    }
    pager.key(key(KeyCode::Enter), 8);
    let screen = pager_screen(&mut pager, 60, 8);
    assert!(screen.contains("“answer” · 1 of "), "{screen}");
}

#[test]
fn an_interrupted_turn_keeps_the_tokens_it_streamed() {
    let mut ui = crate::ui::Ui::new(100, 12);
    ui.app.start_turn("write a lot");
    ui.text("a long answer that was cut off by the user halfway through");
    ui.app
        .handle_msg(north_tui::UiMsg::Event(north_protocol::Event::Error {
            kind: north_protocol::ErrorKind::Interrupted,
            message: "interrupted".into(),
        }));
    ui.app.handle_msg(north_tui::UiMsg::TurnDone(
        north_agent::TurnEnd::Interrupted,
    ));
    let screen = ui.screen();
    assert!(!screen.contains(" 0 tokens"), "{screen}");
    assert!(screen.contains("tokens"), "{screen}");
}
