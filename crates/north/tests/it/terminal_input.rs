//! What the terminal sends, as North reads it in a real terminal emulator
//! (tmux): key encodings other programs' users bring, and the terminal's
//! answers to North's questions told apart from the keys typed around them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_test_support::recorded::texts;

use crate::common::*;
use crate::emulator::*;

/// A session against scripted turns, started once `go` exists in the
/// project (so the test can set the terminal up first).
fn held(sb: &Sandbox, turns: serde_json::Value) -> (Term, std::path::PathBuf) {
    let script = sb.file("script.json", &serde_json::json!({ "turns": turns }));
    let requests = sb.dir.path().join("requests.jsonl");
    let term = Term::start(
        sb,
        120,
        40,
        &format!(
            "while [ ! -e go ]; do sleep 0.05; done; \"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            script.display(),
            requests.display()
        ),
        &[],
    );
    (term, requests)
}

fn go(sb: &Sandbox, term: &Term) {
    std::fs::write(sb.project().join("go"), "").unwrap();
    term.wait_for("Ask North to do something");
}

#[test]
fn shift_enter_as_xterm_and_tmux_send_it_inserts_a_newline() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, requests) = held(&sb, serde_json::json!([{"text": "ANSWER-ONE"}]));
    go(&sb, &term);
    term.type_text("line a");
    // modifyOtherKeys' Shift+Enter, then kitty's, then Alt+Enter.
    term.type_text("\x1b[27;2;13~line b\x1b[13;2uline c\x1b\rline d");
    let screen = term.wait_for("line d");
    assert!(
        !screen.contains("ANSWER-ONE"),
        "nothing was sent yet: {screen}"
    );
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-ONE");
    let sent = recorded(&requests);
    let last = texts(sent.last().unwrap());
    assert!(
        last.contains("line a\nline b\nline c\nline d"),
        "each Shift+Enter is a newline in the prompt: {last}"
    );
}

#[test]
fn a_light_terminal_background_chooses_the_light_theme() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, _) = held(&sb, serde_json::json!([{"text": "ANSWER-ONE"}]));
    // tmux answers the background question (OSC 11) with the pane's style.
    term.window_option("window-style", "bg=#f0f0f0");
    go(&sb, &term);
    term.type_text("/theme");
    term.keys(&["Enter"]);
    let screen = term.wait_for("Theme: ");
    assert!(screen.contains("Theme: light"), "{screen}");
}

#[test]
fn a_dark_terminal_background_chooses_the_dark_theme() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, _) = held(&sb, serde_json::json!([{"text": "ANSWER-ONE"}]));
    term.window_option("window-style", "bg=#101820");
    go(&sb, &term);
    term.type_text("/theme");
    term.keys(&["Enter"]);
    let screen = term.wait_for("Theme: ");
    assert!(screen.contains("Theme: dark"), "{screen}");
}

#[test]
fn arrows_step_over_a_letter_and_its_combining_accent_together() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let (term, requests) = held(&sb, serde_json::json!([{"text": "ANSWER-ONE"}]));
    go(&sb, &term);
    // "é" typed as "e" and a combining acute accent, as some keyboards send it.
    term.type_text("cafe\u{301}s");
    term.keys(&["Left", "Left"]);
    term.type_text("X");
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-ONE");
    let sent = recorded(&requests);
    let last = texts(sent.last().unwrap());
    assert!(
        last.contains("cafXe\u{301}s"),
        "the second step went over the whole letter: {last:?}"
    );
}
