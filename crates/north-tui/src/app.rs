//! The UI state machine: agent events and prompts in, key presses in,
//! actions for the runner out. No I/O besides the small reads slash commands
//! make; rendering lives in `view`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use north_agent::TurnEnd;
use north_protocol::{ApprovalDecision, ApprovalKind, Message, Usage};
use ratatui::text::Line;

use crate::approver::{Prompt, PromptKind, UiMsg};
use crate::composer::Composer;
pub(crate) use crate::prompt::{Choice, Pending};
use crate::transcript::Item;
use north_protocol::FileDiff;

/// What the session is, for the status line and `/model`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionInfo {
    /// North's version, for the start header (empty: not shown).
    pub version: String,
    /// Project root.
    pub root: PathBuf,
    /// The permission mode at start.
    pub mode: north_protocol::PermissionMode,
    /// The modes Shift+Tab cycles through (those this front end can enter).
    pub modes: Vec<north_protocol::PermissionMode>,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Session id.
    pub session_id: String,
    /// The model's context window in tokens, for the "context used" figure.
    pub context_window: Option<u64>,
    /// The model's catalogue entry, when known: its prices give the cost.
    pub catalog: Option<&'static north_llm::ModelInfo>,
    /// The MCP servers' state, for `/mcp`.
    pub mcp: crate::hooks::McpView,
    /// `/mcp login NAME` and `/mcp logout NAME`.
    pub mcp_auth: crate::hooks::McpAuth,
    /// Custom commands (`.north/commands/*.md`, the user's), for the palette.
    pub commands: Vec<north_agent::commands::CustomCommand>,
    /// The project's files, for the `@` picker.
    pub files: crate::hooks::FileFinder,
    /// Whether the project's own settings apply (workspace trust), for
    /// `/status`.
    pub trust: Option<String>,
    /// The instruction files the model is given (`AGENTS.md`, `CLAUDE.md`,
    /// …), one each with where it came from, for the header and `/status`.
    pub instructions: Vec<String>,
    /// The user's global memory file, which the model also receives, for
    /// `/memory` (none: not shown).
    pub global_memory: Option<PathBuf>,
    /// The hooks that run, for `/hooks`.
    pub hooks: north_agent::hooks::HookSet,
    /// The project's hooks that do not run (it is not trusted), one line
    /// each, for `/hooks`.
    pub hooks_not_run: Vec<String>,
    /// The models the provider serves (its `/models` list, the user's
    /// config), for `/model` completion beside the catalogue's.
    pub provider_models: crate::hooks::ModelLister,
    /// The agents the `agent` tool offers, one line each, for `/agents`.
    pub agents: Vec<String>,
    /// The skills, one line each, for `/agents`.
    pub skills: Vec<String>,
    /// A project's agents and skills that are not used (it is not
    /// trusted), one line each.
    pub agents_not_used: Vec<String>,
    /// The installed plugins, one line each (on or off here, what each
    /// adds), for `/plugin`.
    pub plugins: Vec<String>,
    /// What `/plugin install …` and the other verbs call.
    pub plugin_manager: crate::hooks::PluginManager,
}

/// How soon a second Ctrl+C must follow the first to quit.
pub(crate) const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// The hint a first Ctrl+C on an idle, empty composer shows.
pub(crate) const QUIT_HINT: &str = "Press ctrl+c again to quit (or ctrl+d)";

/// What the runner must do after input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Run a turn with this input.
    Submit(String),
    /// Cancel the running turn.
    Interrupt,
    /// Leave.
    Quit,
    /// Stop North like any job (Ctrl+Z); `fg` brings it back.
    Suspend,
    /// Edit the draft in the user's `$VISUAL`/`$EDITOR` (Ctrl+G).
    EditDraft,
    /// Open the edit under review in the user's editor, then accept what
    /// they save (`e` at an edit review).
    EditProposal,
    /// Clear the terminal's screen (not the session).
    ClearScreen,
    /// Switch to this session.
    Resume(String),
    /// Start a new conversation (`/new`, `/clear`).
    New,
    /// Open the full-screen transcript view.
    Transcript,
    /// Run this command the user typed after `!` in the project shell.
    Shell(String),
    /// Undo or rewind (`/undo`, `/rewind N …`).
    Rewind(crate::rewind::RewindRequest),
    /// List the session's turns (`/rewind`).
    ListTurns,
    /// Switch the permission mode (Shift+Tab).
    SetMode(north_protocol::PermissionMode),
    /// Condense the conversation now, keeping what the focus names
    /// (`/compact [focus]`).
    Compact(Option<String>),
    /// Continue on this model (`/model NAME`); the provider follows from
    /// the name.
    SwitchModel(String),
    /// Show what this session changed (`/diff`).
    Diff,
    /// List the background commands, or kill one (`/ps [kill ID]`).
    Ps(Option<String>),
    /// North's worktrees (`/worktree`), or review one's changes into this
    /// tree (`/worktree merge NAME`).
    Worktree(Option<String>),
    /// Attach the image on the system clipboard (Ctrl+V).
    PasteImage,
    /// Log in to an MCP server (`/mcp login NAME`), or out (`true`).
    McpAuth(String, bool),
    /// `/plugin VERB ARGS…`: the words after `/plugin`.
    Plugin(Vec<String>),
    /// Name the session (`/rename NAME`; empty: remove the name).
    Rename(String),
}

