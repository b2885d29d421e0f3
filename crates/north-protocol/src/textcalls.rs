//! The text tool-call protocol (runtime-contracts §3), for models without
//! native tool calling: a `<<<TOOL_CALLS_JSON>>>` block holding
//! `[{"id", "tool", "args"}]`, answered by tool-role messages whose content is
//! `{"id", "tool", "ok", "output", "error"}`.

use crate::{ToolCall, ToolOutcome};
use serde_json::{Value, json};
use thiserror::Error;

/// Why a tool-call block was rejected (nothing in it runs).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TextCallsError {
    /// Not JSON.
    #[error("tool-call block is not valid JSON: {0}")]
    Json(String),
    /// Not an array.
    #[error("tool-call block must be a JSON array of {{id, tool, args}} objects")]
    NotArray,
    /// An entry is invalid.
    #[error("tool call #{index}: {reason}")]
    Invalid {
        /// 0-based position.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// Two entries share an id.
    #[error("tool call id `{0}` is used twice; ids must be unique within a response")]
    DuplicateId(String),
    /// The end marker never came.
    #[error("tool-call block has no end marker <<<END_TOOL_CALLS_JSON>>>")]
    Unterminated,
}

/// Parses a block body into tool calls, checking every entry first.
pub fn parse(body: &str) -> Result<Vec<ToolCall>, TextCallsError> {
    let value: Value =
        serde_json::from_str(body.trim()).map_err(|e| TextCallsError::Json(e.to_string()))?;
    let items = value.as_array().ok_or(TextCallsError::NotArray)?;
    let mut calls: Vec<ToolCall> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let invalid = |reason: &str| TextCallsError::Invalid {
            index,
            reason: reason.into(),
        };
        let obj = item
            .as_object()
            .ok_or_else(|| invalid("must be an object"))?;
        let id = obj
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("`id` must be a non-empty string"))?;
        let tool = obj
            .get("tool")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("`tool` must be a non-empty string"))?;
        let args = obj
            .get("args")
            .filter(|a| a.is_object())
            .ok_or_else(|| invalid("`args` must be an object"))?;
        if calls.iter().any(|c| c.id == id) {
            return Err(TextCallsError::DuplicateId(id.into()));
        }
        calls.push(ToolCall {
            id: id.into(),
            name: tool.into(),
            arguments: args.clone(),
        });
    }
    Ok(calls)
}

/// The content of the tool-role message answering `call`.
pub fn result_content(call_id: &str, tool: &str, outcome: &ToolOutcome) -> String {
    json!({"id": call_id, "tool": tool, "ok": outcome.ok, "output": outcome.output, "error": outcome.error}).to_string()
}

/// Instructions for the system prompt when the text protocol is in use.
pub const INSTRUCTIONS: &str = "To call tools, end your message with one block:\n<<<TOOL_CALLS_JSON>>>\n[{\"id\":\"t1\",\"tool\":\"TOOL_NAME\",\"args\":{...}}]\n<<<END_TOOL_CALLS_JSON>>>\nIds are unique within the message. Results come back as tool messages {id, tool, ok, output, error}. Without tool calls, just answer.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_spec_example() {
        let calls = parse(r#"[{"id":"t1","tool":"fs.list_dir","args":{"path":"."}},{"id":"t2","tool":"shell.exec","args":{"cmd":"ls -la","timeout_s":10}}]"#).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].name, "shell.exec");
        assert_eq!(calls[1].arguments["timeout_s"], 10);
    }

    #[test]
    fn rejects_bad_entries() {
        assert_eq!(parse("{}"), Err(TextCallsError::NotArray));
        assert!(matches!(
            parse(r#"[{"tool":"x","args":{}}]"#),
            Err(TextCallsError::Invalid { index: 0, .. })
        ));
        assert!(matches!(
            parse(r#"[{"id":"a","tool":"x","args":[]}]"#),
            Err(TextCallsError::Invalid { .. })
        ));
        assert_eq!(
            parse(r#"[{"id":"a","tool":"x","args":{}},{"id":"a","tool":"y","args":{}}]"#),
            Err(TextCallsError::DuplicateId("a".into()))
        );
    }

    #[test]
    fn result_content_has_the_contract_shape() {
        let v: Value = serde_json::from_str(&result_content(
            "t1",
            "fs.list_dir",
            &ToolOutcome::ok(json!([1])),
        ))
        .unwrap();
        assert_eq!(
            v,
            json!({"id":"t1","tool":"fs.list_dir","ok":true,"output":[1],"error":null})
        );
    }
}
