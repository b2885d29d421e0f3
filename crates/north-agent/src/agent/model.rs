//! Switching the model mid-session: the backend, model and budgets change,
//! the conversation is kept. The history is provider-neutral, so the next
//! request is simply encoded for the new provider; what cannot follow is
//! reasoning (Anthropic thinking signatures, OpenAI encrypted reasoning),
//! which only the model that wrote it may read back, so it is dropped when
//! the model changes and kept when it does not.

use std::sync::Arc;

use north_llm::Backend;
use north_protocol::{ContentBlock, Event, ModelRef, NoticeKind, TraceKind};
use serde_json::json;

use super::{Agent, Emit};

/// A new model for a running session.
#[derive(Clone)]
pub struct ModelSwitch {
    /// The backend to use from now on.
    pub backend: Arc<dyn Backend>,
    /// Its provider name.
    pub provider: String,
    /// The model name.
    pub model: String,
    /// Output tokens per request for the new model.
    pub max_tokens: u32,
    /// Context budget for the new model (condensation keeps requests under it).
    pub context_budget: u64,
}

impl std::fmt::Debug for ModelSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSwitch")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("context_budget", &self.context_budget)
            .finish_non_exhaustive()
    }
}

/// What a switch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchReport {
    /// The provider and model before.
    pub from: ModelRef,
    /// Reasoning blocks dropped because the new model cannot read them.
    pub dropped_reasoning: usize,
}

impl Agent {
    /// The provider and model the agent uses now.
    pub fn model(&self) -> ModelRef {
        ModelRef {
            provider: self.opts.provider.clone(),
            model: self.opts.model.clone(),
        }
    }

    /// Continues the session on another backend or model (the TUI's
    /// `/model`, or a resumed session configured with another model). The
    /// conversation, state and budgets carry over; reasoning the new model
    /// cannot read is dropped. Emits a notice and saves the checkpoint.
    pub fn switch_model(&mut self, switch: ModelSwitch, emit: &Emit<'_>) -> SwitchReport {
        let from = self.model();
        self.services.backend = switch.backend;
        self.opts.provider = switch.provider;
        self.opts.model = switch.model;
        self.opts.max_tokens = switch.max_tokens;
        self.opts.context_budget = switch.context_budget;
        let to = self.model();
        let dropped_reasoning = if from == to { 0 } else { self.drop_reasoning() };
        self.services.tracer.record(
            TraceKind::ModelSwitch,
            json!({"from": from.model, "from_provider": from.provider, "to": to.model, "to_provider": to.provider, "dropped_reasoning": dropped_reasoning}),
        );
        emit(Event::Notice {
            kind: NoticeKind::ModelSwitched,
            message: switch_message(&from, &to, dropped_reasoning),
        });
        self.save(emit);
        SwitchReport {
            from,
            dropped_reasoning,
        }
    }

    /// Removes every reasoning block from the history (messages left with
    /// nothing are removed too); returns how many blocks went.
    pub(super) fn drop_reasoning(&mut self) -> usize {
        let mut dropped = 0;
        for m in &mut self.conv.messages {
            let before = m.content.len();
            m.content.retain(|b| !ContentBlock::is_reasoning(b));
            dropped += before - m.content.len();
        }
        self.conv.messages.retain(|m| !m.content.is_empty());
        if dropped > 0 {
            self.touched(0);
        }
        dropped
    }
}

/// The notice for a switch from `from` to `to`.
pub(super) fn switch_message(from: &ModelRef, to: &ModelRef, dropped: usize) -> String {
    let mut message = format!(
        "now on {} {} (was {} {}); the conversation is kept",
        to.provider, to.model, from.provider, from.model
    );
    if dropped > 0 {
        message.push_str(&format!(
            ", {dropped} reasoning block(s) only the previous model can read were dropped"
        ));
    }
    message
}
