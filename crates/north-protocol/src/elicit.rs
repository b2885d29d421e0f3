//! Elicitation: a form an MCP server asks the user to fill in during a
//! call (`elicitation/create`), read from the restricted JSON Schema the
//! spec allows (flat; strings, numbers, integers, booleans, enums), and
//! the user's answer. Front ends render the form; this is the data.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What kind of value a field takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", content = "options")]
pub enum FieldKind {
    /// Free text.
    Text,
    /// A whole number.
    Integer,
    /// A number.
    Number,
    /// Yes or no.
    Boolean,
    /// One of these values.
    Choice(Vec<String>),
    /// Any of these values.
    Choices(Vec<String>),
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitField {
    /// The property name (the answer's key).
    pub name: String,
    /// What to call it, if the schema says.
    pub title: Option<String>,
    /// What it is for, if the schema says.
    pub description: Option<String>,
    /// What it takes.
    pub kind: FieldKind,
    /// Whether an accepted answer must have it.
    pub required: bool,
    /// The schema's default, which the form starts with.
    pub default: Option<Value>,
}

/// A server's request for input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitForm {
    /// The server asking.
    pub server: String,
    /// What it says it needs.
    pub message: String,
    /// The fields, in the schema's order.
    pub fields: Vec<ElicitField>,
    /// The schema as the server sent it (front ends that pass it on, like
    /// ACP editors, send it unchanged).
    pub schema: Value,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "action", content = "content")]
pub enum ElicitAnswer {
    /// Submitted with these values.
    Accept(Map<String, Value>),
    /// Refused; the call goes on without it.
    Decline,
    /// Dismissed; the call is abandoned.
    Cancel,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .or_else(|| x.get("const").and_then(Value::as_str).map(str::to_string))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn kind_of(prop: &Value) -> FieldKind {
    let options = strings(prop.get("enum"))
        .into_iter()
        .chain(strings(prop.get("oneOf")));
    let options: Vec<String> = options.collect();
    match prop.get("type").and_then(Value::as_str) {
        Some("array") => {
            let items = prop.get("items");
            let mut all = strings(items.and_then(|i| i.get("enum")));
            all.extend(strings(items.and_then(|i| i.get("anyOf"))));
            FieldKind::Choices(all)
        }
        _ if !options.is_empty() => FieldKind::Choice(options),
        Some("integer") => FieldKind::Integer,
        Some("number") => FieldKind::Number,
        Some("boolean") => FieldKind::Boolean,
        _ => FieldKind::Text,
    }
}

impl ElicitForm {
    /// The form `server` asks for with `message` and its `requestedSchema`.
    pub fn from_schema(server: &str, message: &str, schema: &Value) -> Self {
        let required = strings(schema.get("required"));
        let fields = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, prop)| ElicitField {
                        name: name.clone(),
                        title: prop
                            .get("title")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        description: prop
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        kind: kind_of(prop),
                        required: required.contains(name),
                        default: prop.get("default").cloned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        ElicitForm {
            server: server.to_string(),
            message: message.to_string(),
            fields,
            schema: schema.clone(),
        }
    }

    /// Every field's default, where the schema gives one.
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
            .collect()
    }

    /// Required fields without a default: what an unattended run cannot
    /// answer.
    pub fn required_without_default(&self) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|f| f.required && f.default.is_none())
            .map(|f| f.name.as_str())
            .collect()
    }
}

/// A form answer that is not a value of its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {expected}")]
pub struct FieldError {
    /// The field's name.
    pub field: String,
    /// What the field takes.
    pub expected: Expected,
}

/// What a form field takes, said to the person filling it in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Expected {
    /// A whole number.
    #[error("a whole number")]
    WholeNumber,
    /// A number.
    #[error("a number")]
    Number,
    /// Yes or no.
    #[error("yes or no")]
    YesOrNo,
    /// One of the options.
    #[error("one of {}", .0.join(", "))]
    OneOf(Vec<String>),
    /// Some of the options; `picked` is not one.
    #[error("`{picked}` is not one of {}", .options.join(", "))]
    SomeOf {
        /// The answer that is not an option.
        picked: String,
        /// The options.
        options: Vec<String>,
    },
}

impl ElicitField {
    /// `text` as this field's value, or why it is not one.
    pub fn parse(&self, text: &str) -> Result<Value, FieldError> {
        let t = text.trim();
        let fail = |expected| FieldError {
            field: self.name.clone(),
            expected,
        };
        match &self.kind {
            FieldKind::Text => Ok(Value::String(text.to_string())),
            FieldKind::Integer => t
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| fail(Expected::WholeNumber)),
            FieldKind::Number => t
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| fail(Expected::Number)),
            FieldKind::Boolean => match t.to_ascii_lowercase().as_str() {
                "true" | "yes" | "y" | "1" => Ok(Value::Bool(true)),
                "false" | "no" | "n" | "0" => Ok(Value::Bool(false)),
                _ => Err(fail(Expected::YesOrNo)),
            },
            FieldKind::Choice(options) => options
                .iter()
                .find(|o| o.as_str() == t)
                .map(|o| Value::String(o.clone()))
                .ok_or_else(|| fail(Expected::OneOf(options.clone()))),
            FieldKind::Choices(options) => {
                let picked: Vec<&str> = t
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                match picked.iter().find(|p| !options.iter().any(|o| o == *p)) {
                    Some(bad) => Err(fail(Expected::SomeOf {
                        picked: (*bad).to_string(),
                        options: options.clone(),
                    })),
                    None => Ok(Value::from(picked)),
                }
            }
        }
    }

    /// A value as the form shows it for editing.
    pub fn display(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| i.to_string())
                })
                .collect::<Vec<_>>()
                .join(", "),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_becomes_fields_with_defaults_and_values_parse_by_kind() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number"},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }, "required": ["score"]});
        let form = ElicitForm::from_schema("s", "please", &schema);
        assert_eq!(form.fields.len(), 5);
        let kinds: Vec<&FieldKind> = form.fields.iter().map(|f| &f.kind).collect();
        assert!(kinds.contains(&&FieldKind::Choice(vec![
            "active".into(),
            "inactive".into()
        ])));
        assert_eq!(form.defaults().len(), 4);
        assert_eq!(form.required_without_default(), ["score"]);
        let score = form.fields.iter().find(|f| f.name == "score").unwrap();
        assert_eq!(score.parse("95.5").unwrap(), json!(95.5));
        assert!(score.parse("lots").is_err());
        let status = form.fields.iter().find(|f| f.name == "status").unwrap();
        let e = status.parse("gone").unwrap_err();
        assert_eq!(e.field, "status");
        assert_eq!(e.to_string(), "status: one of active, inactive");
    }
}
