//! Terminal input on a thread of its own: keys, pastes and resizes for the
//! loop, and the one cursor-position query a resize needs.
//!
//! crossterm has a single input reader. Its async stream keeps it locked
//! while it waits and ends waits early on a wake-up, which made a query's
//! answer unreadable or left it to be read as the next query's. Here one
//! thread owns the reader: it asks the terminal between two short polls,
//! with every signal blocked on it, so neither a resize nor a child's exit
//! can cut a wait short.

use std::io;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use crossterm::event::{self, Event};
use tokio::sync::mpsc;

/// How long one poll waits before the thread looks for a query.
const POLL: Duration = Duration::from_millis(40);

/// What the loop asks of the input thread between two polls.
enum Request {
    /// The cursor's row, answered on the sender.
    CursorRow(std_mpsc::Sender<Option<u16>>),
    /// Stop reading: say so on the first sender, then wait until the
    /// second channel ends (another program has the terminal meanwhile).
    Pause(std_mpsc::Sender<()>, std_mpsc::Receiver<()>),
}

/// The input thread's handle.
pub(crate) struct Input {
    events: mpsc::UnboundedReceiver<io::Result<Event>>,
    queries: std_mpsc::Sender<Request>,
}

/// Input paused while it is alive; reading resumes when it is dropped.
pub(crate) struct Paused {
    _resume: std_mpsc::Sender<()>,
}

impl Input {
    /// Starts reading.
    pub fn start() -> io::Result<Input> {
        let (tx, events) = mpsc::unbounded_channel();
        let (queries, asked) = std_mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("north-input".into())
            .spawn(move || {
                block_signals();
                read_loop(&tx, &asked);
            })?;
        Ok(Input { events, queries })
    }

    /// The next event; `None` once input ended.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        self.events.recv().await
    }

    /// The cursor's row as the terminal reports it now.
    pub(crate) fn cursor_row(&self) -> Option<u16> {
        let (tx, rx) = std_mpsc::channel();
        self.queries.send(Request::CursorRow(tx)).ok()?;
        rx.recv_timeout(Duration::from_secs(3)).ok().flatten()
    }

    /// Stops reading the terminal until the guard is dropped, so a program
    /// North hands the terminal to gets every key. Returns once the thread
    /// is out of its poll (`None`: the thread is gone).
    pub(crate) fn pause(&self) -> Option<Paused> {
        let (ack, acked) = std_mpsc::channel();
        let (resume, resumed) = std_mpsc::channel();
        self.queries.send(Request::Pause(ack, resumed)).ok()?;
        acked.recv_timeout(Duration::from_secs(3)).ok()?;
        Some(Paused { _resume: resume })
    }
}

fn read_loop(tx: &mpsc::UnboundedSender<io::Result<Event>>, asked: &std_mpsc::Receiver<Request>) {
    loop {
        while let Ok(request) = asked.try_recv() {
            match request {
                Request::CursorRow(reply) => {
                    let row = crossterm::cursor::position().ok().map(|(_, row)| row);
                    let _ = reply.send(row);
                }
                Request::Pause(ack, resumed) => {
                    let _ = ack.send(());
                    // Ends with an error once the guard is dropped.
                    let _ = resumed.recv();
                }
            }
        }
        match event::poll(POLL) {
            Ok(true) => {
                let ev = event::read();
                let failed = ev.is_err();
                if tx.send(ev).is_err() || failed {
                    return;
                }
            }
            Ok(false) => {
                if tx.is_closed() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// Blocks every catchable signal on the calling thread, so they are
/// delivered to the others.
fn block_signals() {
    #[cfg(unix)]
    // SAFETY: `all` is a plain value initialised by sigfillset before use;
    // the old mask is not needed.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    }
}
