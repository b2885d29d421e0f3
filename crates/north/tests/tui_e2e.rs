//! The real `north` binary in a pseudo-terminal, on the scripted backend,
//! read back through a VT100 screen parser: requests with newlines, a
//! streamed answer, diffs accepted and rejected (checked on disk), "Always
//! execute", Ctrl+C, and a terminal left as it was found.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::{Value, json};

const ROWS: u16 = 32;
const COLS: u16 = 100;
/// Generous: the machine may be busy; nothing asserts on time.
const WAIT: Duration = Duration::from_secs(60);

/// One pseudo-terminal session at a time keeps these tests independent of
/// each other's load; each takes well under a second.
static ONE_TTY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_tty() -> std::sync::MutexGuard<'static, ()> {
    ONE_TTY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A scratch home and project, as in `exec.rs`.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::write(dir.path().join("project/README.md"), "# Test project\n").unwrap();
        Sandbox { dir }
    }
    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn file(&self, name: &str, value: &Value) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, value.to_string()).unwrap();
        p
    }
}

/// The terminal side of the pty: a screen, and answers to the queries a
/// real terminal answers (cursor position, device attributes).
struct Tty {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    master: Box<dyn portable_pty::MasterPty + Send>,
}

fn respond(parser: &vt100::Parser, query: &[u8]) -> Option<Vec<u8>> {
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
    fn spawn(sb: &Sandbox, script: &str) -> Tty {
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

    fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn send(&self, bytes: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Types text one key at a time, as a person would.
    fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.send(&c.to_string());
        }
    }

    fn wait_for(&self, needle: &str) -> String {
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

    fn wait_gone(&self, needle: &str) {
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

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
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
    fn transcript(&self) -> String {
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

    fn assert_restored(&self) {
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

fn stty_ok(screen: &str) {
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

fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_full_session_streams_reviews_diffs_approves_commands_and_restores_the_terminal() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "hello world\n").unwrap();
    std::fs::write(sb.project().join("b.txt"), "bee\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "# Plan\n\nI will **edit** two files:\n\n- `a.txt`\n- `b.txt`\n\nThen run the check. The answer streams in pieces and ends here: STREAM-END"},
            {"text": "Editing a.", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "hello", "new": "bonjour", "expectedOccurrences": 1}}]},
            {"text": "Editing b.", "tool_calls": [{"id": "e2", "name": "edit_replace_exact", "args": {"path": "b.txt", "old": "bee", "new": "wasp", "expectedOccurrences": 1}}]},
            {"text": "EDITS-DONE"},
            {"text": "Running.", "tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": "echo north-ran-$((40+2))", "cwd": null, "timeoutMs": 20000}}]},
            {"text": "FIRST-RUN-DONE"},
            {"text": "Again.", "tool_calls": [{"id": "s2", "name": "shell_run", "args": {"command": "echo north-ran-$((40+2))", "cwd": null, "timeoutMs": 20000}}]},
            {"text": "SECOND-RUN-DONE"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?; stty -a",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");

    // A request with a newline in it (ctrl+j), then Enter sends it.
    tty.type_text("plan the change");
    tty.send("\n");
    tty.type_text("for both files");
    tty.send("\r");
    let screen = tty.wait_for("STREAM-END");
    assert!(screen.contains("› plan the change"), "{screen}");
    assert!(screen.contains("  for both files"), "{screen}");
    assert!(
        screen.contains("# Plan") && screen.contains("• a.txt"),
        "markdown rendered:\n{screen}"
    );
    let first = &recorded(&requests)[0];
    let user = first.to_string();
    assert!(user.contains("plan the change\\nfor both files"), "{user}");

    // Two proposals: accept the first, reject the second.
    tty.type_text("edit them");
    tty.send("\r");
    tty.wait_for("Review edits");
    tty.wait_for("+bonjour world");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "hello world\n",
        "nothing written before Accept"
    );
    tty.send("y");
    tty.wait_for("+wasp");
    tty.send("n");
    tty.wait_for("EDITS-DONE");
    let screen = tty.screen();
    assert!(screen.contains("Accepted edits to a.txt"), "{screen}");
    assert!(screen.contains("Rejected edits to b.txt"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "bonjour world\n"
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("b.txt")).unwrap(),
        "bee\n"
    );

    // "Always execute", then the identical command runs without a prompt.
    tty.type_text("run the check");
    tty.send("\r");
    tty.wait_for("Command requested — run it?");
    tty.send("2");
    tty.wait_for("FIRST-RUN-DONE");
    let allow = std::fs::read_to_string(sb.project().join(".north/allowlist.json")).unwrap();
    assert!(allow.contains("echo north-ran-$((40+2))"), "{allow}");
    tty.type_text("again");
    tty.send("\r");
    let screen = tty.wait_for("SECOND-RUN-DONE");
    let after_again = screen
        .split("› again")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        !after_again.contains("run it?"),
        "no second prompt:\n{screen}"
    );
    assert!(after_again.contains("exit code 0"), "{screen}");

    // Quit with ctrl+d on the empty composer.
    tty.send("\x04");
    let screen = tty.wait_for("EXIT=0");
    assert!(screen.contains("north: session"), "{screen}");
    tty.wait_for("speed");
    stty_ok(&tty.screen());
    tty.wait_exit();
    tty.assert_restored();
    // The conversation stays in the terminal after exit.
    let all = tty.transcript();
    for needle in [
        "› plan the change",
        "STREAM-END",
        "Accepted edits to a.txt",
        "SECOND-RUN-DONE",
    ] {
        assert!(all.contains(needle), "{needle} kept in scrollback:\n{all}");
    }
}

