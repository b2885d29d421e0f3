//! Reading what North sent a model (`--record-requests`, one provider-
//! neutral request per line): the one tool result or the user-side text a
//! test is about, so an assertion looks where the thing it checks is, not
//! anywhere in the whole request.

use serde_json::Value;

/// The content blocks of every message in `request`.
fn blocks(request: &Value) -> impl Iterator<Item = &Value> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
}

/// The result `request` carries for the tool call `call_id`: the
/// `{ok, output, error}` envelope, parsed (a result that is not JSON comes
/// back as a string). Panics, naming the call and the request, when there
/// is none.
pub fn tool_result(request: &Value, call_id: &str) -> Value {
    let content = blocks(request)
        .find(|b| b["type"] == "tool_result" && b["call_id"] == call_id)
        .and_then(|b| b["content"].as_str())
        .unwrap_or_else(|| panic!("no result for the call {call_id} in {request}"));
    serde_json::from_str(content).unwrap_or_else(|_| Value::String(content.to_owned()))
}

/// The text blocks of `request`'s messages (the user's words, North's
/// notices between turns), one per line; tool results are left out.
pub fn texts(request: &Value) -> String {
    blocks(request)
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names of the tools `request` offers, in order (none: empty).
pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// The definition of the tool `name` that `request` offers (name,
/// description, schema), or `Value::Null` when it offers none by that name.
pub fn tool(request: &Value, name: &str) -> Value {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

/// The text of `request`'s system prompt (a string, or text blocks as an
/// Anthropic request carries it); empty when there is none.
pub fn system(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
