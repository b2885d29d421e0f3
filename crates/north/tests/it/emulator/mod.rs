//! The real-terminal harness: the real `north` binary in a tmux pane (a
//! terminal emulator with scrollback), read back with `capture-pane`, so a
//! test sees what a user scrolling up would see — not only the screen.
//!
//! Each harness runs its own tmux server on a private socket, with a clean
//! environment and no user configuration.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common;
#[allow(unused_imports)]
pub use common::{Sandbox, recorded, text};

/// Generous: the machine may be busy; nothing asserts on time.
pub const WAIT: Duration = Duration::from_secs(90);

/// Whether tmux can run here; tests say so and pass when it cannot (CI
/// installs it).
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One tmux server with one pane running a script.
pub struct Term {
    socket: PathBuf,
    _dir: tempfile::TempDir,
    /// One terminal at a time: what is measured is North's rendering, not
    /// how a dozen panes share two cores (see `ONE_AT_A_TIME`).
    _turn: std::sync::MutexGuard<'static, ()>,
}

/// The emulator tests take turns: under the whole suite's load, a dozen
/// panes redrawing at once starve each other's frames and turn timing
/// windows (a resize mid-frame) into failures that say nothing about North.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Term {
    /// Starts `sh -c SCRIPT` in the sandbox's project in a `cols`x`rows`
    /// pane; `$NORTH` is the binary, `extra` adds environment variables.
    pub fn start(sb: &Sandbox, cols: u16, rows: u16, script: &str, extra: &[(&str, &str)]) -> Term {
        // A test that failed holding the turn poisons it; the next still runs.
        let turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A short path: Unix socket names are limited to ~100 bytes.
        let dir = tempfile::Builder::new()
            .prefix("nt")
            .tempdir_in("/tmp")
            .unwrap();
        let socket = dir.path().join("s");
        let conf = dir.path().join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g history-limit 20000\nset -g status off\nset -g remain-on-exit on\nset -sg escape-time 0\n",
        )
        .unwrap();
        let mut cmd = Command::new("tmux");
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", sb.home())
            .env("XDG_CONFIG_HOME", sb.home().join("config"))
            .env("XDG_STATE_HOME", sb.home().join("state"))
            .env("XDG_DATA_HOME", sb.home().join("data"))
            .env("NORTH", env!("CARGO_BIN_EXE_north"))
            .env("TERM", "xterm-256color");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd
            .arg("-S")
            .arg(&socket)
            .arg("-f")
            .arg(&conf)
            .args(["new-session", "-d", "-s", "t", "-x"])
            .arg(cols.to_string())
            .arg("-y")
            .arg(rows.to_string())
            .arg("-c")
            .arg(sb.project())
            .arg(format!("sh -c {}", shell_quote(script)))
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux: {}", text(&out.stderr));
        Term {
            socket,
            _dir: dir,
            _turn: turn,
        }
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", text(&out.stderr));
        out
    }

    /// The visible screen, one line per row (trailing blanks trimmed).
    pub fn screen(&self) -> String {
        text(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout)
    }

    /// Scrollback and screen, oldest first.
    pub fn everything(&self) -> String {
        text(
            &self
                .tmux(&["capture-pane", "-p", "-S", "-", "-E", "-", "-t", "t"])
                .stdout,
        )
    }

    /// Scrollback and screen with the rows the terminal wrapped joined
    /// again, as selecting and copying them gives them back.
    pub fn everything_joined(&self) -> String {
        text(
            &self
                .tmux(&["capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "t"])
                .stdout,
        )
    }

    /// Only the scrollback (what scrolled off the top).
    pub fn scrollback(&self) -> String {
        let history: usize = self.display("#{history_size}").parse().unwrap_or(0);
        if history == 0 {
            return String::new();
        }
        text(
            &self
                .tmux(&["capture-pane", "-p", "-S", "-", "-E", "-1", "-t", "t"])
                .stdout,
        )
    }

    /// A tmux format of the pane (`#{cursor_y}`, `#{history_size}`…).
    pub fn display(&self, format: &str) -> String {
        text(
            &self
                .tmux(&["display-message", "-p", "-t", "t", format])
                .stdout,
        )
        .trim()
        .to_string()
    }

    /// Types text literally.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Sets a tmux option of the pane's window (`window-style`…).
    pub fn window_option(&self, name: &str, value: &str) {
        self.tmux(&["set-option", "-w", "-t", "t", name, value]);
    }

    /// Sends named keys (`Enter`, `Escape`, `C-c`, `BTab`…).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Pastes `text` as a terminal paste (bracketed when the app asked).
    pub fn paste(&self, text: &str) {
        self.tmux(&["set-buffer", "--", text]);
        self.tmux(&["paste-buffer", "-p", "-t", "t"]);
    }

    /// Resizes the window.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            "t",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// Resizes the window while the program is stopped between frames
    /// (SIGSTOP while every thread waits in the kernel, then SIGCONT after
    /// the resize), so no frame computed for the old size is still on its
    /// way when the terminal reflows: what is tested is how North follows
    /// a resize, not the race every inline program has with a frame it is
    /// writing at that instant.
    pub fn resize_quietly(&self, cols: u16, rows: u16) {
        let pids = self.program_pids();
        let start = Instant::now();
        loop {
            for pid in &pids {
                signal(*pid, "STOP");
            }
            std::thread::sleep(Duration::from_millis(5));
            if pids.iter().all(|pid| waiting(*pid)) {
                break;
            }
            for pid in &pids {
                signal(*pid, "CONT");
            }
            assert!(
                start.elapsed() < WAIT,
                "the program never waited between frames"
            );
            std::thread::sleep(Duration::from_millis(3));
        }
        // What the program wrote before it stopped may still wait in the
        // pty for tmux to read it; resizing before tmux drew it would make
        // it a frame in flight after all. Drawn once the screen and the
        // cursor stay the same between two looks.
        let look = || (self.screen(), self.display("#{cursor_x},#{cursor_y}"));
        let mut last = look();
        let start = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let now = look();
            if now == last || start.elapsed() > WAIT {
                break;
            }
            last = now;
        }
        self.resize(cols, rows);
        // tmux resizes its screen at once but tells the program (the
        // pty's size) a little later; the program goes on only once the
        // pty has the new size, as it would in a terminal that does both
        // at once.
        let tty = self.display("#{pane_tty}");
        let start = Instant::now();
        while start.elapsed() < WAIT {
            let size = Command::new("stty")
                .args(["-F", &tty, "size"])
                .output()
                .map(|o| text(&o.stdout).trim().to_string())
                .unwrap_or_default();
            if size == format!("{rows} {cols}") {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(50));
        for pid in &pids {
            signal(*pid, "CONT");
        }
    }

    /// The processes the pane's shell started.
    fn program_pids(&self) -> Vec<u32> {
        let shell = self.display("#{pane_pid}");
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .unwrap_or_default();
        children
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// Waits until the screen satisfies `ok`.
    pub fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        common::poll_until(
            what,
            WAIT,
            || self.screen(),
            ok,
            |screen| {
                format!(
                    "screen:\n{screen}\n--- with scrollback:\n{}",
                    self.everything()
                )
            },
        )
    }

    /// Waits until `needle` is anywhere, scrollback included (a fast
    /// stream can carry a line past the screen between two looks).
    pub fn wait_seen(&self, needle: &str) -> String {
        common::poll_until(
            &format!("{needle:?} anywhere"),
            WAIT,
            || self.everything(),
            |all| all.contains(needle),
            |all| format!("everything:\n{all}"),
        )
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?}"), |s| s.contains(needle))
    }

    /// Waits until the pane's program exited; returns everything.
    pub fn wait_exit(&self) -> String {
        self.wait_until("the program to exit", |_| {
            self.display("#{pane_dead}") == "1"
        });
        self.everything()
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// Whether every thread of a stopped process was waiting in a blocking
/// system call (not computing or writing a frame) when it stopped.
fn waiting(pid: u32) -> bool {
    // x86-64 numbers: read, poll, select, nanosleep, wait4, futex,
    // clock_nanosleep, epoll_wait, pselect6, ppoll, epoll_pwait, epoll_pwait2.
    const BLOCKING: &[i64] = &[0, 7, 23, 35, 61, 202, 230, 232, 270, 271, 281, 441];
    if !cfg!(target_arch = "x86_64") {
        return true;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|t| {
        std::fs::read_to_string(t.path().join("syscall"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<i64>().ok())
            .is_some_and(|n| BLOCKING.contains(&n))
    })
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// How many lines of `all` contain `needle`.
pub fn count(all: &str, needle: &str) -> usize {
    all.lines().filter(|l| l.contains(needle)).count()
}

/// The script that runs North against `url` with an OpenAI-compatible
/// provider, then prints its exit code.
pub fn north_openai(url: &str, args: &str) -> String {
    format!(
        "OPENAI_BASE_URL='{url}/v1' \"$NORTH\" --provider openai --model local-model {args}; echo EXIT=$?"
    )
}
