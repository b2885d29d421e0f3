//! Agent events into the timeline: streamed text, tool intents and
//! results (a failed command with its output), approvals and their
//! decisions, usage, errors and notices.

use north_protocol::{ApprovalDecision, ApprovalKind, ErrorKind, Event};

use crate::app::{App, total_tokens};
use crate::diff::parse_unified;
use crate::transcript::{Item, details_text, is_large};

impl App {
    /// Renders one agent event into the timeline.
    pub fn handle_event(&mut self, event: Event) {
        let Some(event) = self.streamed(event) else {
            return;
        };
        self.finish_stream();
        match event {
            Event::Plan { goals, open_loops } => self.checklist.update(&goals, &open_loops),
            Event::SessionStarted {
                session_id,
                provider,
                model,
            } => {
                self.info.session_id = session_id;
                self.info.provider = provider;
                self.info.model = model;
            }
            Event::ToolIntent { line, .. } => self.push(Item::Intent(line)),
            Event::Agent {
                call_id,
                agent,
                event,
            } => self.agent_step(call_id, &agent, *event),
            Event::ToolResult {
                call_id,
                tool,
                ok,
                summary,
                details,
            } => self.tool_result(call_id, tool, ok, summary, details),
            Event::ApprovalRequested {
                call_id,
                kind,
                subject,
            } => {
                self.requests.insert(call_id, (kind, subject));
            }
            Event::ApprovalDecided { call_id, decision } => {
                self.approval_decided(call_id, decision);
            }
            // The review shows them beside the hunks (the files of the
            // approval carry them).
            Event::Diagnostics { .. } => {}
            Event::Diff { call_id, diff } => {
                self.diffs
                    .entry(call_id)
                    .or_insert_with(|| parse_unified(&diff));
            }
            Event::Usage { usage, total } => {
                self.tokens = total_tokens(&total);
                self.usage_total = total;
                self.context_used = usage
                    .input_tokens
                    .saturating_add(usage.cache_read_input_tokens)
                    .saturating_add(usage.cache_creation_input_tokens);
                self.streamed_bytes = 0;
            }
            Event::Error {
                kind: ErrorKind::Interrupted,
                ..
            } => self.push(Item::Interrupted),
            Event::Error { message, .. } => self.push(Item::Error(message)),
            Event::Notice { message, .. } => self.push_notice(Some(message)),
            // A hook that ran as it should is quiet; a block, a failure or
            // a kill is shown where it happened.
            Event::Hook {
                event,
                command,
                outcome,
                message,
            } => {
                let line = north_protocol::hook_line(event, &command, outcome, message.as_deref());
                self.push_notice(line);
            }
            // Thinking is for a collapsed view the TUI does not have yet.
            Event::Thinking { .. }
            | Event::ModelStopped { .. }
            | Event::AssistantText { .. }
            | Event::ToolOutput { .. }
            | Event::TurnStarted { .. }
            | Event::TurnEnd { .. } => {}
        }
    }

    /// Takes what streams (answer text, a command's live output) and
    /// counts it; any other event is handed back.
    fn streamed(&mut self, event: Event) -> Option<Event> {
        self.dirty = true;
        // Anything from the model ends a wait for a retry.
        if self
            .hint
            .as_deref()
            .is_some_and(|h| h.starts_with("retrying "))
        {
            self.hint = None;
        }
        if let Event::Thinking { text } = &event {
            self.streamed_bytes += text.len() as u64;
        }
        if let Event::AssistantText { text } = event {
            self.streamed_bytes += text.len() as u64;
            if let Some(block) = self.stream.push(&text) {
                self.push_block(block);
            }
            return None;
        }
        if let Event::ToolOutput { stream, text, .. } = &event {
            // Live output does not end the streamed answer above it.
            self.live_output.push(*stream, text);
            return None;
        }
        Some(event)
    }

    /// A sub-agent's step: kept to fold under its answer.
    fn agent_step(&mut self, call_id: String, agent: &str, event: Event) {
        let line = match event {
            Event::ToolIntent { line, .. } => Some(format!("{agent} · {line}")),
            Event::ToolResult {
                ok: false, summary, ..
            } => Some(format!("{agent} · ✗ {summary}")),
            Event::Error { message, .. } => Some(format!("{agent} · error: {message}")),
            _ => None,
        };
        if let Some(line) = line {
            self.agent_logs.entry(call_id).or_default().push(line);
        }
    }

    /// A tool's result, with its full output kept for the details view.
    fn tool_result(
        &mut self,
        call_id: String,
        tool: String,
        ok: bool,
        summary: String,
        details: Option<serde_json::Value>,
    ) {
        self.live_output.clear();
        // The user's own "deny"/"reject" line already says it: one
        // ✗ per refusal, not a second for the result it produced.
        let refused_just_now = matches!(
            self.items.last(),
            Some(Item::Decision {
                decision: ApprovalDecision::Deny | ApprovalDecision::Reject,
                ..
            })
        );
        if !ok && refused_just_now {
            return;
        }
        self.note_hosts(details.as_ref());
        let mut text = details.as_ref().map(details_text).unwrap_or_default();
        let mut has_details = is_large(&text);
        // A sub-agent's steps fold under its answer.
        if let Some(log) = self.agent_logs.remove(&call_id) {
            text = format!("{}\n\n{text}", log.join("\n"));
            has_details = true;
        }
        // A command the user ran (`!cmd`) shows what it printed.
        self.push(Item::result(
            tool,
            ok,
            summary,
            details.as_ref(),
            has_details,
            call_id.starts_with("user-"),
        ));
        if !text.trim().is_empty() {
            self.full_output.insert(self.items.len() - 1, text);
        }
    }

    /// The hosts a command's result says it reached or was refused
    /// through North's proxy, kept for the status line (a host refused
    /// once stays refused there).
    fn note_hosts(&mut self, details: Option<&serde_json::Value>) {
        let hosts = details
            .and_then(|d| d.get("output"))
            .and_then(|o| o.get("hosts"))
            .and_then(serde_json::Value::as_array);
        for h in hosts.into_iter().flatten() {
            let (Some(host), Some(allowed)) = (
                h.get("host").and_then(serde_json::Value::as_str),
                h.get("allowed").and_then(serde_json::Value::as_bool),
            ) else {
                continue;
            };
            match self.turn_hosts.iter_mut().find(|(n, _)| n == host) {
                Some(seen) => seen.1 &= allowed,
                None => self.turn_hosts.push((host.to_string(), allowed)),
            }
        }
    }

    /// The user's decision, shown with what it was about (and the diff it
    /// reviewed).
    fn approval_decided(&mut self, call_id: String, decision: ApprovalDecision) {
        if self.pending.as_ref().is_some_and(|p| p.call_id == call_id) {
            self.pending = None;
        }
        if let Some(files) = self.diffs.remove(&call_id) {
            self.push(Item::Review {
                files,
                decision: Some(decision),
            });
        }
        let reason = self.reasons.remove(&call_id);
        let (kind, subject) = self
            .requests
            .remove(&call_id)
            .unwrap_or((ApprovalKind::Shell, call_id));
        self.push(Item::Decision {
            kind,
            subject,
            decision,
            reason,
        });
    }

    /// A one-line notice in the timeline (none when there is nothing to say).
    fn push_notice(&mut self, title: Option<String>) {
        if let Some(title) = title {
            self.push(Item::Notice {
                title,
                body: Vec::new(),
            });
        }
    }
}
