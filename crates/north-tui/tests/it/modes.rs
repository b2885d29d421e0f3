//! Permission modes in the TUI: Shift+Tab cycles through the modes the
//! front end can enter (shown in the status line), and the prompt for a
//! command the sandbox stopped; the status line while a turn runs
//! (type-ahead shows as a count beside the spinner).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::ui;

use crossterm::event::KeyCode;
use north_protocol::{ApprovalDecision, PermissionMode};
use north_tui::{Action, PromptKind, UiMsg};
use ui::Ui;

#[test]
fn shift_tab_cycles_modes_and_the_status_line_shows_them() {
    let mut ui = Ui::new(100, 8);
    let mut seen = Vec::new();
    for _ in 0..4 {
        let actions = ui.key(KeyCode::BackTab);
        let [Action::SetMode(mode)] = actions.as_slice() else {
            panic!("shift+tab asks for a mode: {actions:?}");
        };
        seen.push(*mode);
        // The worker confirms; the UI follows.
        ui.app.handle_msg(UiMsg::ModeSet(*mode));
        if *mode == PermissionMode::Auto {
            insta::assert_snapshot!("status_in_auto_mode", ui.screen());
        }
    }
    assert_eq!(
        seen,
        [
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::Auto,
            PermissionMode::Ask
        ]
    );
}

#[test]
fn a_command_the_sandbox_stopped_asks_before_running_outside_it() {
    let mut ui = Ui::new(100, 14);
    let mut rx = ui.prompt(
        "s1",
        PromptKind::Unsandboxed {
            command: "npm install -g typescript".into(),
            evidence: "mkdir: cannot create directory '/usr/lib/node_modules': Permission denied"
                .into(),
        },
    );
    insta::assert_snapshot!("unsandboxed_prompt", ui.screen());
    ui.key(KeyCode::Char('1'));
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::RunOnce);

    let mut rx = ui.prompt(
        "s2",
        PromptKind::Unsandboxed {
            command: "touch /etc/x".into(),
            evidence: "Permission denied".into(),
        },
    );
    ui.key(KeyCode::Esc);
    assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::Deny);
}

#[test]
fn a_plan_mode_turn_ends_with_the_plan_prompt() {
    let mut ui = Ui::new(100, 12);
    ui.app.handle_msg(UiMsg::ModeSet(PermissionMode::Plan));
    ui.app.start_turn("plan it");
    ui.text("1. Change a.txt\n2. Run the tests\n");
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    insta::assert_snapshot!("plan_ready_prompt", ui.screen());
    let actions = ui.key(KeyCode::Char('1'));
    assert_eq!(
        actions,
        [
            Action::SetMode(PermissionMode::Ask),
            Action::Submit("The plan is approved. Carry it out now.".into())
        ]
    );
    // "Keep planning" sends nothing.
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    assert!(ui.key(KeyCode::Esc).is_empty());
}

#[test]
fn type_ahead_shows_as_a_count_beside_the_spinner_and_goes_when_sent() {
    let mut ui = Ui::new(100, 12);
    ui.app.start_turn("first");
    ui.typed("second");
    ui.key(KeyCode::Enter);
    let screen = ui.screen();
    // The spinner and the interrupt key stay; the queue is a count.
    assert!(screen.contains("Working"), "{screen}");
    assert!(screen.contains("esc interrupts"), "{screen}");
    assert!(screen.contains("1 queued"), "{screen}");
    // The turn ends: the queued message is sent and nothing is stuck.
    ui.app
        .handle_msg(UiMsg::TurnDone(north_agent::TurnEnd::Done));
    let screen = ui.screen();
    assert!(screen.contains("Working"), "{screen}");
    assert!(!screen.contains("Queued"), "{screen}");
    assert!(!screen.contains("queued"), "{screen}");
}

#[test]
fn the_retry_countdown_counts_down() {
    let mut ui = Ui::new(100, 12);
    ui.app.start_turn("hello?");
    let start = std::time::Instant::now();
    ui.app.handle_msg(UiMsg::Retrying(north_llm::RetryNotice {
        retry: 1,
        max: 3,
        delay: std::time::Duration::from_secs(4),
        reason: "HTTP 529 overloaded".into(),
    }));
    let screen = ui.screen();
    assert!(screen.contains("retrying 1/3 in 4 s"), "{screen}");
    ui.app.tick(start + std::time::Duration::from_millis(2500));
    let screen = ui.screen();
    assert!(screen.contains("retrying 1/3 in 2 s"), "{screen}");
    ui.app.tick(start + std::time::Duration::from_secs(6));
    let screen = ui.screen();
    assert!(screen.contains("retrying 1/3 now"), "{screen}");
}

#[test]
fn the_ctrl_c_hint_lasts_as_long_as_a_second_press_would_quit() {
    let mut ui = Ui::new(100, 12);
    ui.ctrl('c');
    let screen = ui.screen();
    assert!(screen.contains("Press ctrl+c again to quit"), "{screen}");
    let expiry = ui
        .app
        .hint_expiry()
        .expect("the idle screen wakes to take it away");
    ui.app.tick(expiry - std::time::Duration::from_millis(100));
    assert!(ui.screen().contains("Press ctrl+c again"));
    ui.app.tick(expiry);
    let screen = ui.screen();
    assert!(!screen.contains("Press ctrl+c again"), "{screen}");
    assert_eq!(ui.app.hint_expiry(), None);
    // After it is gone, a Ctrl+C arms again rather than quitting.
    assert_eq!(ui.ctrl('c'), Vec::<Action>::new());
}
