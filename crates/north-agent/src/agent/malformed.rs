//! Tool calls the model could not finish or form: cut off by the output
//! token limit mid-arguments, arguments that are not a JSON object, or no
//! tool name. Nothing runs for them; the history keeps a well-formed call
//! (`{}` arguments) so every provider accepts the next request, and the
//! model gets an error result saying what was wrong and what it sent.

use north_protocol::ToolCall;
use serde_json::{Map, Value};

/// A call as planned for this step: runnable, or rejected with a reason.
#[derive(Debug, Clone)]
pub(super) struct Planned {
    /// The call, as kept in the history.
    pub call: ToolCall,
    /// Why it cannot run: (message for the model, line for the user).
    pub problem: Option<(String, String)>,
}

/// Name kept in the history for a call that came without one.
const UNNAMED: &str = "unnamed_tool";

fn excerpt(raw: &str) -> String {
    let mut out: String = raw.chars().take(300).collect();
    if out.len() < raw.len() {
        out.push('…');
    }
    out
}

/// Checks each call of a response; `cut` when the response stopped at the
/// output limit of `max_tokens`.
pub(super) fn vet(calls: Vec<ToolCall>, cut: bool, max_tokens: u32) -> Vec<Planned> {
    calls
        .into_iter()
        .map(|call| {
            let problem = problem(&call, cut, max_tokens);
            let call = match &problem {
                None => call,
                Some(_) => ToolCall {
                    name: if call.name.trim().is_empty() {
                        UNNAMED.to_string()
                    } else {
                        call.name
                    },
                    arguments: Value::Object(Map::new()),
                    id: call.id,
                },
            };
            Planned { call, problem }
        })
        .collect()
}

fn problem(call: &ToolCall, cut: bool, max_tokens: u32) -> Option<(String, String)> {
    let name = call.name.trim();
    if name.is_empty() {
        return Some((
            "your tool call has no tool name, so nothing ran. Call one of the listed tools by its name.".to_string(),
            "the model made a tool call without a tool name; it was told, nothing ran".to_string(),
        ));
    }
    let sent = match &call.arguments {
        Value::Object(_) => return None,
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    if cut {
        return Some((
            format!(
                "your call to `{name}` was cut off by the output token limit ({max_tokens} tokens) before its arguments were complete, so nothing ran. You sent: {}. Call it again with complete JSON arguments, and keep the call short.",
                excerpt(&sent)
            ),
            format!(
                "the model's call to {name} was cut off by the output token limit ({max_tokens} tokens); it was told, nothing ran"
            ),
        ));
    }
    let why = match &call.arguments {
        Value::String(raw) => match serde_json::from_str::<Value>(raw) {
            Err(e) => format!("they are not valid JSON ({e})"),
            Ok(v) => format!("they are {}, not an object", north_protocol::json_kind(&v)),
        },
        other => format!(
            "they are {}, not an object",
            north_protocol::json_kind(other)
        ),
    };
    Some((
        format!(
            "the arguments of your call to `{name}` could not be used: {why}, so nothing ran. You sent: {}. Call it again with a JSON object as arguments.",
            excerpt(&sent)
        ),
        format!(
            "the model's call to {name} had unusable arguments ({why}); it was told, nothing ran"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments,
        }
    }

    #[test]
    fn a_cut_call_is_kept_well_formed_and_explained() {
        let planned = vet(
            vec![call("read_file", Value::String("{\n    \"path".into()))],
            true,
            20,
        );
        let p = &planned[0];
        assert_eq!(p.call.arguments, json!({}));
        assert_eq!(p.call.name, "read_file");
        let (model, user) = p.problem.clone().unwrap();
        assert!(
            model.contains("cut off by the output token limit (20 tokens)"),
            "{model}"
        );
        assert!(
            model.contains("\"path"),
            "the model sees what it sent: {model}"
        );
        assert!(user.contains("read_file"), "{user}");
    }

    #[test]
    fn invalid_json_names_the_parse_error() {
        let planned = vet(
            vec![call("read_file", Value::String("{path: 1}".into()))],
            false,
            100,
        );
        let (model, _) = planned[0].problem.clone().unwrap();
        assert!(
            model.contains("not valid JSON (key must be a string"),
            "{model}"
        );
        let planned = vet(vec![call("read_file", json!([1]))], false, 100);
        assert!(
            planned[0]
                .problem
                .clone()
                .unwrap()
                .0
                .contains("an array, not an object")
        );
    }

    #[test]
    fn nameless_calls_get_a_placeholder_name_and_good_calls_pass() {
        let planned = vet(
            vec![call(" ", json!({})), call("list_root", json!({}))],
            false,
            100,
        );
        assert_eq!(planned[0].call.name, UNNAMED);
        assert!(planned[0].problem.is_some());
        assert!(planned[1].problem.is_none());
    }
}
