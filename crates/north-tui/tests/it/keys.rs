//! The composer's keys as terminal users know them: Ctrl+C clears a draft
//! (kept in history), then interrupts, then quits on a second press; Esc
//! interrupts; readline editing keys; undo.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use north_tui::{Action, App, SessionInfo};

fn app() -> App {
    App::new(SessionInfo {
        version: String::new(),
        mode: north_protocol::PermissionMode::Ask,
        modes: north_protocol::PermissionMode::ALL.to_vec(),
        root: std::env::temp_dir(),
        provider: "scripted".into(),
        model: "scripted".into(),
        session_id: "s".into(),
        ..Default::default()
    })
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Action> {
    app.handle_key(KeyEvent::new(code, mods))
}

fn ctrl(app: &mut App, c: char) -> Vec<Action> {
    press(app, KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

#[test]
fn ctrl_c_after_a_paste_clears_the_draft_without_quitting_and_up_brings_it_back() {
    let mut app = app();
    app.handle_paste("a long pasted draft\nwith two lines");
    assert_eq!(ctrl(&mut app, 'c'), Vec::<Action>::new());
    assert_eq!(app.composer_text(), "");
    assert_eq!(
        ctrl(&mut app, 'c'),
        Vec::<Action>::new(),
        "the first press on an empty composer only asks"
    );
    press(&mut app, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "a long pasted draft\nwith two lines");
}

#[test]
fn ctrl_c_on_an_empty_composer_quits_on_the_second_press() {
    let mut app = app();
    assert_eq!(ctrl(&mut app, 'c'), Vec::<Action>::new());
    assert_eq!(ctrl(&mut app, 'c'), vec![Action::Quit]);
}

#[test]
fn during_a_turn_ctrl_c_clears_the_draft_first_then_interrupts() {
    let mut app = app();
    app.start_turn("work");
    typed(&mut app, "next question");
    assert_eq!(
        ctrl(&mut app, 'c'),
        Vec::<Action>::new(),
        "the draft goes first"
    );
    assert_eq!(ctrl(&mut app, 'c'), vec![Action::Interrupt]);
    assert_eq!(
        ctrl(&mut app, 'c'),
        vec![Action::Quit],
        "after an interrupt a press quits"
    );
}

#[test]
fn esc_interrupts_a_running_turn_and_does_nothing_when_idle() {
    let mut app = app();
    assert_eq!(
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE),
        Vec::<Action>::new()
    );
    app.start_turn("work");
    typed(&mut app, "kept");
    assert_eq!(
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE),
        vec![Action::Interrupt]
    );
    assert_eq!(app.composer_text(), "kept", "esc never touches the draft");
    assert_eq!(
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE),
        Vec::<Action>::new()
    );
}

#[test]
fn readline_keys_edit_the_composer_and_undo_restores() {
    let mut app = app();
    typed(&mut app, "hello brave world");
    ctrl(&mut app, 'w');
    assert_eq!(app.composer_text(), "hello brave ");
    ctrl(&mut app, 'a');
    ctrl(&mut app, 'k');
    assert_eq!(app.composer_text(), "");
    ctrl(&mut app, '_');
    assert_eq!(app.composer_text(), "hello brave ");
    // Ctrl+Z is the terminal's suspend, not undo; Ctrl+G opens the editor.
    assert_eq!(ctrl(&mut app, 'z'), vec![Action::Suspend]);
    assert_eq!(ctrl(&mut app, 'g'), vec![Action::EditDraft]);
    assert_eq!(app.composer_text(), "hello brave ");
    typed(&mut app, "new");
    press(&mut app, KeyCode::Char('b'), KeyModifiers::ALT);
    typed(&mut app, "X");
    assert_eq!(app.composer_text(), "hello brave Xnew");
    ctrl(&mut app, 'e');
    ctrl(&mut app, 'u');
    assert_eq!(
        app.composer_text(),
        "",
        "ctrl+u deletes to the start of the line, not undo"
    );
    ctrl(&mut app, '_');
    assert_eq!(app.composer_text(), "hello brave Xnew");
}

