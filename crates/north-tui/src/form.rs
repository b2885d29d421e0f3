//! A server's form (MCP elicitation) on screen: its fields with their
//! defaults filled in, edited in place, then accepted, declined or
//! cancelled. The binary hands requests over with [`FormAsker`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures::future::BoxFuture;
use north_protocol::{ElicitAnswer, ElicitField, ElicitForm, FieldKind};
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use crate::approver::UiMsg;
use crate::style;

/// Sends servers' forms to the UI and waits for the user's answer.
#[derive(Clone)]
pub struct FormAsker(mpsc::UnboundedSender<UiMsg>);

impl FormAsker {
    /// Forms go to the UI of `inbox` (its [`crate::Inbox::sender`]).
    pub fn new(tx: mpsc::UnboundedSender<UiMsg>) -> Self {
        FormAsker(tx)
    }

    /// The user's answer to `form`; cancelled when the UI is gone.
    pub fn ask(&self, form: ElicitForm) -> BoxFuture<'static, ElicitAnswer> {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(UiMsg::Form(form, reply)).is_ok();
        Box::pin(async move {
            if !sent {
                return ElicitAnswer::Cancel;
            }
            answer.await.unwrap_or(ElicitAnswer::Cancel)
        })
    }
}

/// A form being filled in.
#[derive(Debug)]
pub(crate) struct FormState {
    pub form: ElicitForm,
    /// Each field's text as edited.
    pub values: Vec<String>,
    pub selected: usize,
    /// Why the last submit was refused.
    pub error: Option<String>,
    pub reply: Option<oneshot::Sender<ElicitAnswer>>,
    /// How it was answered, once it was (for the transcript).
    pub outcome: Option<&'static str>,
}

impl FormState {
    pub fn new(form: ElicitForm, reply: oneshot::Sender<ElicitAnswer>) -> Self {
        let values = form
            .fields
            .iter()
            .map(|f| {
                f.default
                    .as_ref()
                    .map(ElicitField::display)
                    .unwrap_or_default()
            })
            .collect();
        FormState {
            form,
            values,
            selected: 0,
            error: None,
            reply: Some(reply),
            outcome: None,
        }
    }

    fn answer(&mut self, answer: ElicitAnswer) {
        self.outcome = Some(match answer {
            ElicitAnswer::Accept(_) => "submitted",
            ElicitAnswer::Decline => "declined",
            ElicitAnswer::Cancel => "cancelled",
        });
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
    }

