//! Key handling: the composer (readline keys), prompts, the session picker,
//! and Ctrl+C / Esc / Ctrl+D semantics (Ctrl+C clears a draft first, then
//! interrupts, then quits on a second press; Esc interrupts).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use north_protocol::ApprovalDecision;

use crate::app::{Action, App, Choice, QUIT_HINT, QUIT_WINDOW};
use crate::approver::PromptKind;
use crate::transcript::Item;

/// Pastes longer than this many lines are folded into a placeholder.
const PASTE_FOLD_LINES: usize = 8;

fn is_press(key: &KeyEvent) -> bool {
    matches!(key.kind, KeyEventKind::Press | KeyEventKind::Repeat)
}

impl App {
    /// Handles a paste: inserted into the composer, never sent. A long
    /// paste shows as one line, `[Pasted text #1 +200 lines]`, and is sent
    /// whole.
    pub fn handle_paste(&mut self, text: &str) {
        if self.pending.is_some() || self.picker.is_some() {
            return;
        }
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        // A pasted path to a picture (a screenshot dragged in) attaches it.
        if let Some(path) = pasted_image_path(&text) {
            self.attach_image(path);
            return;
        }
        let lines = text.lines().count();
        if lines > PASTE_FOLD_LINES {
            let placeholder = format!("[Pasted text #{} +{lines} lines]", self.pastes.len() + 1);
            self.composer.insert(&placeholder);
            self.pastes.push((placeholder, text));
        } else {
            self.composer.insert(&text);
        }
        self.refresh_popup();
        self.dirty = true;
    }

    /// Attaches the picture at `path` to the next message, shown as
    /// `[Image #N]` in the composer.
    pub(crate) fn attach_image(&mut self, path: std::path::PathBuf) {
        if self.pending.is_some() || self.picker.is_some() {
            return;
        }
        self.images.push(path);
        self.composer
            .insert(&format!("[Image #{}]", self.images.len()));
        self.refresh_popup();
        self.dirty = true;
    }

    /// The image files pasted for the message being sent; forgotten here.
    pub fn take_images(&mut self) -> Vec<std::path::PathBuf> {
        std::mem::take(&mut self.images)
    }

    /// `text` with each paste placeholder it still holds replaced by the
    /// paste; the pastes are forgotten.
    fn expand_pastes(&mut self, text: &str) -> String {
        let mut out = text.to_string();
        for (placeholder, paste) in self.pastes.drain(..) {
            out = out.replacen(&placeholder, &paste, 1);
        }
        out
    }

