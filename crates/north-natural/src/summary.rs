//! Bounded, human-readable summaries of JSON values for prompts and tool
//! results: strings sliced, numbers as they are, containers as shapes with
//! samples.

use std::fmt::Write;

use serde_json::Value;

/// Characters of a string shown before it is cut.
const STRING_SLICE: usize = 160;
/// Elements or entries sampled from a container.
const SAMPLE: usize = 3;

pub(crate) use north_protocol::json_type;

/// A one-line summary of `value`.
pub(crate) fn summarize(value: &Value) -> String {
    let mut out = String::new();
    write_summary(&mut out, value, 2);
    out
}

fn write_summary(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::String(s) => {
            let count = s.chars().count();
            if count <= STRING_SLICE {
                let _ = write!(out, "{}", Value::String(s.clone()));
            } else {
                let head: String = s.chars().take(STRING_SLICE).collect();
                let _ = write!(out, "{}… ({count} chars)", Value::String(head));
            }
        }
        Value::Array(items) => {
            if depth == 0 {
                let _ = write!(out, "array of {}", items.len());
                return;
            }
            let _ = write!(out, "array of {} [", items.len());
            for (i, item) in items.iter().take(SAMPLE).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_summary(out, item, depth - 1);
            }
            if items.len() > SAMPLE {
                out.push_str(", …");
            }
            out.push(']');
        }
        Value::Object(map) => {
            if depth == 0 {
                let _ = write!(out, "object with {} keys", map.len());
                return;
            }
            let _ = write!(out, "object with {} keys {{", map.len());
            for (i, (k, v)) in map.iter().take(SAMPLE + 2).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{k}: ");
                write_summary(out, v, depth - 1);
            }
            if map.len() > SAMPLE + 2 {
                out.push_str(", …");
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Appends one line of a locals summary: `- name (`Type`, note) = value`.
/// `note` is empty or starts with `, `.
pub(crate) fn local_line(out: &mut String, name: &str, type_name: &str, note: &str, value: &Value) {
    let _ = writeln!(out, "- {name} (`{type_name}`{note}) = {}", summarize(value));
}

/// A type name without module paths: `alloc::vec::Vec<app::Label>` becomes
/// `Vec<Label>`.
pub(crate) fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear();
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(&segment);
    out
}

/// Cuts `text` to at most `limit` characters, marking the cut.
pub(crate) fn bounded(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(limit).collect();
    out.push_str("\n… (cut)");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn type_names_lose_their_paths() {
        assert_eq!(short_type_name("alloc::vec::Vec<app::Label>"), "Vec<Label>");
        assert_eq!(
            short_type_name("core::option::Option<(u32, &str)>"),
            "Option<(u32, &str)>"
        );
        assert_eq!(
            short_type_name("std::collections::HashMap<alloc::string::String, i64>"),
            "HashMap<String, i64>"
        );
    }

    #[test]
    fn summaries_follow_the_rules() {
        assert_eq!(summarize(&json!(3)), "3");
        assert_eq!(summarize(&json!(null)), "null");
        assert_eq!(summarize(&json!("hi")), "\"hi\"");
        let long = "x".repeat(500);
        let s = summarize(&json!(long));
        assert!(s.ends_with("… (500 chars)"), "{s}");
        assert_eq!(summarize(&json!([1, 2, 3, 4])), "array of 4 [1, 2, 3, …]");
        assert_eq!(
            summarize(&json!({"a": [1, [2, 3]], "b": {"c": 1}})),
            "object with 2 keys {a: array of 2 [1, array of 2], b: object with 1 keys {c: 1}}"
        );
    }
}
