//! The interactive loop: terminal set-up and restore, the agent on its own
//! task, input, and frames paced so streaming never floods the terminal.

use std::io::{self, BufWriter, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
    Event as TermEvent, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::{cursor, execute, terminal};
use north_agent::TurnEnd;
use ratatui::layout::Size;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::app::{Action, App, SessionInfo};
use crate::approver::{Inbox, UiMsg};
use crate::backend::{FrameBackend, TtyBackend};
use crate::input::Input;
use crate::term::InlineTerminal;
use crate::worker::{RemoteWorker, SessionSource, WorkerCmd, worker};

mod handover;
mod status;

/// Frames per second while text streams in: fast enough to read as
/// continuous, slow enough that a fast model does not flood the terminal.
pub const STREAM_FPS: u64 = 30;
const SPINNER_TICK: Duration = Duration::from_millis(100);

/// Why the UI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The user quit.
    Quit,
    /// SIGTERM or SIGHUP.
    Terminated,
}

/// Errors of the interactive UI.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// Standard input or output is not a terminal.
    #[error(
        "north needs a terminal for the interactive assistant; use `north exec PROMPT` in scripts and pipes"
    )]
    NotATerminal,
    /// Setting up or writing to the terminal failed.
    #[error("terminal error: {0}")]
    Io(#[from] io::Error),
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back as it was: cooked mode, cursor shown, paste and
/// keyboard modes off. Safe to call more than once and from a panic hook.
pub fn restore_terminal() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        terminal::EndSynchronizedUpdate,
        DisableBracketedPaste,
        DisableFocusChange,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal when dropped, whatever way the loop ends.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
}

/// What the UI starts with.
pub struct Start {
    /// Session shown in the status line.
    pub info: SessionInfo,
    /// Where the session runs.
    pub backend: Backend,
    /// Where prompts and events arrive (from [`crate::approver::channel`]).
    pub inbox: Inbox,
}

/// Where the session the UI shows runs.
pub enum Backend {
    /// In this process.
    Local {
        /// The agent, on its session.
        agent: Box<north_runtime::LiveSession>,
        /// Where `/new`, `/resume` and `/model` open sessions and models.
        sessions: SessionSource,
    },
    /// In a `north serve` this UI is attached to.
    Remote {
        /// Carries the UI's commands to the server.
        worker: Box<dyn RemoteWorker>,
        /// The user's configuration, for keys, theme and notifications.
        config: Box<north_config::Config>,
        /// The conversation so far and the tokens it used.
        history: Vec<north_protocol::Message>,
        /// Tokens used so far.
        usage: north_protocol::Usage,
    },
}

/// Draws a frame if anything changed.
pub fn draw<B: FrameBackend>(term: &mut InlineTerminal<B>, app: &mut App) -> io::Result<()> {
    let size = term.size();
    let lines = app.take_commits(size.width);
    let height = app.live_height(size.width, size.height);
    term.frame(&lines, height, |area, buf| app.render(area, buf))
}

/// The terminal the TUI draws in.
type Tty = InlineTerminal<TtyBackend<BufWriter<Stdout>>>;

struct Loop {
    term: Tty,
    app: App,
    cmds: mpsc::UnboundedSender<WorkerCmd>,
    cancel: Option<CancellationToken>,
    last_draw: Instant,
    /// The user asked for the transcript view.
    open_transcript: bool,
    /// Keys, pastes and resizes.
    input: Input,
    /// Where a clipboard image read off the UI thread is reported.
    inbox: mpsc::UnboundedSender<UiMsg>,
    /// The user's status line command, when they configured one.
    status: Option<status::StatusProgram>,
    /// Desktop notifications while the terminal is unfocused.
    notifier: crate::notify::Notifier,
}

impl Loop {
    fn submit(&mut self, input: String) {
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        let images = self.app.take_images();
        if self
            .cmds
            .send(WorkerCmd::Turn(input, images, cancel))
            .is_err()
        {
            self.app.handle_msg(UiMsg::TurnDone(TurnEnd::ProviderFailed(
                "the agent stopped".into(),
            )));
        }
    }