#[test]
fn a_long_paste_shows_as_a_summary_and_is_sent_whole() {
    let mut app = app();
    typed(&mut app, "explain ");
    let paste: String = (1..=200).map(|i| format!("log line {i}\n")).collect();
    app.handle_paste(&paste);
    assert_eq!(app.composer_text(), "explain [Pasted text #1 +200 lines]");
    let actions = press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(actions, vec![Action::Submit(format!("explain {paste}"))]);
    // The timeline keeps the summary, not 200 lines.
    assert!(matches!(
        app.items().last(),
        Some(north_tui::Item::User(t)) if t == "explain [Pasted text #1 +200 lines]"
    ));
    // A short paste goes in as it is.
    app.handle_paste("two\nlines");
    assert_eq!(app.composer_text(), "two\nlines");
}

#[test]
fn a_second_ctrl_c_long_after_the_first_does_not_quit() {
    let mut app = app();
    assert_eq!(ctrl(&mut app, 'c'), Vec::<Action>::new());
    // The run loop ticks the app; a tick past the window disarms it.
    app.tick(std::time::Instant::now() + std::time::Duration::from_millis(2100));
    assert_eq!(
        ctrl(&mut app, 'c'),
        Vec::<Action>::new(),
        "a lone press after the window only asks again"
    );
    assert_eq!(ctrl(&mut app, 'c'), vec![Action::Quit]);
}

#[test]
fn esc_esc_on_an_empty_composer_opens_the_rewind_picker_and_enter_puts_the_prompt_back() {
    let mut app = app();
    assert_eq!(
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE),
        Vec::<Action>::new()
    );
    assert_eq!(
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE),
        vec![Action::ListTurns]
    );
    app.handle_msg(north_tui::UiMsg::Turns(vec![
        (1, "make a file".into(), String::new()),
        (2, "write notes".into(), "code undone".into()),
    ]));
    // Newest first; ↓ goes to the older turn.
    press(&mut app, KeyCode::Down, KeyModifiers::NONE);
    let actions = press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        matches!(actions.as_slice(), [Action::Rewind(r)] if r.turn == Some(1)),
        "{actions:?}"
    );
    assert_eq!(app.composer_text(), "make a file");
}

#[test]
fn rewinding_to_a_multi_line_prompt_gives_all_of_it_back() {
    let mut app = app();
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    app.handle_msg(north_tui::UiMsg::Turns(vec![(
        1,
        "fix the parser\nit fails on tabs\nand on CRLF".into(),
        String::new(),
    )]));
    let actions = press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        matches!(actions.as_slice(), [Action::Rewind(_)]),
        "{actions:?}"
    );
    assert_eq!(
        app.composer_text(),
        "fix the parser\nit fails on tabs\nand on CRLF"
    );
}

#[test]
fn a_pasted_image_path_becomes_an_attachment_placeholder() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("Screen Shot.png");
    std::fs::write(&shot, b"\x89PNG").unwrap();
    let mut ui = app();
    ui.handle_paste(&format!("'{}'", shot.display()));
    ui.handle_paste(" what is wrong here?");
    assert_eq!(ui.composer_text(), "[Image #1] what is wrong here?");
    assert_eq!(ui.take_images(), vec![shot.clone()]);
    // A path that is not an image, or not there, is pasted as text.
    let mut ui = app();
    ui.handle_paste("/nonexistent/shot.png");
    assert_eq!(ui.composer_text(), "/nonexistent/shot.png");
    assert!(ui.take_images().is_empty());
}

