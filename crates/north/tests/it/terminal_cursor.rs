//! The terminal's own cursor in a real terminal emulator (tmux): it sits
//! where the user types, so an input method's candidate window and a
//! screen magnifier follow the draft, and a resize still finds the live
//! area from it — whatever the rows above it become at the new width.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde_json::json;

use crate::emulator::*;

fn scripted(sb: &Sandbox, turns: serde_json::Value, cols: u16, rows: u16) -> Term {
    let script = sb.file("script.json", &json!({ "turns": turns }));
    let term = Term::start(
        sb,
        cols,
        rows,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
        &[],
    );
    term.wait_for("Ask North to do something");
    term
}

/// The terminal's cursor as (column, row) of the screen.
fn cursor(term: &Term) -> (usize, usize) {
    let at = term.display("#{cursor_x},#{cursor_y}");
    let (x, y) = at.split_once(',').unwrap();
    (x.parse().unwrap(), y.parse().unwrap())
}

/// The screen row holding `needle`, the last one if several do.
fn row_of(screen: &str, needle: &str) -> usize {
    let rows: Vec<&str> = screen.lines().collect();
    rows.iter()
        .rposition(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} on screen:\n{screen}"))
}

#[test]
fn the_terminal_cursor_sits_where_the_user_types() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let term = scripted(&sb, json!([{"text": "ANSWER-ONE"}]), 120, 40);
    // An empty composer: the cursor where the first letter will go (an
    // input method opens its window there before anything is typed).
    let screen = term.screen();
    let row = row_of(&screen, "Ask North to do something");
    assert_eq!(cursor(&term), (2, row), "{screen}");

    term.type_text("héllo wörld");
    let screen = term.wait_for("› héllo wörld");
    let row = row_of(&screen, "› héllo wörld");
    assert_eq!(cursor(&term), (13, row), "after the last letter:\n{screen}");
    term.keys(&["Left", "Left", "Left"]);
    term.wait_until("the cursor to move back", |_| cursor(&term).0 == 10);
    assert_eq!(cursor(&term).1, row);

    // A second line of the draft: the cursor goes down with it.
    term.type_text("\x1b[13;2usecond");
    let screen = term.wait_for("second");
    let second = row_of(&screen, "second");
    assert_eq!(second, row + 1, "{screen}");
    assert_eq!(cursor(&term), (8, second), "{screen}");

    // Sent: the cursor is on the empty composer again, below the answer.
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-ONE");
    let screen = term.wait_until("the composer to be empty", |s| {
        s.contains("Ask North to do something")
    });
    let row = row_of(&screen, "Ask North to do something");
    assert!(row > row_of(&screen, "ANSWER-ONE"), "{screen}");
    assert_eq!(cursor(&term), (2, row), "{screen}");
}

/// What a resize must leave: every transcript line once, no rule or
/// composer text in scrollback, one composer on screen with the cursor
/// on its draft.
fn assert_one_live_area(term: &Term, answer: &[String], draft: &str) {
    let all = term.everything_joined();
    for line in answer {
        assert_eq!(count(&all, line), 1, "{line} once in\n{all}");
    }
    let scrollback = term.scrollback();
    for chrome in ["──────", "enter send", draft] {
        assert_eq!(
            count(&scrollback, chrome),
            0,
            "{chrome:?} in scrollback:\n{scrollback}"
        );
    }
    let screen = term.screen();
    assert_eq!(
        screen.lines().filter(|l| l.starts_with("──")).count(),
        1,
        "one rule on screen:\n{screen}"
    );
    let joined = term.everything_joined();
    assert_eq!(count(&joined, draft), 1, "the draft once:\n{joined}");
    // The cursor is after the draft's last letter: on the composer's last
    // row, right of its text.
    let (x, y) = cursor(term);
    let rows: Vec<&str> = screen.lines().collect();
    let tail = rows[y].trim_end();
    assert!(
        tail.ends_with(draft) && x == tail.chars().count(),
        "the cursor at ({x}, {y}) right after the draft:\n{screen}"
    );
}

#[test]
fn resizes_with_a_long_draft_keep_the_transcript_and_leave_no_live_area_behind() {
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    let answer: Vec<String> = (1..=12)
        .map(|i| format!("ANSWER-{i:02} a line of the first answer"))
        .collect();
    let term = scripted(&sb, json!([{"text": answer.join("\n\n")}]), 120, 40);
    term.type_text("first");
    term.keys(&["Enter"]);
    term.wait_for("ANSWER-12");
    term.wait_until("the turn to end", |s| !s.contains("Working"));
    // A draft longer than the narrower widths below, so the composer's
    // own row is rewrapped too and the cursor moves down with it.
    let draft =
        "a draft the user is typing while resizing the window, long enough to wrap at eighty";
    term.type_text(draft);
    term.wait_for("wrap at eighty");
    for (cols, rows) in [(80, 24), (50, 30), (120, 40), (70, 20), (120, 40)] {
        term.resize_quietly(cols, rows);
        term.wait_until("the live area redrawn at the new width", |s| {
            let rows: Vec<&str> = s.lines().collect();
            let (x, y) = cursor(&term);
            let rules: Vec<&&str> = rows.iter().filter(|l| l.starts_with("──")).collect();
            // North drew its rule across the new width.
            rules.len() == 1
                && rules[0].chars().count() == usize::from(cols)
                && rows.get(y).is_some_and(|r| {
                    r.trim_end().ends_with("eighty") && x == r.trim_end().chars().count()
                })
        });
        assert_one_live_area(&term, &answer, "eighty");
    }
}