/// What a picker chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PickerKind {
    /// A session to resume (`/resume`): entries are (id, label).
    Resume,
    /// A turn to rewind to (`/rewind`, Esc Esc): entries are (turn, prompt).
    Rewind,
}

/// The `/resume` or `/rewind` picker.
#[derive(Debug)]
pub(crate) struct Picker {
    pub kind: PickerKind,
    pub sessions: Vec<(String, String)>,
    /// A dim note after each entry (a turn's "code undone"); may be empty.
    pub notes: Vec<String>,
    pub selected: usize,
}

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    pub(crate) info: SessionInfo,
    pub(crate) items: Vec<Item>,
    pub(crate) committed: usize,
    /// No item was printed since the screen was cleared.
    pub(crate) fresh_screen: bool,
    /// The answer being streamed.
    pub(crate) stream: crate::stream::Stream,
    /// Assistant items whose first bytes were printed while they streamed:
    /// item index → bytes printed.
    pub(crate) partly_printed: HashMap<usize, usize>,
    pub(crate) composer: Composer,
    pub(crate) pending: Option<Pending>,
    pub(crate) picker: Option<Picker>,
    /// The command palette or `@` file picker over the composer.
    pub(crate) popup: Option<crate::popup::Popup>,
    /// The composer text the user closed the popup for (Esc).
    pub(crate) popup_dismissed: Option<String>,
    /// Sessions listed for `/resume` completion while it is open.
    pub(crate) session_cache: Option<Vec<(String, String)>>,
    /// The model's plan as a checklist.
    pub(crate) checklist: crate::checklist::Checklist,
    pub(crate) busy_since: Option<Instant>,
    pub(crate) elapsed: Duration,
    /// When (on the working clock) the announced retry is sent.
    pub(crate) retry_due: Option<Duration>,
    pub(crate) tokens: u64,
    /// Usage over the session (input, output, cache), for the status line.
    pub(crate) usage_total: Usage,
    /// Tokens the last request's context held (its input, cached included).
    pub(crate) context_used: u64,
    /// Bytes streamed since the last usage report: the status line counts
    /// them (about 4 bytes a token) so the number moves with the stream.
    pub(crate) streamed_bytes: u64,
    /// The last lines of the running command's output (stdout and stderr,
    /// in arrival order), shown live until its result arrives.
    pub(crate) live_output: crate::live::LiveLines,
    pub(crate) queued: VecDeque<String>,
    /// When a first Ctrl+C asked for a second to quit.
    pub(crate) quit_armed: Option<Instant>,
    /// A refusal to send once the turn is cancelled (a prompt answered
    /// with "stop": the agent must see the cancel before the answer, so it
    /// sends no further request).
    pub(crate) deferred_reply: Option<(
        tokio::sync::oneshot::Sender<ApprovalDecision>,
        ApprovalDecision,
    )>,
    pub(crate) interrupting: bool,
    pub(crate) hint: Option<String>,
    pub(crate) keyboard_enhanced: bool,
    /// Terminal height of the last layout, so drawing lays out the same.
    pub(crate) screen_h: std::cell::Cell<u16>,
    pub(crate) diffs: HashMap<String, Vec<FileDiff>>,
    /// What each running sub-agent did, by its `agent` call: shown
    /// collapsed under the call's result (its details expand it).
    pub(crate) agent_logs: HashMap<String, Vec<String>>,
    pub(crate) requests: HashMap<String, (ApprovalKind, String)>,
    /// The full output of each tool result, by its item's index, for the
    /// transcript view (the timeline shows a summary).
    pub(crate) full_output: std::collections::HashMap<usize, String>,
    pub(crate) dirty: bool,
    /// The first line of the user's status line command, shown in place
    /// of North's own status parts (None: none configured or no answer
    /// yet; an error is shown as a short note).
    pub(crate) programmed_status: Option<String>,
    /// A draft put aside with Ctrl+S.
    pub(crate) stashed: Option<String>,
    /// A Ctrl+R search through history, while it is open.
    pub(crate) search: Option<crate::composer::HistorySearch>,
    /// The keys the user rebound.
    pub(crate) keybindings: north_config::keys::KeyBindings,
    /// The words the user refused a call with, by call id, until its
    /// decision is shown.
    pub(crate) reasons: HashMap<String, String>,
    /// Long pastes in the composer: (placeholder, text).
    pub(crate) pastes: Vec<(String, String)>,
    /// Servers' forms waiting for the user, the first on screen.
    pub(crate) forms: std::collections::VecDeque<crate::form::FormState>,
    /// Image files pasted for the next message (`[Image #1]`).
    pub(crate) images: Vec<PathBuf>,
    /// Background commands running, as of the last turn (`/ps`).
    /// Hosts this turn's commands reached (true) or were refused
    /// (false) through North's network proxy, for the status line.
    pub(crate) turn_hosts: Vec<(String, bool)>,
    pub(crate) background: usize,
    /// When Esc was last pressed on an idle, empty composer (Esc Esc opens
    /// the rewind picker).
    pub(crate) last_esc: Option<Instant>,
}