#[test]
fn esc_esc_clears_a_draft_and_up_brings_it_back() {
    let mut app = app();
    for c in "half a thought".chars() {
        press(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    // One Esc only warns; the second clears.
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "half a thought");
    let actions = press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(actions.is_empty(), "{actions:?}");
    assert_eq!(app.composer_text(), "");
    press(&mut app, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "half a thought");
}

#[test]
fn ctrl_s_stashes_the_draft_and_brings_it_back_on_an_empty_composer() {
    let mut app = app();
    typed(&mut app, "a long careful draft");
    assert_eq!(ctrl(&mut app, 's'), Vec::<Action>::new());
    assert_eq!(app.composer_text(), "");
    // Something else goes first.
    typed(&mut app, "quick question");
    assert_eq!(
        press(&mut app, KeyCode::Enter, KeyModifiers::NONE),
        vec![Action::Submit("quick question".into())]
    );
    ctrl(&mut app, 's');
    assert_eq!(app.composer_text(), "a long careful draft");
    // A second stash over a stashed draft keeps the older one in history.
    ctrl(&mut app, 's');
    typed(&mut app, "second draft");
    ctrl(&mut app, 's');
    ctrl(&mut app, 's');
    assert_eq!(app.composer_text(), "second draft");
}

#[test]
fn alt_p_opens_the_model_list_and_keeps_the_draft_one_up_away() {
    let mut app = app();
    typed(&mut app, "half a thought");
    press(&mut app, KeyCode::Char('p'), KeyModifiers::ALT);
    assert_eq!(app.composer_text(), "/model ");
    // Esc closes the list; the draft is in history.
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    ctrl(&mut app, 'u');
    press(&mut app, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "half a thought");
}

#[test]
fn ctrl_r_searches_history_newest_first_and_esc_puts_the_draft_back() {
    let mut app = app();
    for sent in ["build the parser", "run the tests", "build the docs"] {
        typed(&mut app, sent);
        press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    }
    typed(&mut app, "my draft");
    ctrl(&mut app, 'r');
    typed(&mut app, "BUILD");
    assert_eq!(app.composer_text(), "build the docs", "the newest match");
    ctrl(&mut app, 'r');
    assert_eq!(app.composer_text(), "build the parser", "an older one");
    ctrl(&mut app, 'r');
    assert_eq!(app.composer_text(), "build the parser", "nothing older");
    // Esc: the draft comes back.
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "my draft");
    // Enter keeps the match to edit; it is not sent.
    ctrl(&mut app, 'r');
    typed(&mut app, "tests");
    assert_eq!(
        press(&mut app, KeyCode::Enter, KeyModifiers::NONE),
        Vec::<Action>::new()
    );
    assert_eq!(app.composer_text(), "run the tests");
    typed(&mut app, " again");
    // Sent (queued behind the turn the first message started).
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "");
    press(&mut app, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "run the tests again");
    ctrl(&mut app, 'u');
    // No match leaves the composer as it was and says so.
    ctrl(&mut app, 'r');
    typed(&mut app, "zzz");
    assert_eq!(app.composer_text(), "");
    assert_eq!(
        ctrl(&mut app, 'c'),
        Vec::<Action>::new(),
        "ctrl+c ends the search only"
    );
}

#[test]
fn keys_the_user_rebinds_win_and_none_takes_a_default_away() {
    let mut app = app();
    let bindings: north_config::keys::KeyBindings = serde_json::from_str(
        r#"{"alt+e": "edit-draft", "ctrl+s": "none", "f2": "history-search", "ctrl+o": "newline"}"#,
    )
    .unwrap();
    app.set_keybindings(bindings);
    typed(&mut app, "draft");
    assert_eq!(
        press(&mut app, KeyCode::Char('e'), KeyModifiers::ALT),
        vec![Action::EditDraft]
    );
    // Ctrl+S no longer stashes.
    ctrl(&mut app, 's');
    assert_eq!(app.composer_text(), "draft");
    // Ctrl+O (the transcript by default) now inserts a newline.
    assert_eq!(ctrl(&mut app, 'o'), Vec::<Action>::new());
    typed(&mut app, "more");
    assert_eq!(app.composer_text(), "draft\nmore");
    // Defaults the user left alone still work.
    assert_eq!(ctrl(&mut app, 'g'), vec![Action::EditDraft]);
    press(&mut app, KeyCode::F(2), KeyModifiers::NONE);
    typed(&mut app, "zz");
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(app.composer_text(), "draft\nmore", "F2 opened the search");
}