    /// The values as the server's answer, or why they are not one.
    fn content(&self) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        for (field, text) in self.form.fields.iter().zip(&self.values) {
            if text.trim().is_empty() && !matches!(field.kind, FieldKind::Text) {
                if field.required {
                    return Err(format!("{} is required", field.name));
                }
                continue;
            }
            if text.is_empty() && field.required {
                return Err(format!("{} is required", field.name));
            }
            if text.is_empty() {
                continue;
            }
            out.insert(
                field.name.clone(),
                field.parse(text).map_err(|e| e.to_string())?,
            );
        }
        Ok(out)
    }

    /// Handles a key; `true` once the form is answered (and closes).
    pub fn key(&mut self, key: KeyEvent) -> bool {
        let n = self.form.fields.len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let field = self.form.fields.get(self.selected).cloned();
        match key.code {
            KeyCode::Esc => {
                self.answer(ElicitAnswer::Cancel);
                return true;
            }
            KeyCode::Char('d') if ctrl => {
                self.answer(ElicitAnswer::Decline);
                return true;
            }
            KeyCode::Enter => match self.content() {
                Ok(content) => {
                    self.answer(ElicitAnswer::Accept(content));
                    return true;
                }
                Err(why) => self.error = Some(why),
            },
            KeyCode::Up | KeyCode::BackTab if n > 0 => {
                self.selected = (self.selected + n - 1) % n;
            }
            KeyCode::Down | KeyCode::Tab if n > 0 => {
                self.selected = (self.selected + 1) % n;
            }
            KeyCode::Char('u') if ctrl => {
                if let Some(v) = self.values.get_mut(self.selected) {
                    v.clear();
                }
            }
            KeyCode::Backspace => {
                if let Some(v) = self.values.get_mut(self.selected) {
                    v.pop();
                }
            }
            KeyCode::Left | KeyCode::Right | KeyCode::Char(' ')
                if field.as_ref().is_some_and(|f| {
                    matches!(f.kind, FieldKind::Boolean | FieldKind::Choice(_))
                }) =>
            {
                let back = key.code == KeyCode::Left;
                if let (Some(f), Some(v)) = (field, self.values.get_mut(self.selected)) {
                    *v = cycle(&f.kind, v, back);
                }
            }
            KeyCode::Char(c) if !ctrl => {
                if let Some(v) = self.values.get_mut(self.selected) {
                    v.push(c);
                }
            }
            _ => {}
        }
        false
    }

    /// The form as the panel shows it.
    pub fn lines(&self, width: u16) -> Vec<Line<'static>> {
        let w = usize::from(width).saturating_sub(4).max(20);
        let mut out = vec![Line::from(vec![
            Span::styled(" ? ", style::notice()),
            Span::styled(
                format!("MCP server {} asks for input", self.form.server),
                style::key(),
            ),
        ])];
        out.extend(crate::wrap::wrap_text(
            &format!("   {}", self.form.message),
            w,
            ratatui::style::Style::default(),
        ));
        for (i, (field, value)) in self.form.fields.iter().zip(&self.values).enumerate() {
            let on = i == self.selected;
            let label = field.title.clone().unwrap_or_else(|| field.name.clone());
            let mark = if field.required { "*" } else { "" };
            let shown = match &field.kind {
                FieldKind::Boolean if value.is_empty() => "—".to_string(),
                _ => value.clone(),
            };
            let mut spans = vec![
                Span::styled(if on { " › " } else { "   " }, style::user()),
                Span::styled(
                    format!("{label}{mark}: "),
                    if on { style::key() } else { style::dim() },
                ),
                Span::raw(format!("[{shown}{}]", if on { "▏" } else { "" })),
            ];
            let hint = match &field.kind {
                FieldKind::Choice(o) | FieldKind::Choices(o) => format!("  {}", o.join(" | ")),
                FieldKind::Boolean => "  yes | no".to_string(),
                FieldKind::Integer => "  a whole number".to_string(),
                FieldKind::Number => "  a number".to_string(),
                FieldKind::Text => field
                    .description
                    .as_deref()
                    .map(|d| format!("  {d}"))
                    .unwrap_or_default(),
            };
            if on && !hint.is_empty() {
                spans.push(Span::styled(
                    crate::wrap::truncate(&hint, w / 2),
                    style::dim(),
                ));
            }
            out.push(Line::from(spans));
        }
        if let Some(error) = &self.error {
            out.push(Line::from(Span::styled(
                format!("   ✗ {error}"),
                style::error(),
            )));
        }
        out.push(Line::from(Span::styled(
            "   ↑↓ field · type to edit · space/←→ choose · enter submits · ctrl+d declines · esc cancels",
            style::dim(),
        )));
        out
    }
}

/// The next (or previous) value of a yes/no or one-of field.
fn cycle(kind: &FieldKind, value: &str, back: bool) -> String {
    let options: Vec<String> = match kind {
        FieldKind::Boolean => vec!["true".into(), "false".into()],
        FieldKind::Choice(o) => o.clone(),
        _ => return value.to_string(),
    };
    if options.is_empty() {
        return value.to_string();
    }
    let n = options.len();
    let at = options.iter().position(|o| o == value);
    let next = match (at, back) {
        (None, _) => 0,
        (Some(i), false) => (i + 1) % n,
        (Some(i), true) => (i + n - 1) % n,
    };
    options[next].clone()
}
