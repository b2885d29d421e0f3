//! The harness of the TUI rendering tests: the real `InlineTerminal` drawing
//! into ratatui's `TestBackend`, read back as text (scrollback, then the
//! screen), with helpers to feed events, keys and prompts.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use north_protocol::FileDiff;
use north_protocol::{ApprovalDecision, Event, Usage};
use north_tui::{Action, App, InlineTerminal, Prompt, PromptKind, SessionInfo, UiMsg, draw};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Size;
use tokio::sync::oneshot;

pub const SESSION: &str = "20251122-101500-a1b2";

pub struct Ui {
    pub app: App,
    pub term: InlineTerminal<TestBackend>,
    pub dir: tempfile::TempDir,
}

pub fn rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            let mut s = String::new();
            for x in 0..area.width {
                s.push_str(buf.cell((x, y)).map(|c| c.symbol()).unwrap_or(" "));
            }
            s.trim_end().to_string()
        })
        .collect()
}

impl Ui {
    pub fn new(width: u16, height: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let app = App::new(SessionInfo {
            version: String::new(),
            mode: north_protocol::PermissionMode::Ask,
            modes: north_protocol::PermissionMode::ALL.to_vec(),
            root: dir.path().to_path_buf(),
            provider: "scripted".into(),
            model: "scripted".into(),
            session_id: SESSION.into(),
            ..Default::default()
        });
        let term =
            InlineTerminal::new(TestBackend::new(width, height), Size::new(width, height), 0)
                .unwrap();
        Ui { app, term, dir }
    }

    pub fn event(&mut self, e: Event) -> &mut Self {
        self.app.handle_event(e);
        self
    }

    pub fn text(&mut self, t: &str) -> &mut Self {
        self.event(Event::AssistantText { text: t.into() })
    }

    pub fn key(&mut self, code: KeyCode) -> Vec<Action> {
        self.app.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    pub fn ctrl(&mut self, c: char) -> Vec<Action> {
        self.app
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    pub fn typed(&mut self, s: &str) {
        for c in s.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// The composer's text.
    pub fn app_text(&self) -> String {
        self.app.composer_text()
    }

    pub fn command(&mut self, s: &str) -> Vec<Action> {
        self.typed(s);
        self.key(KeyCode::Enter)
    }

    pub fn prompt(
        &mut self,
        call_id: &str,
        kind: PromptKind,
    ) -> oneshot::Receiver<ApprovalDecision> {
        let (reply, rx) = oneshot::channel();
        self.app.handle_msg(UiMsg::Prompt(Prompt {
            call_id: call_id.into(),
            kind,
            reply,
            feedback: Default::default(),
            review: Default::default(),
        }));
        rx
    }

    /// Scrollback (when any), a marker, then the screen.
    pub fn screen(&mut self) -> String {
        draw(&mut self.term, &mut self.app).unwrap();
        let backend = self.term.backend();
        let mut out = String::new();
        let back = rows(backend.scrollback());
        if !back.is_empty() {
            for r in back {
                out.push_str(&r);
                out.push('\n');
            }
            out.push_str("~~~~~~~~ (scrollback above, screen below) ~~~~~~~~\n");
        }
        for r in rows(backend.buffer()) {
            out.push_str(&r);
            out.push('\n');
        }
        out
    }
}

pub fn usage(i: u64, o: u64) -> Event {
    let u = Usage {
        input_tokens: i,
        output_tokens: o,
        ..Default::default()
    };
    Event::Usage { usage: u, total: u }
}

pub fn two_file_edit() -> Vec<FileDiff> {
    vec![
        FileDiff {
            path: "src/main.rs".into(),
            diff: "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,4 @@\n fn main() {\n-    println!(\"hello\");\n+    println!(\"bonjour\");\n+    greet();\n }\n".into(),
            added: 2,
            removed: 1,
            created: false,
            diagnostics: None,
        },
        FileDiff {
            path: "src/greet.rs".into(),
            diff: "--- /dev/null\n+++ b/src/greet.rs\n@@ -0,0 +1,3 @@\n+pub fn greet() {\n+    println!(\"salut\");\n+}\n".into(),
            added: 3,
            removed: 0,
            created: true,
            diagnostics: None,
        },
    ]
}
