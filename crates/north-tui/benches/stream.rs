//! Streaming render benchmark: a long answer arriving token by token into
//! the real UI state and inline terminal, serialized by the real crossterm
//! backend into a sink. Reports tokens per second the UI can absorb, the
//! CPU it spends at 5,000 tokens/s, the latency of a key press (handled
//! and drawn) while text streams, and frame times with a 2,000-line
//! transcript behind the live area and in the transcript view.
//!
//! `cargo bench -p north-tui --bench stream`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use north_protocol::Event;
use north_tui::{App, InlineTerminal, STREAM_FPS, SessionInfo, TtyBackend, draw};
use ratatui::layout::Size;

const TARGET_TPS: f64 = 5_000.0;

fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// A long markdown answer cut into ~4-character tokens.
fn tokens(n: usize) -> Vec<String> {
    let para = "North keeps the **agent**, the `tools` and the UI apart, so each can be tested on its own. ";
    let list =
        "- a list item with `code` in it\n- another item that is a little longer than the first\n";
    let code = "```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n";
    let mut text = String::new();
    let mut i = 0;
    while text.len() < n * 4 {
        match i % 4 {
            0 => text.push_str(&format!("## Section {i}\n\n")),
            1 => {
                text.push_str(&para.repeat(3));
                text.push_str("\n\n");
            }
            2 => {
                text.push_str(list);
                text.push('\n');
            }
            _ => {
                text.push_str(code);
                text.push('\n');
            }
        }
        i += 1;
    }
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(4)
        .take(n)
        .map(|c| c.iter().collect())
        .collect()
}

fn setup() -> (App, InlineTerminal<TtyBackend<std::io::Sink>>) {
    let size = Size::new(120, 40);
    let term = InlineTerminal::new(TtyBackend::new(std::io::sink(), size), size, 0).unwrap();
    let mut app = App::new(SessionInfo {
        version: String::new(),
        provider: "scripted".into(),
        model: "scripted".into(),
        session_id: "bench".into(),
        ..Default::default()
    });
    app.start_turn("write a long answer");
    (app, term)
}

/// Streams `toks`, drawing a frame every `per_frame` tokens.
fn stream(toks: &[String], per_frame: usize) -> (Duration, Duration, usize) {
    let (mut app, mut term) = setup();
    let (wall0, cpu0) = (Instant::now(), cpu_time());
    let mut frames = 0;
    for (i, t) in toks.iter().enumerate() {
        app.handle_event(Event::AssistantText { text: t.clone() });
        if (i + 1) % per_frame == 0 {
            draw(&mut term, &mut app).unwrap();
            frames += 1;
        }
    }
    draw(&mut term, &mut app).unwrap();
    (wall0.elapsed(), cpu_time() - cpu0, frames + 1)
}

#[allow(
    clippy::too_many_lines,
    reason = "a benchmark's setup and its runs, read top to bottom"
)]
fn main() {
    let n = 50_000;
    let toks = tokens(n);
    let per_frame = (TARGET_TPS / STREAM_FPS as f64).ceil() as usize;
    println!("streaming {n} tokens (~4 chars each) into a 120x40 terminal");

    let (wall, cpu, frames) = stream(&toks, per_frame);
    let tps = n as f64 / wall.as_secs_f64();
    let cpu_at_target = cpu.as_secs_f64() / (n as f64 / TARGET_TPS) * 100.0;
    println!(
        "coalesced ({STREAM_FPS} fps at 5,000 tok/s = {per_frame} tokens/frame): {frames} frames in {:.1} ms -> {:.0} tokens/s absorbed ({:.1}x the target); CPU at 5,000 tok/s: {:.1}% of one core; {:.3} ms per frame",
        wall.as_secs_f64() * 1e3,
        tps,
        tps / TARGET_TPS,
        cpu_at_target,
        wall.as_secs_f64() * 1e3 / frames as f64,
    );

    let few = &toks[..10_000];
    let (wall, _, frames) = stream(few, 1);
    println!(
        "uncoalesced (a frame per token, the worst case): {} tokens in {:.1} ms -> {:.0} tokens/s, {:.3} ms per frame",
        few.len(),
        wall.as_secs_f64() * 1e3,
        few.len() as f64 / wall.as_secs_f64(),
        wall.as_secs_f64() * 1e3 / frames as f64,
    );

    // Input latency under load: between streamed frames, a key press is
    // handled and drawn at once (as the run loop does).
    let (mut app, mut term) = setup();
    let mut lat = Vec::new();
    for (i, t) in toks.iter().enumerate().take(30_000) {
        app.handle_event(Event::AssistantText { text: t.clone() });
        if (i + 1) % per_frame == 0 {
            draw(&mut term, &mut app).unwrap();
        }
        if i % 50 == 25 {
            let start = Instant::now();
            app.handle_key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE));
            draw(&mut term, &mut app).unwrap();
            lat.push(start.elapsed());
        }
    }
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    println!(
        "key press handled and drawn while streaming: n={} p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        lat.len(),
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        lat[lat.len() - 1].as_secs_f64() * 1e3
    );

    // A session with a 2,000-line transcript: streaming frames, and the
    // transcript view (Ctrl+T) scrolling through it.
    let (mut app, mut term) = setup();
    let mut history = String::new();
    for i in 0..1_000 {
        history.push_str(&format!(
            "Line {i} of an earlier answer, with `code` and **bold** text.\n\n"
        ));
    }
    app.handle_event(Event::AssistantText { text: history });
    app.handle_event(Event::ToolIntent {
        call_id: "c".into(),
        tool: "shell_run".into(),
        line: "Command requested: `cargo test`".into(),
        kind: Default::default(),
    });
    let lines = app.transcript_lines(120).len();
    let mut frames = Vec::new();
    for (i, t) in toks.iter().enumerate().take(20_000) {
        app.handle_event(Event::AssistantText { text: t.clone() });
        if (i + 1) % per_frame == 0 {
            let start = Instant::now();
            draw(&mut term, &mut app).unwrap();
            frames.push(start.elapsed());
        }
    }
    frames.sort();
    let p = |v: &[Duration], q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    println!(
        "streaming frames after a {lines}-line transcript: n={} p50 {:.3} ms, p99 {:.3} ms",
        frames.len(),
        p(&frames, 0.5).as_secs_f64() * 1e3,
        p(&frames, 0.99).as_secs_f64() * 1e3,
    );
    let open = Instant::now();
    let all = app.transcript_lines(120);
    let total = all.len();
    let mut pager = north_tui::pager::Pager::new(all);
    let opened = open.elapsed();
    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let mut view = Vec::new();
    for i in 0..600 {
        let start = Instant::now();
        let code = if i % 3 == 0 {
            KeyCode::PageUp
        } else {
            KeyCode::Up
        };
        pager.key(KeyEvent::new(code, KeyModifiers::NONE), 40);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        pager.render(area, &mut buf);
        view.push(start.elapsed());
    }
    view.sort();
    println!(
        "transcript view over {total} lines: opened in {:.2} ms; scroll frames n={} p50 {:.3} ms, p99 {:.3} ms",
        opened.as_secs_f64() * 1e3,
        view.len(),
        p(&view, 0.5).as_secs_f64() * 1e3,
        p(&view, 0.99).as_secs_f64() * 1e3,
    );
}
