//! Words for JSON values in messages that say what was found.

use serde_json::Value;

/// The JSON type of `value` with its article ("an object", "a string",
/// "null"), for errors such as "expected an array, found an object".
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON type of `value` as a bare word ("object", "string", "null").
pub fn json_type(value: &Value) -> &'static str {
    let kind = json_kind(value);
    kind.rsplit(' ').next().unwrap_or(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_and_types() {
        assert_eq!(json_kind(&json!({})), "an object");
        assert_eq!(json_kind(&json!(null)), "null");
        assert_eq!(json_type(&json!([1])), "array");
        assert_eq!(json_type(&json!(true)), "boolean");
        assert_eq!(json_type(&json!(null)), "null");
    }
}
