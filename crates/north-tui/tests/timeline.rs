//! The timeline's truthfulness: a resumed session shows what happened (tool
//! calls and their results, not only text), and a refusal is one ✗ line.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_protocol::{
    ApprovalDecision, ApprovalKind, ContentBlock, Event, Message, Role, ToolCall, ToolOutcome,
};
use north_tui::{PromptKind, UiMsg};
use serde_json::json;

mod ui;
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
            Message::user("run the tests"),
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
        usage: north_protocol::Usage {
            input_tokens: 1200,
            output_tokens: 34,
            ..Default::default()
        },
    });
    insta::assert_snapshot!("resumed_with_tools", ui.screen());
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
        },
    );
    ui.key(crossterm::event::KeyCode::Char('3'));
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