    /// A key, paste or resize; `Some` when it ends the session.
    async fn on_input(&mut self, ev: TermEvent, inbox: &mut Inbox) -> io::Result<Option<Exit>> {
        let actions = match ev {
            TermEvent::Key(k) => self.app.handle_key(k),
            TermEvent::Paste(text) => {
                self.app.handle_paste(&text);
                Vec::new()
            }
            TermEvent::FocusGained | TermEvent::FocusLost => {
                self.notifier.focus(matches!(ev, TermEvent::FocusGained));
                Vec::new()
            }
            TermEvent::Resize(c, r) => {
                // The event's size is the one when it was queued; a later
                // resize may already have been followed, so the terminal
                // is asked again.
                let (c, r) = terminal::size().unwrap_or((c, r));
                self.follow_size(Size::new(c, r))?;
                Vec::new()
            }
            _ => Vec::new(),
        };
        if let Some(exit) = self.act(actions)? {
            return Ok(Some(exit));
        }
        if std::mem::take(&mut self.open_transcript)
            && let Some(exit) = transcript_view(self, inbox).await?
        {
            return Ok(Some(exit));
        }
        // Keys are drawn at once: typing never waits for a frame.
        if self.app.take_dirty() {
            self.draw_now()?;
        }
        Ok(None)
    }

    /// A message from the worker and whatever else already arrived, in
    /// one frame; `Some` when it ends the session.
    fn on_messages(
        &mut self,
        msg: UiMsg,
        inbox: &mut Inbox,
        frame: Duration,
    ) -> io::Result<Option<Exit>> {
        self.notify(&msg)?;
        let mut actions: Vec<Action> = self.app.handle_msg(msg).into_iter().collect();
        for _ in 0..4096 {
            match inbox.try_recv() {
                Some(m) => {
                    self.notify(&m)?;
                    actions.extend(self.app.handle_msg(m));
                }
                None => break,
            }
        }
        if let Some(exit) = self.act(actions)? {
            return Ok(Some(exit));
        }
        // A steady stream still gets a frame at least every frame period
        // (the spinner and timer move with it).
        if self.app.has_prompt() || self.last_draw.elapsed() >= frame {
            self.app.take_dirty();
            self.draw_now()?;
        }
        Ok(None)
    }

    /// Writes the notification `msg` calls for, if any (between frames,
    /// so it never splits one).
    fn notify(&mut self, msg: &UiMsg) -> io::Result<()> {
        if let Some(bytes) = self.notifier.on(msg) {
            self.term.backend_mut().with_writer(|w| {
                w.write_all(&bytes)?;
                w.flush()
            })??;
        }
        Ok(())
    }

    /// Stops a running turn and has the worker end the session (its
    /// `SessionEnd` hooks run); a worker that cannot finish in time is
    /// stopped. The last frame is drawn.
    async fn stop_worker(&mut self, worker: &mut tokio::task::JoinHandle<()>) {
        if let Some(c) = &self.cancel {
            c.cancel();
        }
        let _ = self.cmds.send(WorkerCmd::End);
        if tokio::time::timeout(std::time::Duration::from_secs(10), &mut *worker)
            .await
            .is_err()
        {
            worker.abort();
        }
        let _ = draw(&mut self.term, &mut self.app);
    }