impl App {
    /// A fresh UI for `info`.
    pub fn new(info: SessionInfo) -> Self {
        App {
            info,
            items: Vec::new(),
            committed: 0,
            fresh_screen: true,
            stream: Default::default(),
            partly_printed: HashMap::new(),
            composer: Composer::default(),
            pending: None,
            picker: None,
            popup: None,
            popup_dismissed: None,
            session_cache: None,
            checklist: Default::default(),
            busy_since: None,
            elapsed: Duration::ZERO,
            retry_due: None,
            tokens: 0,
            usage_total: Usage::default(),
            context_used: 0,
            streamed_bytes: 0,
            live_output: Default::default(),
            queued: VecDeque::new(),
            quit_armed: None,
            deferred_reply: None,
            interrupting: false,
            hint: None,
            keyboard_enhanced: false,
            screen_h: std::cell::Cell::new(0),
            diffs: HashMap::new(),
            agent_logs: HashMap::new(),
            requests: HashMap::new(),
            full_output: Default::default(),
            dirty: true,
            programmed_status: None,
            stashed: None,
            search: None,
            keybindings: Default::default(),
            reasons: HashMap::new(),
            pastes: Vec::new(),
            images: Vec::new(),
            forms: Default::default(),
            background: 0,
            turn_hosts: Vec::new(),
            last_esc: None,
        }
    }

    /// The session shown.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// Records whether the terminal reports Shift+Enter (kitty protocol).
    pub(crate) fn set_keyboard_enhanced(&mut self, on: bool) {
        self.keyboard_enhanced = on;
    }

    /// Whether a turn is running.
    pub(crate) fn is_busy(&self) -> bool {
        self.busy_since.is_some()
    }

    /// Whether a prompt waits for the user.
    pub fn has_prompt(&self) -> bool {
        self.pending.is_some()
    }

    /// The composer's text.
    pub fn composer_text(&self) -> String {
        self.composer.text()
    }

    /// Puts `text` in the composer (what the user's editor saved).
    pub(crate) fn set_composer_text(&mut self, text: &str) {
        self.composer.set_text(text);
        self.dirty = true;
    }

    /// A one-line note beside the composer until the next key.
    pub(crate) fn set_hint(&mut self, hint: String) {
        self.hint = Some(hint);
        self.dirty = true;
    }

    /// Whether something changed since the last [`App::take_dirty`].
    pub(crate) fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// Whether something changed that is not drawn yet.
    pub(crate) fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Marks the screen as needing a redraw.
    pub(crate) fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Items of the transcript so far (printed or not).
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// When the "press ctrl+c again" hint goes away (None: it is not shown).
    pub fn hint_expiry(&self) -> Option<Instant> {
        let quit_hint = self
            .hint
            .as_deref()
            .is_some_and(|h| h.starts_with(QUIT_HINT));
        self.quit_armed
            .filter(|_| quit_hint)
            .map(|at| at + QUIT_WINDOW)
    }

