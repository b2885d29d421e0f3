//! `/undo` and `/rewind` in the TUI (pseudo-terminal): a turn's shell
//! command changes files, `/undo` puts them back; a hand edit refuses the
//! undo with its diff until `force`; `/rewind` lists turns and rewinds the
//! conversation so the next request no longer carries it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tty;

use serde_json::json;
use tty::{Sandbox, Tty, one_tty, recorded};

#[test]
fn undo_and_rewind_in_the_tui() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "c1", "name": "shell_run",
                "args": {"command": "echo made > made.txt; rm README.md"}}]},
            {"text": "FIRST-DONE"},
            {"tool_calls": [{"id": "c2", "name": "shell_run",
                "args": {"command": "echo v1 > notes.txt"}}]},
            {"text": "SECOND-DONE"},
            {"text": "THIRD-DONE"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?",
            script.display(),
            requests.display()
        ),
    );
    let project = sb.project();
    tty.wait_for("/help for commands");
    tty.type_text("make a file");
    tty.send("\r");
    tty.wait_for("run it?");
    tty.send("1");
    tty.wait_for("FIRST-DONE");
    tty.wait_gone("Working");
    assert!(project.join("made.txt").exists());
    assert!(!project.join("README.md").exists());

    tty.type_text("/undo");
    tty.send("\r");
    tty.wait_for("Undid turn 1: 1 restored, 1 removed");
    assert!(!project.join("made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(project.join("README.md")).unwrap(),
        "# Test project\n"
    );

    tty.type_text("write notes");
    tty.send("\r");
    tty.wait_for("run it?");
    tty.send("1");
    tty.wait_for("SECOND-DONE");
    tty.wait_gone("Working");
    // The user edits the file by hand: undo shows it and refuses.
    std::fs::write(project.join("notes.txt"), "v1\nMY-HAND-EDIT\n").unwrap();
    tty.type_text("/undo");
    tty.send("\r");
    let screen = tty.wait_for("Undo refused: 1 file(s) changed by hand");
    assert!(screen.contains("MY-HAND-EDIT"), "{screen}");
    assert!(project.join("notes.txt").exists());
    tty.type_text("/undo force");
    tty.send("\r");
    tty.wait_for("Undid turn 2");
    assert!(!project.join("notes.txt").exists());

    tty.type_text("/rewind");
    tty.send("\r");
    let screen = tty.wait_for("Rewind to the start of which turn?");
    assert!(screen.contains("write notes"), "{screen}");
    // Esc closes the picker; the command form still works.
    tty.send("\x1b");
    tty.wait_gone("Rewind to the start of which turn?");
    tty.type_text("/rewind 2 conversation");
    tty.send("\r");
    tty.wait_for("Conversation rewound");

    tty.type_text("fresh start");
    tty.send("\r");
    tty.wait_for("THIRD-DONE");
    let sent = recorded(&requests);
    let last = sent.last().unwrap().to_string();
    assert!(last.contains("make a file"), "{last}");
    assert!(!last.contains("write notes"), "{last}");
    assert!(last.contains("fresh start"), "{last}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}
