//! Headless output shared by `north exec` and `north mesh`: JSONL events, a
//! line-aware text rendering of agent events, one-line failures, and the
//! exit statuses both commands document.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use north_protocol::{ApprovalDecision, ErrorKind, Event};

/// The model or provider failed (after retries).
pub const EXIT_PROVIDER: u8 = 1;
/// Invalid use or configuration.
pub const EXIT_USAGE: u8 = 2;
/// Done, but an edit, command or capability was denied.
pub const EXIT_DENIED: u8 = 3;
/// The step limit was reached.
pub const EXIT_STEP_LIMIT: u8 = 4;
/// Interrupted with Ctrl+C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// `e` and its causes on one line, each said once: most of North's errors
/// already print their source, which anyhow's `{:#}` would repeat.
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Prints one value as a JSON line and flushes.
pub fn emit_json(value: &impl serde::Serialize) {
    if let Ok(line) = serde_json::to_string(value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Reports a failure: an `error` event in JSON mode, one line on stderr always.
pub fn fail(json: bool, kind: ErrorKind, message: &str, code: u8) -> ExitCode {
    tracing::info!(%message, code, "command failed");
    if json {
        emit_json(&Event::Error {
            kind,
            message: message.to_string(),
        });
    }
    eprintln!("north: error: {message}");
    ExitCode::from(code)
}

/// Text output for a terminal or a pipe that keeps track of line starts, so
/// intent lines never glue onto streamed text.
#[derive(Debug)]
pub struct Text {
    at_line_start: AtomicBool,
}

impl Default for Text {
    fn default() -> Self {
        Text {
            at_line_start: AtomicBool::new(true),
        }
    }
}

impl Text {
    /// Writes `text` as is.
    pub fn out(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        if let Some(last) = text.chars().last() {
            self.at_line_start.store(last == '\n', Ordering::Relaxed);
        }
    }

    /// Writes `text` on a line of its own.
    pub fn line(&self, text: &str) {
        if !self.at_line_start.load(Ordering::Relaxed) {
            self.out("\n");
        }
        self.out(&format!("{text}\n"));
    }

    /// Ends the output on a line of its own.
    pub fn finish(&self) {
        if !self.at_line_start.load(Ordering::Relaxed) {
            self.out("\n");
        }
    }

    /// A command's output under its result line: the last lines of stdout
    /// and stderr, so the human output shows what the model saw.
    fn command_output(&self, details: &serde_json::Value) {
        const SHOWN: usize = 20;
        // `details` is the tool's whole result envelope.
        let details = details.get("output").unwrap_or(details);
        let Some(result) = north_protocol::ShellResult::read(details) else {
            return;
        };
        for (text, stream, mark) in [
            (&result.stdout, "stdout", "│"),
            (&result.stderr, "stderr", "┆"),
        ] {
            let lines: Vec<&str> = text.lines().collect();
            if lines.len() > SHOWN {
                self.line(&format!(
                    "    {mark} … {} earlier line(s) of {stream}",
                    lines.len() - SHOWN
                ));
            }
            for line in &lines[lines.len().saturating_sub(SHOWN)..] {
                self.line(&format!("    {mark} {line}"));
            }
        }
    }

    /// Renders an agent event. `announce_interrupt`: print "interrupted"
    /// here (exec) or leave it to the caller's own status (mesh).
    pub fn event(&self, event: &Event, announce_interrupt: bool) {
        match event {
            Event::AssistantText { text } => self.out(text),
            Event::ToolIntent { line, .. } => self.line(&format!("• {line}")),
            // A sub-agent's steps, one line each under its call; its
            // answer is the call's result.
            Event::Agent { agent, event, .. } => match &**event {
                Event::ToolIntent { line, .. } => self.line(&format!("  • [{agent}] {line}")),
                Event::ToolResult {
                    ok: false, summary, ..
                } => self.line(&format!("  ✗ [{agent}] {summary}")),
                Event::Error { message, .. } => eprintln!("north: [{agent}] error: {message}"),
                _ => {}
            },
            Event::ToolResult {
                ok,
                summary,
                details,
                ..
            } => {
                self.line(&format!("  {} {summary}", if *ok { "↳" } else { "✗" }));
                if let Some(details) = details {
                    self.command_output(details);
                }
            }
            Event::Diff { diff, .. } => self.line(diff.trim_end()),
            Event::Diagnostics { files, .. } => {
                for f in files {
                    for line in diagnostics_lines(f) {
                        self.line(&line);
                    }
                }
            }
            Event::ApprovalDecided { decision, .. } => {
                self.line(&format!("  [{}]", decision_word(*decision)));
            }
            Event::Error {
                kind: ErrorKind::Interrupted,
                ..
            } => {
                if announce_interrupt {
                    eprintln!("north: interrupted");
                }
            }
            Event::Error { message, .. } => eprintln!("north: error: {message}"),
            Event::Notice { message, .. } => {
                self.finish();
                eprintln!("north: note: {message}");
            }
            Event::Hook {
                event,
                command,
                outcome,
                message,
            } => {
                if let Some(line) =
                    north_protocol::hook_line(*event, command, *outcome, message.as_deref())
                {
                    self.finish();
                    eprintln!("north: {line}");
                }
            }
            Event::Plan { goals, open_loops } => {
                self.finish();
                if let Some(plan) = plan_line(goals, open_loops) {
                    eprintln!("north: plan: {plan}");
                }
            }
            // Thinking and live command output are in --json; the text
            // output shows the answer, and each command's output once it ends.
            Event::Thinking { .. }
            | Event::ToolOutput { .. }
            | Event::ModelStopped { .. }
            | Event::SessionStarted { .. }
            | Event::TurnStarted { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::TurnEnd { .. } => {}
        }
    }
}

/// A decision as the text output says it.
/// What a language server said of a proposed file, as `exec` prints it.
fn diagnostics_lines(f: &north_protocol::FileDiagnostics) -> Vec<String> {
    if !f.checked {
        return vec![format!(
            "  ? {} ({} language server): {}",
            f.path,
            f.server,
            f.no_answer.as_deref().unwrap_or("no answer")
        )];
    }
    if f.introduced.is_empty() && f.resolved.is_empty() {
        return vec![format!(
            "  ✓ {}: no new errors or warnings ({})",
            f.path, f.server
        )];
    }
    let mut out = Vec::new();
    for d in &f.introduced {
        let mark = if d.severity == north_protocol::Severity::Error {
            "✗"
        } else {
            "⚠"
        };
        out.push(format!(
            "  {mark} {}:{}: {}",
            f.path,
            d.line,
            d.message.lines().next().unwrap_or_default()
        ));
    }
    for d in &f.resolved {
        out.push(format!(
            "  ✓ {}:{}: resolved: {}",
            f.path,
            d.line,
            d.message.lines().next().unwrap_or_default()
        ));
    }
    out
}

fn decision_word(decision: ApprovalDecision) -> &'static str {
    match decision {
        ApprovalDecision::Accept => "accepted",
        ApprovalDecision::Reject => "rejected",
        ApprovalDecision::RunOnce => "allowed once",
        ApprovalDecision::Always => "always allowed",
        ApprovalDecision::AlwaysPrefix => "always allowed (prefix)",
        ApprovalDecision::Deny => "denied",
        ApprovalDecision::Grant => "granted",
    }
}

/// The plan on one line: open loops first (◐), then the other goals (☐);
/// `None` when there is nothing in it.
fn plan_line(goals: &[String], open_loops: &[String]) -> Option<String> {
    let mut items: Vec<String> = open_loops.iter().map(|l| format!("◐ {l}")).collect();
    items.extend(
        goals
            .iter()
            .filter(|g| !open_loops.contains(g))
            .map(|g| format!("☐ {g}")),
    );
    (!items.is_empty()).then(|| items.join(" · "))
}

/// The runtime a headless command runs on (one thread); on failure, the
/// failure said (as JSON with `json`) and the exit code.
pub fn current_thread(json: bool) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            fail(
                json,
                ErrorKind::Internal,
                &format!("cannot start the runtime: {e}"),
                EXIT_PROVIDER,
            )
        })
}