#[test]
fn esc_interrupts_a_running_command_without_another_request_and_ctrl_c_keeps_drafts() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"text": "Starting the long job.", "tool_calls": [{"id": "long", "name": "shell_run", "args": {"command": "sleep 30", "cwd": null, "timeoutMs": 60000}}]},
            {"text": "AFTER-INTERRUPT"}
        ]}),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' --record-requests '{}'; echo EXIT=$?; stty -a",
            script.display(),
            requests.display()
        ),
    );
    tty.wait_for("/help for commands");
    tty.type_text("run the long job");
    tty.send("\r");
    tty.wait_for("Command requested — run it?");
    tty.send("1");
    tty.wait_gone("Command requested — run it?");
    tty.wait_for("Working");
    // While the command runs the UI still takes input.
    tty.type_text("typed while busy");
    tty.wait_for("typed while busy");
    tty.send("\x1b");
    let screen = tty.wait_for("Interrupted");
    assert!(
        !screen.contains("AFTER-INTERRUPT"),
        "the model is not asked again:\n{screen}"
    );
    tty.wait_gone("Working");
    assert!(
        tty.screen().contains("typed while busy"),
        "esc keeps the draft"
    );
    assert_eq!(
        recorded(&requests).len(),
        1,
        "no request after the interrupt"
    );
    // Ctrl+C clears the draft first, and never quits with one.
    tty.send("\x03");
    tty.wait_gone("typed while busy");
    tty.send("\x1b[A");
    tty.wait_for("typed while busy");
    tty.send("\x03");
    tty.wait_gone("typed while busy");
    // On an empty composer: the first press asks, the second quits.
    tty.send("\x03");
    tty.wait_for("again");
    tty.send("\x03");
    let screen = tty.wait_for("EXIT=0");
    tty.wait_for("speed");
    stty_ok(&tty.screen());
    assert!(screen.contains("north: session"), "{screen}");
    tty.wait_exit();
    tty.assert_restored();
    assert_eq!(recorded(&requests).len(), 1);
}

#[test]
fn without_a_key_or_script_north_says_how_to_start() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_north"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sb.home())
        .env("XDG_CONFIG_HOME", sb.home().join("config"))
        .env("XDG_STATE_HOME", sb.home().join("state"))
        .env("XDG_DATA_HOME", sb.home().join("data"))
        .current_dir(sb.project())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(
        err.contains("--script"),
        "points at the scripted backend: {err}"
    );
    assert!(err.contains("--provider"), "{err}");
}

#[test]
fn resize_redraws_and_sigterm_restores_the_terminal() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    let script = sb.file(
        "script.json",
        &json!({"turns": [{"text": "RESIZED-ANSWER"}]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!(
            "\"$NORTH\" --script '{}' </dev/tty & pid=$!; echo PID=$pid; wait $pid; echo EXIT=$?; stty -a",
            script.display()
        ),
    );
    let screen = tty.wait_for("/help for commands");
    let pid: i32 = screen
        .split("PID=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("pid printed");
    // The screen model changes size first, so every byte after the
    // resize is read at the new size.
    tty.parser.lock().unwrap().screen_mut().set_size(
        std::num::NonZero::new(24).unwrap(),
        std::num::NonZero::new(60).unwrap(),
    );
    tty.master
        .resize(PtySize {
            rows: 24,
            cols: 60,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    // Type at once: keys that arrive together with the resize signal must
    // not be held back (crossterm's edge-triggered reader lost them; North
    // uses its level-triggered /dev/tty reader).
    tty.type_text("after resize");
    tty.wait_for("after resize");
    tty.send("\r");
    tty.wait_for("RESIZED-ANSWER");
    tty.wait_for("enter send");
    // SAFETY: signalling our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    tty.wait_for("EXIT=143");
    tty.wait_for("speed");
    stty_ok(&tty.screen());
    tty.wait_exit();
    tty.assert_restored();
}

#[test]
fn an_untrusted_project_is_asked_about_once_and_escapes_always_ask() {
    let _tty = one_tty();
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join(".north")).unwrap();
    std::fs::write(
        sb.project().join(".north/allowlist.json"),
        r#"{"allowedCommands": ["touch ran.txt"]}"#,
    )
    .unwrap();
    std::fs::write(sb.dir.path().join("outside.txt"), "OUTSIDE-TUI-SECRET\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            {"tool_calls": [{"id": "t1", "name": "shell_run", "args": {"command": "touch ran.txt"}}]},
            {"tool_calls": [{"id": "t2", "name": "shell_run", "args": {"command": "cat ../outside.txt"}}]},
            {"text": "ALL-DONE"}
        ]}),
    );
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    let screen = tty.wait_for("remember your choice? [y/N]");
    assert!(screen.contains("allows `touch ran.txt`"), "{screen}");
    tty.send("y\r");
    tty.wait_for("/help for commands");
    tty.type_text("go");
    tty.send("\r");
    // The trusted rule runs unasked; the escape asks, saying why.
    let screen = tty.wait_for("Command requested — run it?");
    assert!(screen.contains("cat ../outside.txt"), "{screen}");
    assert!(screen.contains("outside the project"), "{screen}");
    assert!(sb.project().join("ran.txt").exists());
    tty.send("3");
    tty.wait_for("ALL-DONE");
    assert!(!tty.screen().contains("OUTSIDE-TUI-SECRET"));
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
    tty.assert_restored();

    // Trusted now: the next start asks nothing.
    let mut tty = Tty::spawn(
        &sb,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
    );
    let screen = tty.wait_for("/help for commands");
    assert!(!screen.contains("remember your choice"), "{screen}");
    tty.send("\x04");
    tty.wait_for("EXIT=0");
    tty.wait_exit();
}