    /// Runs actions; `Some` when the UI should end.
    fn act(&mut self, actions: Vec<Action>) -> io::Result<Option<Exit>> {
        for action in actions {
            match action {
                Action::Submit(input) => self.submit(input),
                Action::Interrupt => {
                    if let Some(c) = &self.cancel {
                        c.cancel();
                    }
                    // A refusal that ends the turn reaches the agent after
                    // the cancel, so it sends no further request.
                    self.app.release_deferred();
                }
                Action::Quit => {
                    if let Some(c) = &self.cancel {
                        c.cancel();
                    }
                    return Ok(Some(Exit::Quit));
                }
                Action::Suspend => self.suspend()?,
                Action::EditDraft => self.edit_draft()?,
                Action::EditProposal => self.edit_proposal()?,
                Action::ClearScreen => {
                    self.term.clear_screen()?;
                    self.app.screen_cleared();
                }
                Action::Resume(id) => {
                    let _ = self.cmds.send(WorkerCmd::Resume(id));
                }
                Action::Rename(name) => {
                    let _ = self.cmds.send(WorkerCmd::Rename(name));
                }
                Action::New => {
                    let _ = self.cmds.send(WorkerCmd::New);
                }
                Action::Transcript => self.open_transcript = true,
                Action::Rewind(req) => {
                    let _ = self.cmds.send(WorkerCmd::Rewind(req));
                }
                Action::SetMode(mode) => {
                    let _ = self.cmds.send(WorkerCmd::SetMode(mode));
                }
                Action::ListTurns => {
                    let _ = self.cmds.send(WorkerCmd::ListTurns);
                }
                Action::Compact(focus) => {
                    self.run_in_worker(|cancel| WorkerCmd::Compact(focus, cancel))
                }
                Action::SwitchModel(name) => {
                    let _ = self.cmds.send(WorkerCmd::SwitchModel(name));
                }
                Action::Diff => {
                    let _ = self.cmds.send(WorkerCmd::Diff);
                }
                Action::Ps(kill) => {
                    let _ = self.cmds.send(WorkerCmd::Ps(kill));
                }
                Action::Worktree(None) => {
                    let _ = self.cmds.send(WorkerCmd::Worktrees);
                }
                Action::Worktree(Some(name)) => {
                    self.run_in_worker(|_| WorkerCmd::MergeWorktree(name));
                }
                Action::McpAuth(name, logout) => self.mcp_auth(name, logout),
                Action::Plugin(words) => self.plugin(words),
                Action::PasteImage => {
                    // The clipboard tool may take a moment: off the UI thread.
                    let tx = self.inbox.clone();
                    tokio::task::spawn_blocking(move || {
                        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
                        let saved = north_agent::clipboard::save_image(&cwd);
                        let _ = tx.send(UiMsg::ClipboardImage(saved.map_err(|e| e.to_string())));
                    });
                }
                Action::Shell(command) => {
                    self.run_in_worker(|cancel| WorkerCmd::Shell(command, cancel))
                }
            }
        }
        Ok(None)
    }

    /// Sends the worker something that runs like a turn (it can be
    /// interrupted); a worker that is gone ends the turn at once.
    fn run_in_worker(&mut self, cmd: impl FnOnce(CancellationToken) -> WorkerCmd) {
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        if self.cmds.send(cmd(cancel)).is_err() {
            self.app.handle_msg(UiMsg::TurnDone(TurnEnd::ProviderFailed(
                "the agent stopped".into(),
            )));
        }
    }

    /// `/plugin VERB …`, off the UI thread (a fetch takes a while): what it
    /// shows, or why it failed, goes to the transcript.
    fn plugin(&self, words: Vec<String>) {
        let tx = self.inbox.clone();
        let Some(manager) = self.app.info().plugin_manager.0.clone() else {
            return;
        };
        tokio::spawn(async move {
            let msg = match manager(words).await {
                Ok((title, lines)) => UiMsg::Info {
                    title,
                    lines: lines.into_iter().map(ratatui::text::Line::from).collect(),
                },
                Err(why) => UiMsg::Failed(why),
            };
            let _ = tx.send(msg);
        });
    }

    /// `/mcp login|logout NAME`, off the UI thread: the URL and the outcome
    /// show in the transcript.
    fn mcp_auth(&self, name: String, logout: bool) {
        let tx = self.inbox.clone();
        let Some(auth) = self.app.info().mcp_auth.0.clone() else {
            return;
        };
        let say = tx.clone();
        let announce: std::sync::Arc<dyn Fn(String) + Send + Sync> =
            std::sync::Arc::new(move |line| {
                let _ = say.send(UiMsg::Event(north_protocol::Event::Notice {
                    kind: north_protocol::NoticeKind::Login,
                    message: line,
                }));
            });
        tokio::spawn(async move {
            let msg = match auth(name, logout, announce).await {
                Ok(done) => UiMsg::Event(north_protocol::Event::Notice {
                    kind: north_protocol::NoticeKind::Login,
                    message: done,
                }),
                Err(why) => UiMsg::Failed(why),
            };
            let _ = tx.send(msg);
        });
    }

    /// Follows a terminal size change; the resize event can trail the
    /// change by a frame or two, and a frame drawn at the old size would
    /// overwrite the transcript.
    fn follow_size(&mut self, size: Size) -> io::Result<()> {
        if size == self.term.size() {
            return Ok(());
        }
        // The terminal kept the cursor on its line through its reflow.
        let anchor = self.input.cursor_row();
        self.term.backend_mut().set_size(size);
        self.term.resize(size, anchor)?;
        self.app.mark_dirty();
        Ok(())
    }

