//! Approval choices beyond yes and no: "always allow" a command's prefix,
//! and refusing with words that go to the model.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::ui;

use crossterm::event::KeyCode;
use north_protocol::ApprovalDecision;
use north_tui::{Prompt, PromptKind, UiMsg};
use ui::Ui;

#[test]
fn a_command_prompt_offers_its_prefix() {
    let mut ui = Ui::new(110, 12);
    let mut rx = ui.prompt(
        "s1",
        PromptKind::Shell {
            command: "cargo test -p north-tui".into(),
            why: None,
            prefix: Some("cargo test".into()),
        },
    );
    let screen = ui.screen();
    assert!(screen.contains("4 Always allow `cargo test …`"), "{screen}");
    insta::assert_snapshot!("shell_prompt_with_prefix", screen);
    ui.key(KeyCode::Char('4'));
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::AlwaysPrefix);
}

#[test]
fn reject_with_feedback_sends_the_users_words_with_the_refusal() {
    let mut ui = Ui::new(100, 14);
    let (reply, mut rx) = tokio::sync::oneshot::channel();
    let slot = north_tui::FeedbackSlot::default();
    ui.app.handle_msg(UiMsg::Prompt(Prompt {
        call_id: "e1".into(),
        kind: PromptKind::Edit {
            files: ui::two_file_edit(),
        },
        reply,
        feedback: slot.clone(),
        review: Default::default(),
    }));
    ui.key(KeyCode::Char('f'));
    let screen = ui.screen();
    assert!(screen.contains("why? North gets your words"), "{screen}");
    // Esc goes back to the choices; nothing is decided.
    ui.key(KeyCode::Esc);
    assert!(rx.try_recv().is_err());
    ui.key(KeyCode::Char('f'));
    ui.typed("use the logger, not println");
    insta::assert_snapshot!("reject_with_feedback", ui.screen());
    ui.key(KeyCode::Enter);
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Reject);
    assert_eq!(
        slot.lock().unwrap().as_deref(),
        Some("use the logger, not println")
    );
    assert_eq!(ui.app_text(), "", "the words do not stay in the composer");
}

#[test]
fn an_mcp_tool_can_be_allowed_for_good() {
    let mut ui = Ui::new(110, 12);
    let mut rx = ui.prompt(
        "c1",
        PromptKind::Capability {
            capability: "tool:mcp__github__create_issue".into(),
            reason: "mcp__github__create_issue {\"title\":\"bug\"}".into(),
        },
    );
    let screen = ui.screen();
    assert!(screen.contains("a Always allow this tool"), "{screen}");
    insta::assert_snapshot!("mcp_tool_prompt", screen);
    ui.key(KeyCode::Char('a'));
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Always);
}

#[test]
fn deny_at_a_network_prompt_refuses_and_ends_the_turn_like_every_other_deny() {
    let mut ui = Ui::new(110, 12);
    ui.app.start_turn("fetch the docs");
    let mut rx = ui.prompt(
        "n1",
        PromptKind::Capability {
            capability: "net:docs.rs".into(),
            reason: "web_fetch https://docs.rs/serde".into(),
        },
    );
    // Deny refuses and ends the turn (the runner cancels, then replies).
    assert_eq!(
        ui.key(KeyCode::Char('n')),
        vec![north_tui::Action::Interrupt]
    );
    ui.app.release_deferred();
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Deny);
}