    /// Handles a key press.
    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if !is_press(&key) {
            return Vec::new();
        }
        self.dirty = true;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if !self.forms.is_empty() {
            return self.form_key(key, ctrl);
        }
        // A history search takes every key until it ends.
        if self.search.is_some()
            && let Some(actions) = self.search_key(&key)
        {
            return actions;
        }
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c();
        }
        if let Some(actions) = self.bound_key(&key) {
            self.quit_armed = None;
            self.hint = None;
            self.refresh_popup();
            return actions;
        }
        if ctrl && key.code == KeyCode::Char('z') {
            return vec![Action::Suspend];
        }
        self.quit_armed = None;
        self.hint = None;
        if ctrl
            && key.code == KeyCode::Char('d')
            && self.pending.is_none()
            && self.picker.is_none()
            && self.composer.is_empty()
        {
            return vec![Action::Quit];
        }
        if ctrl && key.code == KeyCode::Char('g') && self.pending.is_none() && self.picker.is_none()
        {
            return vec![Action::EditDraft];
        }
        if self.pending.is_some() {
            return self.prompt_key(key);
        }
        if self.picker.is_some() {
            return self.picker_key(key);
        }
        if ctrl && key.code == KeyCode::Char('r') && self.pending.is_none() && self.picker.is_none()
        {
            self.start_search();
            return Vec::new();
        }
        if let Some(actions) = self.popup_key(&key) {
            return actions;
        }
        if key.code == KeyCode::BackTab {
            return self.cycle_mode();
        }
        if key.code == KeyCode::Esc {
            return self.esc();
        }
        // `?` on an empty composer: the keys, as both peers show them.
        if key.code == KeyCode::Char('?') && !ctrl && self.composer.is_empty() {
            crate::help::shortcuts(self);
            return Vec::new();
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if alt && key.code == KeyCode::Char('p') {
            return self.model_picker();
        }
        if ctrl && key.code == KeyCode::Char('s') {
            self.toggle_stash();
            return Vec::new();
        }
        if self.readline_key(&key) {
            self.refresh_popup();
            return Vec::new();
        }
        let actions = self.composer_key(key, ctrl);
        self.refresh_popup();
        actions
    }

    /// A key while an MCP server's form is open: it goes to the form;
    /// Ctrl+C cancels the form and goes on to stop the turn.
    fn form_key(&mut self, key: KeyEvent, ctrl: bool) -> Vec<Action> {
        let Some(form) = self.forms.front_mut() else {
            return Vec::new();
        };
        let stop = ctrl && key.code == KeyCode::Char('c');
        let done = if stop {
            form.key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE))
        } else {
            form.key(key)
        };
        if done && let Some(form) = self.forms.pop_front() {
            self.notice(
                format!(
                    "MCP server {}: form {}",
                    form.form.server,
                    form.outcome.unwrap_or("closed")
                ),
                Vec::new(),
            );
        }
        if stop { self.ctrl_c() } else { Vec::new() }
    }

    /// Esc: interrupts a turn; Esc Esc clears a draft (↑ brings it back)
    /// or, on an idle empty composer, opens the rewind picker.
    fn esc(&mut self) -> Vec<Action> {
        if self.is_busy() && !self.interrupting {
            return self.interrupt();
        }
        // Esc Esc: on a draft, clears it (↑ brings it back); on an
        // idle, empty composer, the rewind picker.
        let now = std::time::Instant::now();
        let again = self
            .last_esc
            .is_some_and(|at| now.duration_since(at) <= QUIT_WINDOW);
        if !self.composer.is_empty() {
            if again {
                self.last_esc = None;
                self.composer.stash();
                self.hint = Some("Draft cleared · ↑ brings it back".into());
            } else {
                self.last_esc = Some(now);
                self.hint = Some("Esc again clears the draft".into());
            }
        } else if !self.is_busy() {
            if again {
                self.last_esc = None;
                return vec![Action::ListTurns];
            }
            self.last_esc = Some(now);
        }
        Vec::new()
    }

    /// A key for the composer (or the shortcuts that work from it).
    fn composer_key(&mut self, key: KeyEvent, ctrl: bool) -> Vec<Action> {
        match key.code {
            KeyCode::Enter
                if key
                    .modifiers
                    .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) =>
            {
                self.composer.newline()
            }
            // `line a\` + Enter: a line break, not a message ending in `\`.
            KeyCode::Enter if self.composer.backslash_before_cursor() => {
                self.composer.continue_line();
            }
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('j') if ctrl => self.composer.newline(),
            // A screenshot copied to the clipboard (the text paste is the
            // terminal's own, bracketed).
            KeyCode::Char('v') if ctrl => return vec![Action::PasteImage],
            // Every result's whole output, rendered, in the transcript view
            // (opened at the newest): nothing is appended to the timeline.
            KeyCode::Char('o') if ctrl => return vec![Action::Transcript],
            KeyCode::Char('t') if ctrl => return vec![Action::Transcript],
            KeyCode::Char('l') if ctrl => return vec![Action::ClearScreen],
            KeyCode::Up if self.composer.cursor().0 == 0 => {
                if !self.composer.history_prev() {
                    self.composer.input(key);
                }
            }
            KeyCode::Down if self.composer.cursor().0 + 1 >= self.composer.line_count() => {
                if !self.composer.history_next() {
                    self.composer.input(key);
                }
            }
            _ => self.composer.input(key),
        }
        Vec::new()
    }

    /// Ctrl+C, in the order users know: refuse an open prompt and stop its
    /// turn; else clear a
    /// non-empty composer (the draft goes to history, ↑ brings it back);
    /// else interrupt a running turn; else ask for a second press to quit.
    fn ctrl_c(&mut self) -> Vec<Action> {
        if let Some(p) = self.pending.as_ref() {
            // A prompt is refused and the turn it belongs to stops.
            let refusal = p.kind.refusal();
            let actions = self.stop_with(refusal);
            self.quit_armed = Some(std::time::Instant::now());
            return actions;
        }
        if self.picker.take().is_some() {
            self.quit_armed = None;
            return Vec::new();
        }
        if !self.composer.is_empty() {
            self.composer.stash();
            self.quit_armed = None;
            self.hint = Some("Draft cleared · ↑ brings it back".into());
            return Vec::new();
        }
        if self.is_busy() && !self.interrupting {
            let actions = self.interrupt();
            // A second Ctrl+C soon after quits.
            self.quit_armed = Some(std::time::Instant::now());
            return actions;
        }
        // Quitting takes a second press soon after the first: a lone
        // Ctrl+C, however long after another, never quits.
        if self
            .quit_armed
            .is_some_and(|at| at.elapsed() <= QUIT_WINDOW)
        {
            return vec![Action::Quit];
        }
        self.quit_armed = Some(std::time::Instant::now());
        self.hint = Some(QUIT_HINT.into());
        Vec::new()
    }

    /// Refuses the open prompt and ends its turn: the turn is cancelled
    /// first and the refusal sent after, so the agent sends no further
    /// model request. Outside a turn (the end of a plan) it only decides.
    pub(crate) fn stop_with(&mut self, refusal: ApprovalDecision) -> Vec<Action> {
        if !self.is_busy() {
            return self.decide(refusal);
        }
        if let Some(mut p) = self.pending.take()
            && let Some(reply) = p.reply.take()
        {
            self.deferred_reply = Some((reply, refusal));
        }
        self.composer.set_focused(true);
        self.interrupt()
    }

    /// Sends a refusal kept for after the cancel (see [`App::stop_with`]).
    pub fn release_deferred(&mut self) {
        if let Some((reply, decision)) = self.deferred_reply.take() {
            let _ = reply.send(decision);
        }
    }

    /// Shift+Tab: the next permission mode this front end can enter; it
    /// applies from the next turn.
    fn cycle_mode(&mut self) -> Vec<Action> {
        if self.is_busy() {
            self.hint = Some("The mode changes between turns".into());
            return Vec::new();
        }
        let modes = &self.info.modes;
        let Some(at) = modes.iter().position(|m| *m == self.info.mode) else {
            return modes
                .first()
                .map(|m| vec![Action::SetMode(*m)])
                .unwrap_or_default();
        };
        match modes.get((at + 1) % modes.len().max(1)) {
            Some(next) if *next != self.info.mode => vec![Action::SetMode(*next)],
            _ => Vec::new(),
        }
    }

    /// Stops the running turn (Esc, or Ctrl+C with an empty composer); a
    /// further Ctrl+C quits.
    fn interrupt(&mut self) -> Vec<Action> {
        self.interrupting = true;
        self.quit_armed = None;
        // Type-ahead is never dropped: it goes back to the composer.
        if !self.queued.is_empty() {
            let mut text: Vec<String> = self.queued.drain(..).collect();
            if !self.composer.is_empty() {
                text.push(self.composer.take());
            }
            self.composer.set_text(&text.join("\n"));
            self.hint = Some("Interrupting… · your queued message is back in the composer".into());
        } else {
            self.hint = Some("Interrupting…".into());
        }
        vec![Action::Interrupt]
    }

    /// Alt+P: the model list (`/model ` and its completions); a draft goes
    /// to history first (↑ brings it back).
    pub(crate) fn model_picker(&mut self) -> Vec<Action> {
        if !self.composer.is_empty() {
            self.composer.stash();
            self.hint = Some("Draft kept · ↑ brings it back".into());
        }
        self.composer.set_text("/model ");
        self.refresh_popup();
        Vec::new()
    }

    /// Ctrl+S: puts the draft aside (the composer is free for something
    /// else); on an empty composer, brings the stashed draft back.
    pub(crate) fn toggle_stash(&mut self) {
        if !self.composer.is_empty() {
            let draft = self.composer.text();
            self.composer.set_text("");
            if let Some(older) = self.stashed.replace(draft) {
                // One stash slot: the one it replaces stays one ↑ away.
                self.composer.remember(older);
            }
            self.hint = Some("Draft stashed · ctrl+s on an empty composer brings it back".into());
        } else if let Some(draft) = self.stashed.take() {
            self.composer.set_text(&draft);
        }
        self.refresh_popup();
    }

    /// Readline-style editing keys the text area does not bind the way
    /// terminal users expect; `true` when `key` was one of them.
    fn readline_key(&mut self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('u') if ctrl => self.composer.kill_to_line_start(),
            // Ctrl+Z suspends, as in every terminal program; undo keeps
            // readline's Ctrl+_ (Ctrl+7 where a terminal sends that).
            KeyCode::Char('_') | KeyCode::Char('7') if ctrl => self.composer.undo(),
            KeyCode::Char('b') if alt => self.composer.word_back(),
            KeyCode::Char('f') if alt => self.composer.word_forward(),
            _ => return false,
        }
        true
    }

    pub(crate) fn submit(&mut self) -> Vec<Action> {
        let text = self.composer.text();
        if text.trim().is_empty() {
            return Vec::new();
        }
        let shown = self.composer.take();
        let text = self.expand_pastes(&shown);
        self.popup = None;
        // A custom command: its template, with the arguments, is the message.
        if let Some(prompt) = north_agent::commands::expand_in(&self.info.commands, &text) {
            if self.is_busy() {
                self.queued.push_back(prompt);
                self.hint = Some("Queued: sent when the turn ends".into());
                return Vec::new();
            }
            self.start_turn(&text);
            return vec![Action::Submit(prompt)];
        }
        // `/mcp__server__prompt …` is an MCP prompt: sent as a message,
        // which the agent expands.
        if text.starts_with('/') && !text.starts_with("/mcp__") {
            return crate::slash::run(self, text.trim());
        }
        if let Some(command) = text.strip_prefix('!') {
            let command = command.trim().to_string();
            if command.is_empty() {
                self.hint = Some("Type a command after ! to run it in the project shell".into());
                return Vec::new();
            }
            if self.is_busy() {
                self.hint = Some("A turn is running; run the command when it ends".into());
                self.composer.set_text(&text);
                return Vec::new();
            }
            self.start_turn(&text);
            return vec![Action::Shell(command)];
        }
        if self.is_busy() {
            self.queued.push_back(text);
            self.hint = Some(format!(
                "Queued {} message{}: sent when the turn ends",
                self.queued.len(),
                if self.queued.len() == 1 { "" } else { "s" }
            ));
            return Vec::new();
        }
        // The timeline shows what the composer showed (a long paste as its
        // placeholder); the model gets it all.
        self.start_turn(&shown);
        vec![Action::Submit(text)]
    }

    /// Keys while the user types why they refuse: Enter sends the refusal
    /// with the words, Esc goes back to the options.
    fn feedback_key(&mut self, key: KeyEvent, refusal: ApprovalDecision) -> Vec<Action> {
        match key.code {
            KeyCode::Esc => {
                if let Some(p) = self.pending.as_mut() {
                    p.awaiting_feedback = None;
                }
                self.composer.set_text("");
                self.composer.set_focused(false);
                Vec::new()
            }
            KeyCode::Enter => {
                let words = self.composer.text().trim().to_string();
                self.composer.set_text("");
                if let Some(p) = self.pending.as_ref()
                    && !words.is_empty()
                    && let Ok(mut slot) = p.feedback.lock()
                {
                    *slot = Some(words.clone());
                    self.reasons.insert(p.call_id.clone(), words);
                }
                self.decide(refusal)
            }
            _ => {
                if !self.readline_key(&key) {
                    self.composer.input(key);
                }
                Vec::new()
            }
        }
    }

    fn prompt_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self
            .pending
            .as_ref()
            .is_some_and(|p| p.awaiting_feedback.is_none())
            && let Some(actions) = self.review_key(&key)
        {
            return actions;
        }
        let Some(p) = self.pending.as_mut() else {
            return Vec::new();
        };
        if let Some(refusal) = p.awaiting_feedback {
            return self.feedback_key(key, refusal);
        }
        if std::mem::take(&mut p.follow_hunk) {
            // Scrolling goes on from where the review showed the hunk.
            p.scroll = p.shown_scroll.get();
        }
        let options = p.options();
        let n = options.len();
        let chosen = match key.code {
            KeyCode::Left | KeyCode::BackTab => {
                p.selected = (p.selected + n - 1) % n;
                None
            }
            KeyCode::Right | KeyCode::Tab => {
                p.selected = (p.selected + 1) % n;
                None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                p.scroll = p.scroll.saturating_sub(1);
                None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                p.scroll += 1;
                None
            }
            KeyCode::PageUp => {
                p.scroll = p.scroll.saturating_sub(10);
                None
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                p.scroll += 10;
                None
            }
            KeyCode::Home => {
                p.scroll = 0;
                None
            }
            KeyCode::End => {
                p.scroll = usize::MAX / 2;
                None
            }
            KeyCode::Enter => options.get(p.selected).map(|o| o.2),
            KeyCode::Esc => Some(Choice::Stop(p.kind.refusal())),
            KeyCode::Char(c) => {
                let c = c.to_ascii_lowercase();
                let by_key = options
                    .iter()
                    .find(|(_, k, _)| k.starts_with(c))
                    .map(|o| o.2);
                by_key.or_else(|| letter_choice(&p.kind, c))
            }
            _ => None,
        };
        match chosen {
            Some(Choice::Decide(d)) => self.decide(d),
            Some(Choice::Stop(d)) => self.stop_with(d),
            Some(Choice::Feedback(refusal)) => {
                if let Some(p) = self.pending.as_mut() {
                    p.awaiting_feedback = Some(refusal);
                }
                self.composer.set_text("");
                self.composer.set_focused(true);
                self.hint = Some("Tell North why · enter sends · esc goes back".into());
                Vec::new()
            }
            Some(Choice::EditFirst) => vec![Action::EditProposal],
            None => Vec::new(),
        }
    }

    fn picker_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(picker) = self.picker.as_mut() else {
            return Vec::new();
        };
        let n = picker.sessions.len().max(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => picker.selected = (picker.selected + n - 1) % n,
            KeyCode::Down | KeyCode::Char('j') => picker.selected = (picker.selected + 1) % n,
            KeyCode::Esc => self.picker = None,
            KeyCode::Enter => {
                let chosen = picker.sessions.get(picker.selected).cloned();
                let kind = picker.kind;
                self.picker = None;
                match (kind, chosen) {
                    (crate::app::PickerKind::Resume, Some((id, _))) => return self.resume(&id),
                    (crate::app::PickerKind::Rewind, Some((turn, prompt))) => {
                        return self.rewind_to(&turn, &prompt);
                    }
                    (_, None) => {}
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Rewinds to the start of `turn` (code and conversation) and puts its
    /// prompt back in the composer, to edit and send again.
    fn rewind_to(&mut self, turn: &str, prompt: &str) -> Vec<Action> {
        let Ok(turn) = turn.parse::<u32>() else {
            return Vec::new();
        };
        if self.is_busy() {
            self.push(Item::Error(
                "a turn is running: interrupt it first (esc), then rewind".into(),
            ));
            return Vec::new();
        }
        if self.composer.is_empty() {
            self.composer.set_text(prompt);
        }
        vec![Action::Rewind(crate::rewind::RewindRequest {
            turn: Some(turn),
            scope: north_agent::undo::RewindScope::Both,
            force: false,
        })]
    }

    pub(crate) fn resume(&mut self, id: &str) -> Vec<Action> {
        if self.is_busy() {
            self.push(Item::Error(
                "cannot switch sessions while a turn runs; interrupt it first (ctrl+c)".into(),
            ));
            return Vec::new();
        }
        if id == self.info.session_id {
            self.notice(format!("Already in session {id}"), Vec::new());
            return Vec::new();
        }
        vec![Action::Resume(id.to_string())]
    }
}

/// The letters both peers' users type at a prompt (`y`, `a`, `n`, `d`,
/// `g`, `r`), beside each option's own key.
fn letter_choice(kind: &PromptKind, c: char) -> Option<Choice> {
    match (kind, c) {
        (PromptKind::Shell { .. }, 'y' | 'r') => Some(Choice::Decide(ApprovalDecision::RunOnce)),
        (PromptKind::Shell { .. }, 'a') => Some(Choice::Decide(ApprovalDecision::Always)),
        (PromptKind::Shell { .. }, 'n' | 'd') => Some(Choice::Stop(ApprovalDecision::Deny)),
        (PromptKind::Edit { .. }, 'a') => Some(Choice::Decide(ApprovalDecision::Accept)),
        (PromptKind::Edit { .. }, 'r') => Some(Choice::Stop(ApprovalDecision::Reject)),
        (PromptKind::Capability { .. }, 'g') => Some(Choice::Decide(ApprovalDecision::Grant)),
        (PromptKind::Capability { .. }, 'd') => Some(Choice::Stop(ApprovalDecision::Deny)),
        (PromptKind::Host { .. }, 'g') => Some(Choice::Decide(ApprovalDecision::Grant)),
        (PromptKind::Host { .. }, 'd') => Some(Choice::Decide(ApprovalDecision::Deny)),
        _ => None,
    }
}

/// The image file a paste names, if it is one: a single path (quoted, with
/// `\ ` escapes, or a `file://` URL, as terminals paste a dropped file)
/// to an existing PNG, JPEG, GIF or WebP.
pub(crate) fn pasted_image_path(text: &str) -> Option<std::path::PathBuf> {
    let t = text.trim();
    if t.is_empty() || t.contains('\n') {
        return None;
    }
    let t = t
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(t);
    let t = t.strip_prefix("file://").unwrap_or(t);
    let path = std::path::PathBuf::from(t.replace("\\ ", " "));
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    (["png", "jpg", "jpeg", "gif", "webp"].contains(&ext.as_str()) && path.is_file())
        .then_some(path)
}
