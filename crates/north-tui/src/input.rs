//! Terminal input on a thread of its own: keys, pastes and resizes for the
//! loop, and the questions North asks the terminal (the cursor's row when
//! it starts and after a resize, the keyboard protocol, the background).
//!
//! One thread owns the terminal's input: it reads the bytes itself
//! (decoded by `decode`), asks its questions between two short polls and
//! tells their answers from the keys typed around them, with every signal
//! blocked on it, so neither a resize nor a child's exit can cut a wait
//! short. A resize is seen as a changed size after each poll.

use std::io::{self, Write};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use crossterm::event::Event;
use tokio::sync::mpsc;

use crate::decode::{Decoded, Decoder, Rgb};

/// How long one poll waits before the thread looks for a query.
const POLL: Duration = Duration::from_millis(40);
/// How long an ESC at the end of a read waits for the rest of a sequence.
const ESC_WAIT: Duration = Duration::from_millis(25);
/// How long a question waits for the terminal's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// What the loop asks of the input thread between two polls.
enum Request {
    /// The cursor's row, answered on the sender.
    CursorRow(std_mpsc::Sender<Option<u16>>),
    /// The questions asked at start, answered on the sender.
    Start(std_mpsc::Sender<StartAnswers>),
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
    /// Starts reading the controlling terminal (standard input when there
    /// is none), which is in raw mode.
    pub fn start() -> io::Result<Input> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .open("/dev/tty")
            .or_else(|_| {
                use std::os::fd::AsFd;
                io::stdin()
                    .as_fd()
                    .try_clone_to_owned()
                    .map(std::fs::File::from)
            })?;
        let (tx, events) = mpsc::unbounded_channel();
        let (queries, asked) = std_mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("north-input".into())
            .spawn(move || {
                block_signals();
                read_loop(&tty, &tx, &asked);
            })?;
        Ok(Input { events, queries })
    }

    /// Asks the terminal where the cursor is, whether it speaks the kitty
    /// keyboard protocol and what its background is; keys typed meanwhile
    /// stay queued for the loop.
    pub(crate) fn start_answers(&self) -> StartAnswers {
        let (tx, rx) = std_mpsc::channel();
        if self.queries.send(Request::Start(tx)).is_err() {
            return StartAnswers::default();
        }
        rx.recv_timeout(ANSWER_WAIT + Duration::from_secs(1))
            .unwrap_or_default()
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

fn read_loop(
    tty: &std::fs::File,
    tx: &mpsc::UnboundedSender<io::Result<Event>>,
    asked: &std_mpsc::Receiver<Request>,
) {
    let mut reader = Reader {
        tty,
        decoder: Decoder::default(),
        tx,
        size: crossterm::terminal::size().ok(),
    };
    loop {
        while let Ok(request) = asked.try_recv() {
            match request {
                Request::CursorRow(reply) => {
                    let _ = reply.send(reader.cursor_row());
                }
                Request::Start(reply) => {
                    let _ = reply.send(reader.start_answers());
                }
                Request::Pause(ack, resumed) => {
                    let _ = ack.send(());
                    // Ends with an error once the guard is dropped.
                    let _ = resumed.recv();
                }
            }
        }
        match reader.read(POLL, &mut |_| false) {
            Ok(_) => {
                if reader.tx.is_closed() {
                    return;
                }
            }
            Err(e) => {
                let _ = reader.tx.send(Err(e));
                return;
            }
        }
    }
}

/// What the terminal answered when North started.
#[derive(Debug, Clone, Default)]
pub(crate) struct StartAnswers {
    /// The cursor's row.
    pub row: Option<u16>,
    /// The terminal speaks the kitty keyboard protocol.
    pub keyboard_enhancement: bool,
    /// The terminal's background colour.
    pub background: Option<Rgb>,
    /// The terminal's name and version, if it answered XTVERSION.
    pub terminal: Option<String>,
}

/// The input thread's reading: the terminal, the decoder, where events go.
struct Reader<'a> {
    tty: &'a std::fs::File,
    decoder: Decoder,
    tx: &'a mpsc::UnboundedSender<io::Result<Event>>,
    /// The size last reported, to report a change as a resize.
    size: Option<(u16, u16)>,
}

impl Reader<'_> {
    /// Waits up to `wait` for input and decodes it: events go to the loop,
    /// answers to `answer`, which says whether the one awaited came
    /// (`Ok(true)`). A changed terminal size is reported as a resize.
    fn read(
        &mut self,
        wait: Duration,
        answer: &mut dyn FnMut(Decoded) -> bool,
    ) -> io::Result<bool> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        match readable(self.tty, wait) {
            Ok(true) => {
                use std::io::Read;
                let n = match (&mut &*self.tty).read(&mut buf) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the terminal closed",
                        ));
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(e),
                };
                self.decoder.feed(&buf[..n], &mut out);
                // An ESC at the end of a read may begin a sequence whose
                // rest is on its way; a short wait tells the two apart.
                if self.decoder.has_pending() && !matches!(readable(self.tty, ESC_WAIT), Ok(true)) {
                    self.decoder.flush(&mut out);
                }
            }
            Ok(false) => self.decoder.flush(&mut out),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        let mut done = false;
        for item in out {
            match item {
                Decoded::Event(ev) => {
                    let _ = self.tx.send(Ok(ev));
                }
                other => done |= answer(other),
            }
        }
        let size = crossterm::terminal::size().ok();
        if size.is_some() && size != self.size {
            self.size = size;
            if let Some((c, r)) = size {
                let _ = self.tx.send(Ok(Event::Resize(c, r)));
            }
        }
        Ok(done)
    }

    /// Writes `question` and reads until `answer` says the awaited answer
    /// came, or the time is up; keys read meanwhile go to the loop.
    fn ask(&mut self, question: &str, answer: &mut dyn FnMut(Decoded) -> bool) {
        let mut out = io::stdout();
        if out
            .write_all(question.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
        let deadline = Instant::now() + ANSWER_WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.read(left.min(POLL), answer) {
                Ok(true) | Err(_) => return,
                Ok(false) => {}
            }
        }
    }

    fn cursor_row(&mut self) -> Option<u16> {
        let mut row = None;
        self.ask("\x1b[6n", &mut |d| match d {
            Decoded::CursorPosition { row: r, .. } => {
                row = Some(r);
                true
            }
            _ => false,
        });
        row
    }

    /// The cursor's row, the keyboard protocol, the background colour and
    /// the terminal's name, asked together; the device attributes question
    /// after them is one every terminal answers, so its answer ends the
    /// wait.
    fn start_answers(&mut self) -> StartAnswers {
        let mut answers = StartAnswers::default();
        self.ask(
            "\x1b[6n\x1b[?u\x1b]11;?\x1b\\\x1b[>0q\x1b[c",
            &mut |d| match d {
                Decoded::CursorPosition { row, .. } => {
                    answers.row = Some(row);
                    false
                }
                Decoded::KeyboardFlags => {
                    answers.keyboard_enhancement = true;
                    false
                }
                Decoded::Background(rgb) => {
                    answers.background = Some(rgb);
                    false
                }
                Decoded::TerminalName(name) => {
                    answers.terminal = Some(name);
                    false
                }
                Decoded::DeviceAttributes => true,
                Decoded::Event(_) => false,
            },
        );
        answers
    }
}

/// Whether the terminal has bytes to read within `wait`.
fn readable(tty: &std::fs::File, wait: Duration) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut fds = [libc::pollfd {
        fd: tty.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    let millis = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `fds` is a valid array of one pollfd for the call's length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, millis) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n > 0)
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
