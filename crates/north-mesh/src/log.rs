//! The execution log: what each step did (tool calls, results, the
//! executor's words), collected from the agent's events and handed to the
//! memory agent (and to any extra agent) as text.

use north_protocol::Event;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::prompts::{Step, plan_text};

/// Characters of one tool result kept in the log the memory agent reads.
pub const RESULT_CHARS: usize = 600;

/// One tool call and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallLog {
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// The intent line (`Command requested: \`ls\``).
    pub intent: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The result (output, or `error: ...`), cut to [`RESULT_CHARS`].
    pub result: String,
}

/// What one plan step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLog {
    /// 1-based step number.
    pub index: usize,
    /// The step's description.
    pub description: String,
    /// Tool calls, in order.
    pub calls: Vec<CallLog>,
    /// What the executor said.
    pub answer: String,
}

/// A note an extra agent added to the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentNote {
    /// The agent's name.
    pub agent: String,
    /// Its note.
    pub text: String,
}

/// The whole run, for the memory agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecutionLog {
    /// The goal.
    pub goal: String,
    /// The plan.
    pub plan: Vec<Step>,
    /// Each executed step.
    pub steps: Vec<StepLog>,
    /// Notes of extra agents.
    pub notes: Vec<AgentNote>,
}

fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        text.to_owned()
    } else {
        format!(
            "{}… ({} more characters)",
            text.chars().take(max).collect::<String>(),
            count - max
        )
    }
}

/// The text of a tool result from an event's details (`{ok, output, error}`).
fn result_text(ok: bool, summary: &str, details: Option<&Value>) -> String {
    let Some(details) = details else {
        return summary.to_owned();
    };
    if !ok {
        let error = details
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or(summary);
        return format!("error: {error}");
    }
    match details.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => summary.to_owned(),
    }
}

impl StepLog {
    /// An empty log for step `index`.
    pub fn new(index: usize, description: &str) -> Self {
        StepLog {
            index,
            description: description.to_owned(),
            calls: Vec::new(),
            answer: String::new(),
        }
    }

    /// Takes in one agent event.
    pub fn observe(&mut self, event: &Event) {
        match event {
            Event::ToolIntent {
                call_id,
                tool,
                line,
                ..
            } => self.calls.push(CallLog {
                call_id: call_id.clone(),
                tool: tool.clone(),
                intent: line.clone(),
                ok: false,
                result: String::new(),
            }),
            Event::ToolResult {
                call_id,
                tool,
                ok,
                summary,
                details,
            } => {
                let result = cut(&result_text(*ok, summary, details.as_ref()), RESULT_CHARS);
                match self.calls.iter_mut().rev().find(|c| &c.call_id == call_id) {
                    Some(call) => {
                        call.ok = *ok;
                        call.result = result;
                    }
                    None => self.calls.push(CallLog {
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        intent: format!("Calling `{tool}`"),
                        ok: *ok,
                        result,
                    }),
                }
            }
            Event::AssistantText { text } => self.answer.push_str(text),
            _ => {}
        }
    }

    /// Calls that failed (refused or errored).
    pub fn failed(&self) -> usize {
        self.calls.iter().filter(|c| !c.ok).count()
    }
}

impl ExecutionLog {
    /// The log as the memory agent reads it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "Goal: {}\n\nPlan:\n{}\n\nExecution:\n",
            self.goal,
            plan_text(&self.plan)
        );
        for step in &self.steps {
            out.push_str(&format!("Step {}: {}\n", step.index, step.description));
            for call in &step.calls {
                let status = if call.ok { "ok" } else { "failed" };
                out.push_str(&format!("- {} → {status}\n", call.intent));
                for line in call.result.lines() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
            let answer = step.answer.trim();
            if !answer.is_empty() {
                out.push_str(&format!("Executor: {}\n", cut(answer, RESULT_CHARS)));
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\nNotes:\n");
            for note in &self.notes {
                out.push_str(&format!("- {}: {}\n", note.agent, note.text.trim()));
            }
        }
        out
    }

    /// All calls of all steps.
    pub fn calls(&self) -> impl Iterator<Item = &CallLog> {
        self.steps.iter().flat_map(|s| s.calls.iter())
    }
}
