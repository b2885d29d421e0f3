//! The TUI at a real model's streaming pace: an OpenAI-compatible server on
//! 127.0.0.1 sends a 300-line answer in small chunks with pauses between
//! them, and the real `north` binary in a pseudo-terminal must keep the text
//! on screen while it streams, keep the status line moving, survive resizes
//! mid-stream and end with every line in the terminal.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use north_test_support::{FakeServer, Reply, openai};
use portable_pty::PtySize;

use crate::tty;
use tty::*;

fn answer() -> Vec<String> {
    (1..=300)
        .map(|i| format!("LINE-{i:03} of a long streamed answer\n\n"))
        .collect()
}

fn resize(tty: &Tty, rows: u16, cols: u16) {
    tty.parser.lock().unwrap().screen_mut().set_size(
        std::num::NonZero::new(rows).unwrap(),
        std::num::NonZero::new(cols).unwrap(),
    );
    tty.master
        .resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
}

#[test]
fn a_long_answer_at_real_pace_stays_visible_with_a_moving_status_line_through_resizes() {
    let _tty = one_tty();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(FakeServer::start()).unwrap();
    let parts = answer();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    // One SSE event per line, 25 ms apart: about 8 s of streaming.
    server.push(Reply::sse(openai::text_stream(&refs)).paced(Duration::from_millis(25)));
    let sb = Sandbox::new();
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "OPENAI_BASE_URL='{}/v1' \"$NORTH\" --provider openai --model local-model </dev/tty; echo EXIT=$?",
            server.url()
        ),
    );
    tty.wait_for("/help for commands");
    tty.type_text("write a long answer");
    tty.send("\r");

    // While it streams, the newest text is on screen (never a blank
    // viewport) and the status line counts tokens.
    let screen = tty.wait_until("text, the working status and a token count", |s| {
        s.contains("LINE-040")
            && s.contains("Working")
            && s.contains(" tokens")
            && !s.contains(" 0 tokens")
    });
    assert!(!screen.contains("LINE-300"), "still streaming:\n{screen}");
    // The elapsed timer advances while text keeps arriving.
    let screen = tty.wait_for("Working 2s");
    assert!(
        !screen.contains("LINE-300"),
        "the timer moved mid-stream:\n{screen}"
    );

    // Narrower, then wider, mid-stream: the text keeps flowing on screen.
    resize(&tty, ROWS, 60);
    let screen = tty.wait_for("LINE-1");
    assert!(!screen.contains("LINE-300"), "{screen}");
    resize(&tty, ROWS, COLS);
    tty.wait_for("LINE-2");

    // At the end the whole answer is in the terminal, in order.
    tty.wait_for("LINE-300");
    tty.wait_gone("Working");
    let all = tty.transcript();
    let mut at = 0;
    for i in (1..=300).step_by(1) {
        let needle = format!("LINE-{i:03}");
        match all[at..].find(&needle) {
            Some(pos) => at += pos,
            None => panic!("{needle} missing or out of order in the transcript:\n{all}"),
        }
    }
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
    tty.assert_restored();
    assert_eq!(server.requests_to("/v1/chat/completions").len(), 1);
}
