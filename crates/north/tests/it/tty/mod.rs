//! The pseudo-terminal harness of the TUI tests: the real `north` binary in
//! a pty, read back through a VT100 screen parser that answers the queries
//! a real terminal answers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::common;
// Not every test binary uses every helper.
#[allow(unused_imports)]
pub use common::{Sandbox, recorded, text};

pub const ROWS: u16 = 32;
pub const COLS: u16 = 100;
/// Generous: the machine may be busy; nothing asserts on time.
pub const WAIT: Duration = Duration::from_secs(60);

/// One pseudo-terminal session at a time keeps these tests independent of
/// each other's load; each takes well under a second.
pub static ONE_TTY: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn one_tty() -> std::sync::MutexGuard<'static, ()> {
    ONE_TTY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The terminal side of the pty: a screen, and answers to the queries a
/// real terminal answers (cursor position, device attributes).
pub struct Tty {
    pub parser: Arc<Mutex<vt100::Parser>>,
    pub raw: Arc<Mutex<Vec<u8>>>,
    pub writer: Arc<Mutex<Box<dyn Write + Send>>>,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub master: Box<dyn portable_pty::MasterPty + Send>,
}

pub fn respond(parser: &vt100::Parser, query: &[u8]) -> Option<Vec<u8>> {
    match query {
        b"\x1b[6n" => {
            let (row, col) = parser.screen().cursor_position();
            Some(format!("\x1b[{};{}R", row + 1, col + 1).into_bytes())
        }
        // Primary device attributes: a VT220-ish terminal without the
        // kitty keyboard protocol.
        b"\x1b[c" | b"\x1b[0c" => Some(b"\x1b[?62;22c".to_vec()),
        _ => None,
    }
}

impl Tty {
    /// Starts `sh -c SCRIPT` in the sandbox; `$NORTH` is the binary.
    pub fn spawn(sb: &Sandbox, script: &str) -> Tty {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new("sh");
        cmd.arg("-c");
        cmd.arg(script);
        cmd.env_clear();
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("TERM", "xterm-256color");
        cmd.env("HOME", sb.home());
        cmd.env("XDG_CONFIG_HOME", sb.home().join("config"));
        cmd.env("XDG_STATE_HOME", sb.home().join("state"));
        cmd.env("XDG_DATA_HOME", sb.home().join("data"));
        cmd.env("NORTH", env!("CARGO_BIN_EXE_north"));
        cmd.cwd(sb.project());
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(ROWS).unwrap(),
            std::num::NonZero::new(COLS).unwrap(),
            2000,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pty.master.take_writer().unwrap()));
        let mut reader = pty.master.try_clone_reader().unwrap();
        let (p, r, w) = (parser.clone(), raw.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut pending: Vec<u8> = Vec::new();
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                r.lock().unwrap().extend_from_slice(&buf[..n]);
                pending.extend_from_slice(&buf[..n]);
                // Feed up to each query, answer it with the screen as it is
                // at that point, go on.
                let mut parser = p.lock().unwrap();
                loop {
                    let found = [&b"\x1b[6n"[..], b"\x1b[c", b"\x1b[0c"]
                        .iter()
                        .filter_map(|q| {
                            pending
                                .windows(q.len())
                                .position(|w| w == *q)
                                .map(|i| (i, q.len()))
                        })
                        .min();
                    match found {
                        Some((i, len)) => {
                            parser.process(&pending[..i + len]);
                            if let Some(answer) = respond(&parser, &pending[i..i + len]) {
                                let mut w = w.lock().unwrap();
                                let _ = w.write_all(&answer);
                                let _ = w.flush();
                            }
                            pending.drain(..i + len);
                        }
                        None => {
                            // Keep a possible partial query for the next read.
                            let keep = pending.len().min(3);
                            let cut = pending.len() - keep;
                            let tail_is_partial = pending[cut..].contains(&0x1b);
                            let upto = if tail_is_partial { cut } else { pending.len() };
                            parser.process(&pending[..upto]);
                            pending.drain(..upto);
                            break;
                        }
                    }
                }
            }
        });
        Tty {
            parser,
            raw,
            writer,
            child,
            master: pty.master,
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    pub fn send(&self, bytes: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Types text one key at a time, as a person would.
    pub fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.send(&c.to_string());
        }
    }

    /// Waits until the screen satisfies `ok` (a frame may be caught half
    /// drawn, so a condition is waited for, never read once).
    pub fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        common::poll_until(
            what,
            WAIT,
            || self.screen(),
            ok,
            |screen| format!("screen:\n{screen}"),
        )
    }

    /// Waits until `needle` is gone, then returns the screen.
    pub fn wait_gone_then(&self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?} to go away"), |s| !s.contains(needle))
    }

    pub fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {needle:?}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    pub fn wait_gone(&self, needle: &str) {
        let start = Instant::now();
        while self.screen().contains(needle) {
            assert!(
                start.elapsed() < WAIT,
                "{needle:?} stays:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("north did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Everything written to the terminal, scrollback included.
    pub fn transcript(&self) -> String {
        let mut parser = self.parser.lock().unwrap();
        parser.screen_mut().set_scrollback(usize::MAX);
        let back = parser.screen().scrollback();
        let mut out = String::new();
        // Page from the oldest scrollback row to the live screen.
        let mut offset = back;
        loop {
            parser.screen_mut().set_scrollback(offset);
            let rows: Vec<String> = parser.screen().rows(0, COLS).collect();
            let take = if offset >= usize::from(ROWS) {
                usize::from(ROWS)
            } else {
                offset
            };
            let page = if offset == 0 { rows.len() } else { take };
            for r in rows.iter().take(page) {
                out.push_str(r.trim_end());
                out.push('\n');
            }
            if offset == 0 {
                break;
            }
            offset = offset.saturating_sub(usize::from(ROWS));
        }
        parser.screen_mut().set_scrollback(0);
        out
    }

    pub fn assert_restored(&self) {
        let raw = self.raw.lock().unwrap().clone();
        let text = String::from_utf8_lossy(&raw);
        let screen = self.parser.lock().unwrap().screen().clone();
        assert!(!screen.hide_cursor(), "the cursor is shown again");
        assert!(!screen.bracketed_paste(), "bracketed paste is off");
        assert!(
            text.rfind("\x1b[?2004l") > text.rfind("\x1b[?2004h"),
            "paste mode switched off last"
        );
        assert!(
            !text.contains("\x1b[?1000h") && !text.contains("\x1b[?1006h"),
            "no mouse capture"
        );
        assert!(
            !text.contains("\x1b[?1049h"),
            "the normal screen is used, not the alternate one"
        );
    }
}

pub fn stty_ok(screen: &str) {
    // `stty -a` after north exits: canonical mode and echo are back on.
    assert!(
        screen.contains(" icanon") && !screen.contains("-icanon"),
        "{screen}"
    );
    assert!(
        screen.contains(" echo ") && !screen.contains("-echo "),
        "{screen}"
    );
}