    /// Advances the clock of the working indicator; `true` if what it
    /// shows changed.
    pub fn tick(&mut self, now: Instant) -> bool {
        // The quit hint lasts exactly as long as a second Ctrl+C would quit.
        if self.hint_expiry().is_some_and(|at| now >= at) {
            self.hint = None;
            self.quit_armed = None;
            self.dirty = true;
        }
        let Some(since) = self.busy_since else {
            return self.dirty;
        };
        let before = (self.elapsed.as_millis() / 100, self.elapsed.as_secs());
        self.elapsed = now.saturating_duration_since(since);
        let after = (self.elapsed.as_millis() / 100, self.elapsed.as_secs());
        if before != after {
            self.dirty = true;
        }
        before != after
    }

    pub(crate) fn push(&mut self, item: Item) {
        self.items.push(item);
        self.dirty = true;
    }

    /// Adds a notice (slash command output, a note from North).
    pub fn notice(&mut self, title: impl Into<String>, body: Vec<Line<'static>>) {
        self.push(Item::Notice {
            title: title.into(),
            body,
        });
    }

    pub(crate) fn finish_stream(&mut self) {
        if let Some(block) = self.stream.finish() {
            self.push_block(block);
        }
    }

    pub(crate) fn push_block(&mut self, block: crate::stream::Block) {
        if block.printed > 0 {
            self.partly_printed.insert(self.items.len(), block.printed);
        }
        self.push(Item::Assistant(block.text));
    }

    /// Starts the working indicator for a turn the runner starts.
    pub fn start_turn(&mut self, input: &str) {
        self.push(Item::User(input.to_string()));
        self.turn_hosts.clear();
        self.busy_since = Some(Instant::now());
        self.elapsed = Duration::ZERO;
        self.interrupting = false;
    }

    /// Handles a message from the agent side; may produce an action (a
    /// queued input to send now that a turn ended).
    pub fn handle_msg(&mut self, msg: UiMsg) -> Option<Action> {
        self.dirty = true;
        match msg {
            UiMsg::Event(e) => self.handle_event(e),
            UiMsg::Prompt(p) => self.handle_prompt(p),
            UiMsg::TurnDone(end) => return self.turn_done(&end),
            UiMsg::Resumed {
                session_id,
                messages,
                tools,
                usage,
            } => self.resumed(session_id, &messages, &tools, &usage),
            UiMsg::Turns(turns) => {
                // Newest first: the turn one usually goes back to.
                let (sessions, notes) = turns
                    .into_iter()
                    .rev()
                    .map(|(n, prompt, note)| ((n.to_string(), prompt), note))
                    .unzip();
                self.picker = Some(Picker {
                    kind: PickerKind::Rewind,
                    sessions,
                    notes,
                    selected: 0,
                });
            }
            UiMsg::Background(n) => self.background = n,
            UiMsg::StatusLine(line) => {
                let line = line.unwrap_or_else(|why| format!("status line: {why}"));
                // What a command printed never reaches the terminal as
                // control sequences (a path it echoes may hold some).
                let line: String = line.chars().filter(|c| !c.is_control()).collect();
                if self.programmed_status.as_ref() != Some(&line) {
                    self.programmed_status = Some(line);
                    self.dirty = true;
                }
            }
            UiMsg::Form(form, reply) => {
                self.forms
                    .push_back(crate::form::FormState::new(form, reply));
            }
            UiMsg::ClipboardImage(Ok(path)) => self.attach_image(path),
            UiMsg::ClipboardImage(Err(why)) => self.hint = Some(why),
            UiMsg::Retrying(n) => {
                // The countdown is drawn from the clock (see `retry_line`).
                self.retry_due = Some(self.elapsed + n.delay);
                self.hint = Some(format!(
                    "retrying {}/{} · {}",
                    n.retry,
                    n.max,
                    crate::wrap::truncate(&n.reason, 60)
                ));
            }
            UiMsg::Started { session_id } => {
                let previous = std::mem::replace(&mut self.info.session_id, session_id.clone());
                self.usage_total = Usage::default();
                self.tokens = 0;
                self.context_used = 0;
                self.streamed_bytes = 0;
                let body = if previous.is_empty() {
                    Vec::new()
                } else {
                    vec![Line::from(format!(
                        "the last one stays: /resume {previous} (or north --resume {previous})"
                    ))]
                };
                self.notice(format!("New conversation · session {session_id}"), body);
            }
            UiMsg::Failed(message) => self.push(Item::Error(message)),
            UiMsg::Info { title, lines } => self.notice(title, lines),
            UiMsg::ModeSet(mode) => {
                self.info.mode = mode;
                self.hint = Some(format!("mode: {mode} · shift+tab cycles"));
            }
            UiMsg::ModelSet {
                provider,
                model,
                context_window,
            } => {
                self.info.catalog = north_llm::catalog::lookup(&model);
                self.info.provider = provider;
                self.info.model = model;
                self.info.context_window = Some(context_window);
            }
        }
        None
    }

