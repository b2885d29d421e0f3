//! The end of a `plan`-mode turn: the user accepts the plan into `ask` or
//! `accept-edits` (and North carries it out), or keeps planning.

use north_protocol::{ApprovalDecision, PermissionMode};

use crate::app::{Action, App, Pending};
use crate::approver::PromptKind;

/// What North is told when the user accepts its plan.
pub(crate) const GO: &str = "The plan is approved. Carry it out now.";

impl App {
    /// Asks whether to carry out the plan the model just gave.
    pub(crate) fn offer_plan(&mut self) {
        self.pending = Some(Pending::new(
            "plan".into(),
            PromptKind::PlanReady,
            None,
            Default::default(),
            Default::default(),
            self.elapsed,
        ));
        self.composer.set_focused(false);
    }

    /// The user's answer: switch mode and go, or stay in `plan`.
    pub(crate) fn plan_decided(&mut self, decision: ApprovalDecision) -> Vec<Action> {
        let mode = match decision {
            ApprovalDecision::RunOnce => PermissionMode::Ask,
            ApprovalDecision::Accept => PermissionMode::AcceptEdits,
            _ => {
                self.hint = Some("Still planning · say what to change".into());
                return Vec::new();
            }
        };
        self.start_turn(GO);
        vec![Action::SetMode(mode), Action::Submit(GO.to_string())]
    }
}

/// How the status line and hints name a permission mode.
pub(crate) fn mode_label(mode: north_protocol::PermissionMode) -> &'static str {
    match mode {
        north_protocol::PermissionMode::Ask => "ask mode: edits and commands ask",
        north_protocol::PermissionMode::AcceptEdits => "⏵⏵ accept edits",
        north_protocol::PermissionMode::Plan => "⏸ plan mode (read-only)",
        north_protocol::PermissionMode::Auto => "⏵⏵ auto (commands sandboxed)",
    }
}
