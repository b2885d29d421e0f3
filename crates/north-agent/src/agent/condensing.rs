//! When to condense: near the context budget, or when a NOTES action asks;
//! older messages become the session summary.

use north_protocol::{ChatRequest, Event, Message, NoticeKind, Role, TraceKind, Usage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Agent, Emit, TurnEnd};
use crate::condense::{SUMMARY_INSTRUCTIONS, estimate_tokens, split_point, transcript};
use north_config::ToolProtocol;

impl Agent {
    /// Condenses when the context nears the budget or a NOTES action asked.
    /// `Ok(true)` when messages were condensed (the system prompt changes).
    pub(super) async fn maybe_condense(
        &mut self,
        system: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnEnd> {
        let requested = self.conv.condense_requested.take();
        // Tool definitions travel with every native request and count too.
        let tools = match self.opts.tool_protocol {
            ToolProtocol::Native => {
                serde_json::to_string(&self.offered_specs()).map_or(0, |t| t.len() as u64 / 4)
            }
            ToolProtocol::Text => 0,
        };
        let used = estimate_tokens(&self.conv.messages) + system.len() as u64 / 4 + tools;
        let budget = self.opts.context_budget;
        let needed = match requested {
            Some(true) => true,
            Some(false) => used > budget / 2,
            None => used > budget / 100 * u64::from(self.opts.compact_at_percent.clamp(1, 100)),
        };
        if !needed {
            if requested.is_some() {
                self.services.tracer.record(
                    TraceKind::Condense,
                    json!({"skipped": true, "tokens": used, "budget": budget}),
                );
            }
            return Ok(false);
        }
        self.pre_compact_hooks("auto", None, emit).await;
        let done = self
            .condense(used, budget / 100 * 30, None, emit, cancel)
            .await?;
        if done {
            self.post_compact_hooks("auto", emit).await;
        }
        Ok(done)
    }

    /// `/compact [focus]`: condenses now, keeping only the latest exchange
    /// verbatim; `focus` tells the summarizer what to keep above all.
    /// `Ok(false)` when there is too little to condense.
    pub async fn compact(
        &mut self,
        focus: Option<&str>,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnEnd> {
        let used = estimate_tokens(&self.conv.messages);
        self.pre_compact_hooks("manual", focus, emit).await;
        let done = self
            .condense(
                used,
                1,
                focus.filter(|f| !f.trim().is_empty()),
                emit,
                cancel,
            )
            .await?;
        if done {
            self.post_compact_hooks("manual", emit).await;
        }
        let after = estimate_tokens(&self.conv.messages);
        emit(north_protocol::Event::Notice {
            kind: north_protocol::NoticeKind::Compacted,
            message: if done {
                format!(
                    "compacted: about {used} tokens of conversation are now a summary and {after} tokens{}",
                    focus.map(|f| format!(" (focus: {f})")).unwrap_or_default()
                )
            } else {
                "nothing to compact yet: the conversation is one exchange".to_string()
            },
        });
        Ok(done)
    }

    /// Replaces the messages before the last `keep` tokens' worth with a
    /// summary the model writes.
    async fn condense(
        &mut self,
        used: u64,
        keep: u64,
        focus: Option<&str>,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnEnd> {
        let Some(cut) = split_point(&self.conv.messages, keep) else {
            return Ok(false);
        };
        // A slow model takes a while to summarize: the user sees why.
        emit(Event::Notice {
            kind: NoticeKind::Condensing,
            message: format!(
                "condensing the conversation to fit the model's context (about {used} tokens; {cut} earlier message(s) become a summary)…"
            ),
        });
        let prompt = self.summary_prompt(cut, focus);
        let mut req = ChatRequest::new(self.opts.model.clone(), vec![Message::user(prompt)]);
        req.system = Some(SUMMARY_INSTRUCTIONS.into());
        req.max_tokens = self.opts.max_tokens.min(1024);
        self.services.tracer.record(
            TraceKind::LlmReq,
            json!({"purpose": "condense", "model": self.opts.model, "messages": 1, "tools": 0}),
        );
        match north_llm::collect(self.services.backend.stream_chat(req, cancel.clone())).await {
            Ok(resp) => {
                self.conv.total.add(&resp.usage);
                self.services.tracer.record(
                    TraceKind::LlmDone,
                    json!({"purpose": "condense", "usage": resp.usage}),
                );
                let (summary, _) = north_protocol::blocks::split_blocks(&resp.text());
                self.conv.state.episode_summary = summary.trim().to_string();
                self.drop_condensed(cut, used, emit);
                Ok(true)
            }
            Err(e) if e.is_cancelled() => Err(self.interrupted(emit, Usage::default())),
            Err(e) => {
                // Not fatal: the turn goes on with the longer context.
                self.services.tracer.record(
                    TraceKind::Condense,
                    json!({"failed": self.services.redactor.scrub(&e.to_string())}),
                );
                Ok(false)
            }
        }
    }

    /// What the summarizer is asked: the user's focus, the summary so far
    /// and the transcript of the first `cut` messages — its most recent part
    /// that fits half the budget, so the summarizer's own request fits too.
    fn summary_prompt(&self, cut: usize, focus: Option<&str>) -> String {
        let mut prompt = String::new();
        if let Some(focus) = focus {
            prompt.push_str(&format!(
                "The user asked the summary to keep above all: {focus}\n\n"
            ));
        }
        if !self.conv.state.episode_summary.is_empty() {
            prompt.push_str(&format!(
                "Summary so far:\n{}\n\n",
                self.conv.state.episode_summary
            ));
        }
        let mut dropped = transcript(&self.conv.messages[..cut]);
        let room = usize::try_from(self.opts.context_budget * 2).unwrap_or(usize::MAX);
        if dropped.len() > room {
            let mut start = dropped.len() - room;
            while !dropped.is_char_boundary(start) {
                start += 1;
            }
            dropped = format!("[earlier part omitted]\n{}", &dropped[start..]);
        }
        prompt.push_str(&dropped);
        prompt
    }

    /// Drops the first `cut` messages from the model's view (the summary
    /// holds them), restating the request the kept ones belong to.
    fn drop_condensed(&mut self, cut: usize, used: u64, emit: &Emit<'_>) {
        let request = self.conv.messages[..cut]
            .iter()
            .rev()
            .find(|m| crate::condense::is_user_input(m))
            .map(Message::text_content);
        // The log is brought level first, so the condensation is one
        // appended record: the condensed messages stay in the transcript,
        // only the model's view loses them.
        let level = self.checkpoint().is_ok();
        self.conv.messages.drain(..cut);
        let mut lead = None;
        // Providers want a user message first; restate the request the
        // kept messages belong to.
        if self
            .conv
            .messages
            .first()
            .is_some_and(|m| m.role != Role::User)
        {
            let note = match request {
                // Condensed before: the note already restates the request.
                Some(r) if r.starts_with("[Earlier messages were condensed") => r,
                Some(r) => format!(
                    "[Earlier messages were condensed into the session summary.] The request being worked on: {r}"
                ),
                None => "[Earlier messages were condensed into the session summary.]".to_string(),
            };
            lead = Some(Message::user(note));
        }
        if let Some(note) = &lead {
            self.conv.messages.insert(0, note.clone());
        }
        self.conv.revision += 1;
        match level
            && self
                .conv
                .log
                .condensed(self.conv.revision, cut, lead.as_ref())
                .is_ok()
        {
            true => self.conv.clean = self.conv.messages.len(),
            // The whole view is written again instead: nothing lost.
            false => self.touched(0),
        }
        let after = estimate_tokens(&self.conv.messages);
        self.services.tracer.record(
            TraceKind::Condense,
            json!({"tokens_before": used, "tokens_after": after, "dropped_messages": cut}),
        );
        self.save(emit);
    }
}