    fn draw_now(&mut self) -> io::Result<()> {
        if let Ok((cols, rows)) = terminal::size() {
            self.follow_size(Size::new(cols, rows))?;
        }
        // The elapsed timer advances with every frame, not only on the
        // timer branch a busy stream can starve.
        self.app.tick(Instant::now());
        draw(&mut self.term, &mut self.app)?;
        self.last_draw = Instant::now();
        self.refresh_status();
        Ok(())
    }
}

/// Shows the transcript view on the alternate screen until the user closes
/// it (or a prompt needs an answer), then redraws the inline view. Agent
/// events keep arriving meanwhile.
async fn transcript_view(l: &mut Loop, inbox: &mut Inbox) -> io::Result<Option<Exit>> {
    use ratatui::{Terminal, TerminalOptions, Viewport};
    let size = l.term.size();
    let mut pager = crate::pager::Pager::new(l.app.transcript_lines(size.width));
    execute!(io::stdout(), terminal::EnterAlternateScreen)?;
    let backend = TtyBackend::new(BufWriter::with_capacity(1 << 16, io::stdout()), size);
    let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    let mut term = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )?;
    let mut exit = None;
    loop {
        term.draw(|f| pager.render(f.area(), f.buffer_mut()))?;
        tokio::select! {
            ev = l.input.next() => match ev {
                Some(Ok(TermEvent::Key(k))) => {
                    if k.kind != crossterm::event::KeyEventKind::Release
                        && pager.key(k, size.height) == crate::pager::PagerOutcome::Closed
                    {
                        break;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => {
                    exit = Some(Exit::Quit);
                    break;
                }
            },
            msg = inbox.recv() => {
                let Some(msg) = msg else {
                    exit = Some(Exit::Quit);
                    break;
                };
                let prompt = matches!(msg, UiMsg::Prompt(_));
                let actions: Vec<Action> = l.app.handle_msg(msg).into_iter().collect();
                // The view follows the session as it goes on.
                pager.update(l.app.transcript_lines(size.width), size.height);
                if let Some(e) = l.act(actions)? {
                    exit = Some(e);
                    break;
                }
                // A question for the user closes the view so it is seen.
                if prompt {
                    break;
                }
            }
        }
    }
    drop(term);
    execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Hide)?;
    l.app.mark_dirty();
    l.draw_now()?;
    Ok(exit)
}

/// How the UI ended, and the session in use then (which `/resume`, `/new`
/// or `/clear` may have changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Why it ended.
    pub exit: Exit,
    /// The session shown last.
    pub session_id: String,
}

