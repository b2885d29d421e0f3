//! Keys typed while North starts are kept for the composer, not echoed.
//!
//! Opening a project can take a moment (a local model server asked for its
//! context window answers slowly); what the user types meanwhile would be
//! echoed by the terminal above North's header and then arrive in the
//! composer a second time. So the terminal's echo is off from the start of
//! the interactive assistant until the TUI takes the terminal (the keys
//! wait in the terminal's queue and reach the composer), and is turned
//! back on for the trust question and whenever North returns.
//!
//! The wait itself is shown: what North waits for is written, dimmed, on
//! the line the first screen will take, and erased when the wait ends.

#[cfg(unix)]
use std::sync::Mutex;

/// The terminal's settings before echo was turned off.
#[cfg(unix)]
static SAVED: Mutex<Option<libc::termios>> = Mutex::new(None);

/// Echo off while it lives; back on when dropped.
pub struct Quiet(());

/// Turns the terminal's echo off (standard input a terminal only) until
/// the guard is dropped.
pub fn quiet() -> Quiet {
    silence();
    Quiet(())
}

fn silence() {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        let Ok(mut saved) = SAVED.lock() else {
            return;
        };
        // Already quiet: the settings to go back to are kept.
        if saved.is_some() || !std::io::stdin().is_terminal() {
            return;
        }
        // SAFETY: tcgetattr/tcsetattr on fd 0 with a zeroed termios the
        // call fills in; no other memory is touched.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) == 0 {
                let mut quiet = t;
                quiet.c_lflag &= !(libc::ECHO | libc::ECHONL);
                if libc::tcsetattr(0, libc::TCSANOW, &quiet) == 0 {
                    *saved = Some(t);
                }
            }
        }
    }
}

/// Runs `f` with the terminal's echo as it was (a question the user
/// answers by typing).
pub fn with_echo<T>(f: impl FnOnce() -> T) -> T {
    restore();
    let out = f();
    silence();
    out
}

fn restore() {
    #[cfg(unix)]
    if let Ok(mut saved) = SAVED.lock()
        && let Some(t) = saved.take()
    {
        // SAFETY: tcsetattr on fd 0 with settings tcgetattr returned.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &t);
        }
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        restore();
    }
}

/// Shows what North waits for as it starts (a local server asked for its
/// context window) on the line its first screen will take, dimmed, and
/// erases it when the wait ends: a slow server never leaves the terminal
/// blank. Standard output a terminal only.
pub fn show_waits() {
    use std::io::{IsTerminal, Write};
    if !std::io::stdout().is_terminal() {
        return;
    }
    north_runtime::provider::on_probe(Box::new(|what| {
        let mut out = std::io::stdout();
        let _ = match what {
            Some(what) => write!(out, "\r\x1b[2K\x1b[2m⋯ North is starting: {what}\x1b[0m\r"),
            None => write!(out, "\r\x1b[2K"),
        };
        let _ = out.flush();
    }));
}
