//! Web addresses in what North prints: never broken with newlines, so a
//! long one is one line in scrollback that selection gives back whole, and
//! each an OSC 8 link a terminal can open.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde_json::json;

use crate::common::Sandbox;
use crate::emulator::{Term, available};
use crate::tty::{Tty, one_tty};

/// A 420-character address, as a build log or a signed download gives.
fn long_url() -> String {
    let mut url = "https://downloads.example.test/artifacts/build-7781/".to_string();
    let mut i = 0;
    while url.len() < 400 {
        url.push_str(&format!("segment-{i:03}/"));
        i += 1;
    }
    url.push_str("file.tar.gz?sig=abc");
    url
}

fn script(sb: &Sandbox, answer: &str) -> std::path::PathBuf {
    sb.file("script.json", &json!({ "turns": [{"text": answer}] }))
}

#[test]
fn a_long_address_lands_in_scrollback_as_one_line_the_terminal_wraps() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let url = long_url();
    let answer = format!(
        "The artifact is at {url} and the docs are [here](https://docs.example.test/guide).\n\nDONE-MARK"
    );
    let script = script(&sb, &answer);
    let term = Term::start(
        &sb,
        100,
        30,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
        &[],
    );
    term.wait_for("Ask North to do something");
    term.type_text("where is it?");
    term.keys(&["Enter"]);
    term.wait_for("DONE-MARK");
    let joined = term.everything_joined();
    assert!(
        joined.lines().any(|l| l.trim() == url),
        "the address is one line, wrapped by the terminal, not broken by North:\n{joined}"
    );
    assert!(
        joined.contains("(https://docs.example.test/guide)"),
        "{joined}"
    );
    // Without joining, the terminal shows it over the rows it needs.
    let rows = term.everything();
    assert!(!rows.lines().any(|l| l.trim() == url), "{rows}");
}

#[test]
fn addresses_are_written_as_osc8_links() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let url = long_url();
    let script = script(
        &sb,
        &format!(
            "See {url}, or read [the guide](https://docs.example.test/guide). The plan is in `notes/plan.md:3`.\n\nA hostile one: https://evil.test/x\u{1b}]52;c;SGVsbG8=\u{7} here.\n\nDONE-MARK"
        ),
    );
    std::fs::create_dir_all(sb.project().join("notes")).unwrap();
    std::fs::write(sb.project().join("notes/plan.md"), "plan\n").unwrap();
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    tty.wait_for("/help for commands");
    tty.type_text("links please");
    tty.send("\r");
    tty.wait_for("DONE-MARK");
    let raw = String::from_utf8_lossy(&tty.raw.lock().unwrap()).into_owned();
    for link in [url.as_str(), "https://docs.example.test/guide"] {
        let open = format!("\x1b]8;;{link}\x1b\\");
        let at = raw
            .find(&open)
            .unwrap_or_else(|| panic!("no OSC 8 link for {link}"));
        let close = raw[at..]
            .find("\x1b]8;;\x1b\\")
            .expect("the link is closed");
        let shown = &raw[at + open.len()..at + close];
        assert!(
            shown.contains(&link[..30]),
            "the link shows its address: {shown:?}"
        );
    }
    // A file name that exists links to the file, by its full path.
    let file = raw
        .find("\x1b]8;;file://")
        .map(|at| &raw[at..at + raw[at..].find("\x1b\\").unwrap()])
        .expect("the file name is a link");
    assert!(file.ends_with("/notes/plan.md"), "{file:?}");
    // A control character in the model's text ends the address and is
    // never written: no clipboard write, no escape of its own.
    assert!(raw.contains("\x1b]8;;https://evil.test/x\x1b\\"), "{raw:?}");
    assert!(
        !raw.contains("\x1b]52;"),
        "an escape sequence from the model reached the terminal"
    );
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}