/// Raw mode and North's input modes: bracketed paste, focus reports, the
/// keyboard enhancement where the terminal has it; the cursor hidden.
fn take_terminal(enhanced: bool) -> io::Result<()> {
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    if enhanced {
        execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    execute!(
        stdout,
        EnableBracketedPaste,
        EnableFocusChange,
        cursor::Hide
    )
}

/// The terminal as the TUI took it.
struct Entered {
    term: Tty,
    input: Input,
    answers: crate::input::StartAnswers,
    guard: Guard,
}

/// Puts the terminal in the state the TUI draws in (raw mode, bracketed
/// paste, the keyboard enhancement where it is supported), starts reading
/// it, and builds the inline terminal below the cursor; the guard restores
/// the terminal when dropped.
fn enter_terminal() -> Result<Entered, TuiError> {
    use std::io::IsTerminal;
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    let (cols, rows) = terminal::size()?;
    install_panic_hook();
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard;
    // The questions' answers arrive among the keys typed ahead; the input
    // thread tells them apart and keeps the keys for the composer.
    let input = Input::start()?;
    let answers = input.start_answers();
    take_terminal(answers.keyboard_enhancement)?;

    let size = Size::new(cols, rows);
    let row = answers.row.unwrap_or(rows.saturating_sub(1));
    let backend = TtyBackend::new(BufWriter::with_capacity(1 << 16, io::stdout()), size);
    let mut term = InlineTerminal::new(backend, size, row)?;
    let reflow =
        crate::reflow::Reflow::of_terminal(answers.terminal.as_deref(), |v| std::env::var(v).ok());
    tracing::info!(terminal = ?answers.terminal, ?reflow, "the terminal");
    term.set_reflow(reflow);
    Ok(Entered {
        term,
        input,
        answers,
        guard,
    })
}

/// Runs the interactive assistant until the user quits. The terminal is
/// restored on return, on panic and on SIGTERM/SIGHUP.
pub async fn run(start: Start) -> Result<Ended, TuiError> {
    let Entered {
        term,
        input,
        answers,
        guard: _guard,
    } = enter_terminal()?;
    let mut app = App::new(start.info);
    app.set_keyboard_enhanced(answers.keyboard_enhancement);
    app.start_header();

    let Start {
        backend, mut inbox, ..
    } = start;
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (config, status_line, history, agent_tools, usage, mut worker) = match backend {
        Backend::Local { agent, sessions } => {
            let config = sessions.sessions.project().config.clone();
            let status_line = sessions.sessions.status_line().cloned();
            let history = agent.messages().to_vec();
            let tools = agent.describer();
            let usage = agent.total_usage();
            let task = tokio::spawn(worker(*agent, sessions, cmd_rx, inbox.sender()));
            (config, status_line, history, tools, usage, task)
        }
        Backend::Remote {
            worker,
            config,
            history,
            usage,
        } => {
            let task = tokio::spawn(worker.serve(cmd_rx, inbox.sender()));
            let tools = north_agent::Describer::builtin();
            (*config, None, history, tools, usage, task)
        }
    };
    app.set_keybindings(config.keybindings.clone());
    crate::style::set_theme(crate::style::Theme::chosen(
        config.theme.value,
        answers.background.map(crate::decode::Rgb::is_light),
        |k| std::env::var(k).ok(),
    ));
    let notifier =
        crate::notify::Notifier::new(config.notifications.value, |k| std::env::var(k).ok());
    if !history.is_empty() {
        let id = app.info().session_id.clone();
        app.handle_msg(UiMsg::Resumed {
            session_id: id,
            messages: history,
            tools: agent_tools,
            usage,
        });
    }

    let mut l = Loop {
        term,
        app,
        cmds: cmd_tx,
        cancel: None,
        last_draw: Instant::now(),
        open_transcript: false,
        input,
        inbox: inbox.sender(),
        status: status_line.map(status::StatusProgram::new),
        notifier,
    };
    l.draw_now()?;

    let exit = serve(&mut l, &mut inbox).await?;
    l.stop_worker(&mut worker).await;
    l.term.finish()?;
    drop(_guard);
    Ok(Ended {
        exit,
        session_id: l.app.info().session_id.clone(),
    })
}

/// Reads keys and the agent's messages and draws, until the session ends.
async fn serve(l: &mut Loop, inbox: &mut Inbox) -> Result<Exit, TuiError> {
    #[cfg(unix)]
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    #[cfg(unix)]
    let mut sighup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    let frame = Duration::from_millis(1000 / STREAM_FPS);

    let exit = loop {
        let due = if l.app.is_dirty() {
            Some(l.last_draw + frame)
        } else if l.app.is_busy() {
            Some(l.last_draw + SPINNER_TICK)
        } else {
            // An idle screen wakes only to take a timed hint away.
            l.app.hint_expiry()
        };
        let terminated = async {
            #[cfg(unix)]
            {
                tokio::select! {
                    _ = sigterm.recv() => {},
                    _ = sighup.recv() => {},
                }
            }
            #[cfg(not(unix))]
            futures::future::pending::<()>().await
        };
        tokio::select! {
            biased;
            _ = terminated => break Exit::Terminated,
            ev = l.input.next() => {
                let Some(ev) = ev else { break Exit::Quit };
                if let Some(exit) = l.on_input(ev?, inbox).await? {
                    break exit;
                }
            }
            msg = inbox.recv() => {
                let Some(msg) = msg else { break Exit::Quit };
                if let Some(exit) = l.on_messages(msg, inbox, frame)? {
                    break exit;
                }
            }
            _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now).into()), if due.is_some() => {
                l.app.tick(Instant::now());
                if l.app.take_dirty() {
                    l.draw_now()?;
                } else {
                    l.last_draw = Instant::now();
                }
            }
        }
    };
    Ok(exit)
}