    /// Shows a prompt for the user's decision.
    pub(crate) fn handle_prompt(&mut self, prompt: Prompt) {
        self.finish_stream();
        if let PromptKind::Edit { files } = &prompt.kind {
            self.diffs.insert(prompt.call_id.clone(), files.clone());
        }
        if let Some(old) = self.pending.take()
            && let Some(reply) = old.reply
        {
            // Only one prompt can be answered at a time; an older one is refused.
            let _ = reply.send(old.kind.refusal());
        }
        self.pending = Some(Pending::new(
            prompt.call_id,
            prompt.kind,
            Some(prompt.reply),
            prompt.feedback,
            prompt.review,
            self.elapsed,
        ));
        self.composer.set_focused(false);
        self.dirty = true;
    }

    fn turn_done(&mut self, end: &TurnEnd) -> Option<Action> {
        self.finish_stream();
        self.busy_since = None;
        // The interrupt's and the retry's hints end with the turn.
        let interrupted = std::mem::take(&mut self.interrupting);
        if self.hint.as_deref().is_some_and(|h| {
            h.starts_with("retrying ")
                || h.starts_with("Queued")
                || (interrupted && h.starts_with("Interrupting"))
        }) {
            self.hint = None;
        }
        self.release_deferred();
        if let Some(p) = self.pending.take()
            && let Some(reply) = p.reply
        {
            let _ = reply.send(p.kind.refusal());
        }
        self.composer.set_focused(true);
        let Some(next) = self.queued.pop_front() else {
            if self.info.mode == north_protocol::PermissionMode::Plan && *end == TurnEnd::Done {
                self.offer_plan();
            }
            return None;
        };
        self.start_turn(&next);
        Some(Action::Submit(next))
    }

    fn resumed(
        &mut self,
        session_id: String,
        messages: &[Message],
        tools: &north_agent::Describer,
        usage: &Usage,
    ) {
        /// Timeline items replayed from a resumed session, at most.
        const SHOWN: usize = 60;
        self.info.session_id = session_id.clone();
        self.tokens = total_tokens(usage);
        self.usage_total = *usage;
        self.streamed_bytes = 0;
        let items = crate::replay::replay(messages, tools);
        let skip = items.len().saturating_sub(SHOWN);
        self.notice(
            format!(
                "Resumed session {session_id} ({} earlier messages{})",
                messages.len(),
                if skip > 0 {
                    format!(", the last {SHOWN} lines of the timeline shown")
                } else {
                    String::new()
                }
            ),
            Vec::new(),
        );
        for item in items.into_iter().skip(skip) {
            self.push(item);
        }
    }

    /// Answers the open prompt; a plan prompt answers with actions.
    pub(crate) fn decide(&mut self, decision: ApprovalDecision) -> Vec<Action> {
        let mut actions = Vec::new();
        if let Some(mut p) = self.pending.take() {
            match p.reply.take() {
                Some(reply) => {
                    if decision == ApprovalDecision::Accept {
                        crate::prompt::hand_over(&p);
                    }
                    let _ = reply.send(decision);
                }
                None if p.kind == PromptKind::PlanReady => actions = self.plan_decided(decision),
                None => {}
            }
        }
        self.composer.set_focused(true);
        self.dirty = true;
        actions
    }
}

/// Every token a usage report counts (cached ones included).
pub(crate) fn total_tokens(u: &Usage) -> u64 {
    u.input_tokens
        .saturating_add(u.output_tokens)
        .saturating_add(u.cache_read_input_tokens)
        .saturating_add(u.cache_creation_input_tokens)
}
