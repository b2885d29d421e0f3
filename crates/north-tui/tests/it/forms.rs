//! A server's form (MCP elicitation) in the TUI: fields with their
//! defaults, edited in place; submitted, refused until what is required is
//! there, declined or cancelled — the answer goes back to the server.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::ui;

use crossterm::event::KeyCode;
use north_protocol::{ElicitAnswer, ElicitForm};
use north_tui::UiMsg;
use serde_json::json;
use ui::Ui;

fn form() -> ElicitForm {
    ElicitForm::from_schema(
        "tickets",
        "Which project should the ticket go to?",
        &json!({"type": "object", "properties": {
            "project": {"type": "string", "title": "Project", "description": "The project key"},
            "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"},
            "estimate": {"type": "integer", "title": "Estimate (hours)", "default": 2},
            "notify": {"type": "boolean", "default": true}
        }, "required": ["project"]}),
    )
}

fn show(ui: &mut Ui) -> tokio::sync::oneshot::Receiver<ElicitAnswer> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    ui.app.handle_msg(UiMsg::Form(form(), tx));
    rx
}

#[test]
fn a_form_shows_its_fields_with_defaults_and_sends_the_edited_values() {
    let mut ui = Ui::new(110, 14);
    let mut rx = show(&mut ui);
    let screen = ui.screen();
    insta::assert_snapshot!("elicitation_form", screen);
    assert!(
        screen.contains("MCP server tickets asks for input"),
        "{screen}"
    );
    assert!(screen.contains("[normal]"), "{screen}");
    // Enter with a required field empty: refused, said why, still open.
    ui.key(KeyCode::Enter);
    assert!(ui.screen().contains("project is required"));
    assert!(rx.try_recv().is_err());
    // Fill it in, pick the next priority, change the estimate.
    ui.typed("NORTH");
    ui.key(KeyCode::Down);
    ui.key(KeyCode::Right);
    ui.key(KeyCode::Down);
    ui.key(KeyCode::Backspace);
    ui.typed("5");
    ui.key(KeyCode::Enter);
    let answer = rx.try_recv().unwrap();
    let ElicitAnswer::Accept(content) = answer else {
        panic!("{answer:?}");
    };
    assert_eq!(content["project"], "NORTH");
    assert_eq!(content["priority"], "high");
    assert_eq!(content["estimate"], 5);
    assert_eq!(content["notify"], true);
    let screen = ui.screen();
    assert!(!screen.contains("asks for input"), "the form closed");
    assert!(
        screen.contains("MCP server tickets: form submitted"),
        "{screen}"
    );
}

#[test]
fn a_form_can_be_declined_or_cancelled() {
    let mut ui = Ui::new(110, 14);
    let mut rx = show(&mut ui);
    ui.ctrl('d');
    assert_eq!(rx.try_recv().unwrap(), ElicitAnswer::Decline);
    let mut rx = show(&mut ui);
    ui.key(KeyCode::Esc);
    assert_eq!(rx.try_recv().unwrap(), ElicitAnswer::Cancel);
    // A number that is not one is refused, not sent.
    let mut rx = show(&mut ui);
    ui.typed("P");
    ui.key(KeyCode::Down);
    ui.key(KeyCode::Down);
    ui.typed("x");
    ui.key(KeyCode::Enter);
    assert!(ui.screen().contains("estimate: a whole number"));
    assert!(rx.try_recv().is_err());
}

#[test]
fn slash_mcp_login_asks_the_binary_to_log_in_to_the_server_named() {
    let mut ui = Ui::new(100, 12);
    ui.command("/mcp login docs");
    assert!(ui.screen().contains("no MCP servers are configured"));
    let info = north_tui::SessionInfo {
        mcp_auth: north_tui::McpAuth::new(std::sync::Arc::new(
            |_name: String, _logout: bool, _say: std::sync::Arc<dyn Fn(String) + Send + Sync>| {
                Box::pin(async { Ok(String::new()) })
                    as futures::future::BoxFuture<'static, Result<String, String>>
            },
        )),
        ..Default::default()
    };
    ui.app = north_tui::App::new(info);
    assert_eq!(
        ui.command("/mcp login docs"),
        [north_tui::Action::McpAuth("docs".into(), false)]
    );
    assert_eq!(
        ui.command("/mcp logout docs"),
        [north_tui::Action::McpAuth("docs".into(), true)]
    );
    assert!(ui.command("/mcp login").is_empty());
    assert!(ui.screen().contains("which server?"));
}
