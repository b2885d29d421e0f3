//! The final JSON contract: `{effect: {type, value_json}}` or
//! `{error: {message, type}}`, parsed strictly.

use serde_json::Value;

/// A parsed final answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Final {
    /// Done; the function goes on.
    Proceed,
    Continue,
    Break,
    /// `value_json`, if given and not null.
    Return(Option<String>),
    Failed {
        message: String,
        error_type: Option<String>,
    },
}

fn only_keys(
    map: &serde_json::Map<String, Value>,
    allowed: &[&str],
    what: &str,
) -> Result<(), String> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unexpected key `{k}` in {what} (allowed: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

fn optional_string(
    map: &serde_json::Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "`{what}.{key}` must be a string or null, not {other}"
        )),
    }
}

/// Parses the model's final text. Only surrounding whitespace is tolerated.
pub(crate) fn parse_final(text: &str) -> Result<Final, String> {
    let value: Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("the final answer must be a single JSON object ({e})"))?;
    let Value::Object(map) = value else {
        return Err(format!(
            "the final answer must be a JSON object, not {}",
            crate::summary::json_type(&value)
        ));
    };
    only_keys(&map, &["effect", "error"], "the final answer")?;
    let effect = map.get("effect").filter(|v| !v.is_null());
    let error = map.get("error").filter(|v| !v.is_null());
    match (effect, error) {
        (Some(_), Some(_)) => Err("the final answer has both `effect` and `error`".to_owned()),
        (None, None) => Ok(Final::Proceed),
        (None, Some(error)) => {
            let Value::Object(e) = error else {
                return Err(format!("`error` must be an object, not {error}"));
            };
            only_keys(e, &["message", "type"], "`error`")?;
            let message = match e.get("message") {
                Some(Value::String(m)) => m.clone(),
                _ => return Err("`error.message` must be a string".to_owned()),
            };
            Ok(Final::Failed {
                message,
                error_type: optional_string(e, "type", "error")?,
            })
        }
        (Some(effect), None) => {
            let Value::Object(e) = effect else {
                return Err(format!("`effect` must be an object, not {effect}"));
            };
            only_keys(e, &["type", "value_json"], "`effect`")?;
            let value_json = optional_string(e, "value_json", "effect")?;
            match e.get("type").and_then(Value::as_str) {
                Some("continue") => Ok(Final::Continue),
                Some("break") => Ok(Final::Break),
                Some("return") => Ok(Final::Return(value_json)),
                Some(other) => Err(format!(
                    "unknown effect type `{other}` (expected continue, break or return)"
                )),
                None => Err(
                    "`effect.type` must be one of \"continue\", \"break\", \"return\"".to_owned(),
                ),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_contract() {
        assert_eq!(parse_final("{}").unwrap(), Final::Proceed);
        assert_eq!(
            parse_final(" {\"effect\": null, \"error\": null}\n").unwrap(),
            Final::Proceed
        );
        assert_eq!(
            parse_final(r#"{"effect": {"type": "break"}}"#).unwrap(),
            Final::Break
        );
        assert_eq!(
            parse_final(r#"{"effect": {"type": "continue", "value_json": null}}"#).unwrap(),
            Final::Continue
        );
        assert_eq!(
            parse_final(r#"{"effect": {"type": "return", "value_json": "[1]"}}"#).unwrap(),
            Final::Return(Some("[1]".into()))
        );
        assert_eq!(
            parse_final(r#"{"error": {"message": "no data", "type": "input"}}"#).unwrap(),
            Final::Failed {
                message: "no data".into(),
                error_type: Some("input".into())
            }
        );
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "done",
            "```json\n{}\n```",
            "[]",
            r#"{"effect": {"type": "jump"}}"#,
            r#"{"effect": {"type": "return", "value_json": 3}}"#,
            r#"{"effect": {"type": "break"}, "error": {"message": "x"}}"#,
            r#"{"result": 1}"#,
            r#"{"error": {"type": "x"}}"#,
            r#"{"effect": "break"}"#,
        ] {
            assert!(parse_final(bad).is_err(), "{bad}");
        }
    }
}
