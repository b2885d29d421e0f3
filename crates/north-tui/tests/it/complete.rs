//! The command palette and the `@` file picker: what they show, how they
//! filter, and what Tab, Enter and Esc do.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::ui;

use std::sync::Arc;

use crossterm::event::KeyCode;
use north_agent::commands::{CommandScope, CustomCommand};
use north_tui::{Action, FileFinder};
use ui::Ui;

fn custom(name: &str, description: &str, template: &str) -> CustomCommand {
    CustomCommand {
        name: name.into(),
        description: description.into(),
        template: template.into(),
        scope: CommandScope::Project,
        path: format!(".north/commands{name}.md").into(),
    }
}

fn ui_with_commands() -> Ui {
    let mut ui = Ui::new(100, 20);
    let mut info = ui.app.info().clone();
    info.commands = vec![custom(
        "/review",
        "Review a file for bugs",
        "Review $ARGUMENTS for bugs and say why.",
    )];
    ui.app = north_tui::App::new(info);
    ui
}

#[test]
fn typing_a_slash_opens_the_palette_and_typing_filters_it() {
    let mut ui = ui_with_commands();
    ui.typed("/");
    let screen = ui.screen();
    assert!(
        screen.contains("/help") && screen.contains("keys and commands"),
        "{screen}"
    );
    insta::assert_snapshot!("palette_open", screen);
    ui.typed("re");
    let screen = ui.screen();
    assert!(
        screen.contains("/resume") && screen.contains("/review"),
        "{screen}"
    );
    assert!(!screen.contains("keys and commands"), "{screen}");
    insta::assert_snapshot!("palette_filtered", screen);
}

#[test]
fn tab_completes_and_a_custom_command_sends_its_template_with_the_arguments() {
    let mut ui = ui_with_commands();
    ui.typed("/revi");
    ui.key(KeyCode::Tab);
    assert_eq!(ui.app_text(), "/review ");
    ui.typed("src/lib.rs");
    let actions = ui.key(KeyCode::Enter);
    assert_eq!(
        actions,
        vec![Action::Submit(
            "Review src/lib.rs for bugs and say why.".into()
        )]
    );
    assert!(ui.screen().contains("› /review src/lib.rs"));
}

#[test]
fn enter_runs_the_highlighted_command_and_esc_closes_the_palette() {
    let mut ui = ui_with_commands();
    ui.typed("/sta");
    ui.screen();
    let actions = ui.key(KeyCode::Enter);
    assert!(actions.is_empty());
    assert!(ui.screen().contains("Status"), "{}", ui.screen());

    ui.typed("/co");
    ui.key(KeyCode::Down);
    let screen = ui.screen();
    assert!(
        screen.contains("▶ /cost") || screen.contains("▶ /compact"),
        "{screen}"
    );
    ui.key(KeyCode::Esc);
    assert!(!ui.screen().contains("esc close"), "closed");
    assert_eq!(ui.app_text(), "/co", "the text stays");
}

#[test]
fn model_arguments_complete_from_the_catalogue() {
    let mut ui = ui_with_commands();
    ui.typed("/model haiku");
    let screen = ui.screen();
    assert!(screen.contains("claude-haiku-4-5"), "{screen}");
    ui.key(KeyCode::Tab);
    assert_eq!(ui.app_text(), "/model claude-haiku-4-5");
    assert_eq!(
        ui.key(KeyCode::Enter),
        vec![Action::SwitchModel("claude-haiku-4-5".into())]
    );
}

#[test]
fn model_arguments_complete_from_the_providers_models_and_the_presets_catalogue() {
    let mut ui = Ui::new(100, 16);
    let mut info = ui.app.info().clone();
    info.provider = "gateway".into();
    info.provider_models =
        north_tui::ModelLister::new(Arc::new(|| vec!["team/coder-large".to_string()]));
    ui.app = north_tui::App::new(info);
    ui.typed("/model coder-l");
    let screen = ui.screen();
    assert!(
        screen.contains("team/coder-large") && screen.contains("gateway · served"),
        "{screen}"
    );
    let mut ui = Ui::new(100, 16);
    ui.typed("/model gemini-2.5-fl");
    let screen = ui.screen();
    assert!(
        screen.contains("gemini-2.5-flash") && screen.contains("gemini · 1048k context"),
        "{screen}"
    );
}

#[test]
fn at_opens_the_file_picker_and_the_choice_goes_into_the_message() {
    let mut ui = Ui::new(100, 16);
    let mut info = ui.app.info().clone();
    let files = [
        "src/main.rs",
        "src/lib.rs",
        "crates/north/src/main.rs",
        "README.md",
    ];
    info.files = FileFinder::new(Arc::new(move |q: &str, n: usize| {
        files
            .iter()
            .filter(|f| q.chars().all(|c| f.contains(c)))
            .take(n)
            .map(|f| f.to_string())
            .collect()
    }));
    ui.app = north_tui::App::new(info);
    ui.typed("explain @main");
    let screen = ui.screen();
    assert!(
        screen.contains("src/main.rs") && !screen.contains("README.md"),
        "{screen}"
    );
    insta::assert_snapshot!("mention_picker", screen);
    ui.key(KeyCode::Down);
    let actions = ui.key(KeyCode::Enter);
    assert!(actions.is_empty(), "choosing a file does not send");
    assert_eq!(ui.app_text(), "explain @crates/north/src/main.rs ");
    ui.typed("please");
    assert_eq!(
        ui.key(KeyCode::Enter),
        vec![Action::Submit(
            "explain @crates/north/src/main.rs please".into()
        )]
    );
}

#[test]
fn rename_names_the_session_and_resume_takes_a_name_with_spaces() {
    let mut ui = Ui::new(100, 16);
    ui.typed("/rename parser fix");
    assert_eq!(
        ui.key(KeyCode::Enter),
        vec![Action::Rename("parser fix".into())]
    );
    ui.typed("/resume parser fix");
    assert_eq!(
        ui.key(KeyCode::Enter),
        vec![Action::Resume("parser fix".into())]
    );
}

#[test]
fn a_question_mark_on_an_empty_composer_shows_the_keys() {
    let mut ui = Ui::new(100, 40);
    let actions = ui.key(KeyCode::Char('?'));
    assert!(actions.is_empty(), "{actions:?}");
    assert_eq!(ui.app_text(), "", "the ? is not typed");
    let screen = ui.screen();
    assert!(screen.contains("Keys"), "{screen}");
    assert!(screen.contains("esc esc"), "{screen}");
    assert!(screen.contains("before enter"), "{screen}");
    // In a sentence it is just a question mark.
    ui.typed("why?");
    assert_eq!(ui.app_text(), "why?");
}
