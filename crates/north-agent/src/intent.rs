//! Tool arguments as traces and logs may hold them. (Intent lines, result
//! summaries and the command a call carries come from the tools:
//! `north_tools::describe`.)

use serde_json::Value;

/// A copy of tool arguments for traces: long strings (file contents, big
/// edits) are cut so traces stay small and never hold whole files.
pub fn trace_args(args: &Value) -> Value {
    match args {
        Value::String(t) if t.chars().count() > 200 => Value::String(format!(
            "{}… ({} chars)",
            t.chars().take(200).collect::<String>(),
            t.chars().count()
        )),
        Value::Array(items) => Value::Array(items.iter().map(trace_args).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), trace_args(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Argument keys whose values are file contents or edit text: the log
/// keeps their size, never their text (north.md §9).
const CONTENT_KEYS: &[&str] = &["old", "new", "content", "text", "body", "data"];

/// Tool arguments as the log may hold them: paths, commands, queries and
/// numbers kept; file contents and edit text replaced by their size; other
/// long strings cut. Keys are scrubbed later by the log writer.
pub(crate) fn log_args(args: &Value) -> Value {
    fn walk(v: &Value, content: bool) -> Value {
        match v {
            Value::String(t) if content => Value::String(format!("<{} chars>", t.chars().count())),
            Value::String(t) if t.chars().count() > 120 => Value::String(format!(
                "{}… ({} chars)",
                t.chars().take(120).collect::<String>(),
                t.chars().count()
            )),
            Value::Array(items) => Value::Array(items.iter().map(|i| walk(i, content)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            walk(v, content || CONTENT_KEYS.contains(&k.as_str())),
                        )
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(args, false)
}

#[cfg(test)]
mod log_args_tests {
    use super::log_args;
    use serde_json::json;

    #[test]
    fn edit_text_is_reduced_to_its_size_and_paths_are_kept() {
        let args = json!({"edits": [
            {"toolName": "edit_replace_exact", "args": {"path": "a.rs", "old": "fn a()", "new": "fn b() {}"}}
        ], "command": "cargo test"});
        assert_eq!(
            log_args(&args),
            json!({"edits": [
                {"toolName": "edit_replace_exact", "args": {"path": "a.rs", "old": "<6 chars>", "new": "<9 chars>"}}
            ], "command": "cargo test"})
        );
        let long = "x".repeat(300);
        let cut = log_args(&json!({ "query": long }));
        assert!(cut["query"].as_str().unwrap().ends_with("(300 chars)"));
    }
}
