//! Tool arguments: a compact JSON schema generated from a typed Rust struct,
//! and validation against it before a tool runs, with errors naming the field.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Arguments that do not fit a tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid arguments for `{tool}`: {field}: {message}")]
pub struct ArgsError {
    /// The tool the arguments were for.
    pub tool: String,
    /// The offending field as a path (`range.start`, `edits[2].args.old`), or
    /// `(arguments)` for the object itself.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// The input schema of one tool and its compiled validator.
pub(crate) struct ArgsSchema {
    schema: Value,
    validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for ArgsSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgsSchema")
            .field("schema", &self.schema)
            .finish()
    }
}

impl ArgsSchema {
    /// The schema of `T`, compacted for the model: subschemas inlined, no
    /// `$schema`, `title` or `format` keys, no top-level description.
    pub fn of<T: JsonSchema>() -> Self {
        let generator = SchemaSettings::draft2020_12()
            .with(|s| {
                s.inline_subschemas = true;
                s.meta_schema = None;
            })
            .for_deserialize()
            .into_generator();
        let mut schema = generator.into_root_schema_for::<T>().to_value();
        if let Some(obj) = schema.as_object_mut() {
            obj.remove("title");
            obj.remove("description");
        }
        strip_keys(&mut schema);
        let validator = jsonschema::validator_for(&schema).ok();
        ArgsSchema { schema, validator }
    }

    /// The JSON schema sent to the model.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Validates `args` and deserializes them. A JSON string holding an object
    /// (how decoders keep malformed argument text) is parsed first; `null`
    /// means no arguments.
    pub fn parse<T: DeserializeOwned>(&self, tool: &str, args: Value) -> Result<T, ArgsError> {
        let args = normalize(tool, args)?;
        if let Some(validator) = &self.validator
            && let Some(error) = validator.iter_errors(&args).next()
        {
            return Err(ArgsError {
                tool: tool.to_owned(),
                field: field_name(error.instance_path().as_str()),
                message: error.to_string(),
            });
        }
        serde_json::from_value(args).map_err(|e| ArgsError {
            tool: tool.to_owned(),
            field: "(arguments)".to_owned(),
            message: e.to_string(),
        })
    }
}

/// Checks `args` against a tool's published input schema (as in its
/// [`ToolSpec`](north_protocol::ToolSpec)) without running the tool, so a
/// front end can tell a usage error from a tool failure.
pub fn check_against(tool: &str, schema: &Value, args: &Value) -> Result<(), ArgsError> {
    let args = normalize(tool, args.clone())?;
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Ok(());
    };
    match validator.iter_errors(&args).next() {
        Some(error) => Err(ArgsError {
            tool: tool.to_owned(),
            field: field_name(error.instance_path().as_str()),
            message: error.to_string(),
        }),
        None => Ok(()),
    }
}

fn normalize(tool: &str, args: Value) -> Result<Value, ArgsError> {
    match args {
        Value::Null => Ok(Value::Object(Default::default())),
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) | Err(_) => Err(ArgsError {
                tool: tool.to_owned(),
                field: "(arguments)".to_owned(),
                message: "arguments must be a JSON object".to_owned(),
            }),
        },
        other => Ok(other),
    }
}

/// `/edits/2/args/old` → `edits[2].args.old`.
pub(crate) fn field_name(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        let part = part.replace("~1", "/").replace("~0", "~");
        if part.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part);
        }
    }
    if out.is_empty() {
        "(arguments)".to_owned()
    } else {
        out
    }
}

/// Drops what the model does not need: formats, titles, `default: null`,
/// and the Rust-facing type docs of array items.
/// `schema` as a model needs it, smaller: an optional property's type
/// without `null` (leaving it out says the same), no `default` values, no
/// `minimum: 0` (counts and lines are never negative), no
/// `additionalProperties: false` (the properties listed say what is
/// read). Validation keeps the whole schema, so what a model sends is
/// checked as before: an unknown property is still refused, by name.
pub fn for_model(schema: &Value) -> Value {
    let mut out = schema.clone();
    trim_for_model(&mut out);
    out
}

fn trim_for_model(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("default");
    if map.get("additionalProperties") == Some(&Value::Bool(false)) {
        map.remove("additionalProperties");
    }
    if map.get("minimum").and_then(Value::as_f64) == Some(0.0) {
        map.remove("minimum");
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    // Only what holds schemas is walked: a property named `default` or an
    // `enum` value that is an object is data, and stays.
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                drop_null_type(prop);
            }
            trim_for_model(prop);
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        match map.get_mut(key) {
            Some(Value::Array(list)) => list.iter_mut().for_each(trim_for_model),
            Some(sub) => trim_for_model(sub),
            None => {}
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = map.get_mut(key) {
            list.iter_mut().for_each(trim_for_model);
        }
    }
    for key in ["$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(named)) = map.get_mut(key) {
            named.values_mut().for_each(trim_for_model);
        }
    }
}

/// `"type": ["integer", "null"]` → `"type": "integer"`.
fn drop_null_type(prop: &mut Value) {
    let Some(Value::Array(types)) = prop.get("type") else {
        return;
    };
    let rest: Vec<&Value> = types
        .iter()
        .filter(|t| t.as_str() != Some("null"))
        .collect();
    if let [only] = rest.as_slice()
        && rest.len() < types.len()
    {
        let only = (*only).clone();
        if let Some(obj) = prop.as_object_mut() {
            obj.insert("type".into(), only);
        }
    }
}

fn strip_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("format");
            map.remove("$schema");
            map.remove("title");
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if let Some(Value::Object(items)) = map.get_mut("items") {
                items.remove("description");
            }
            for v in map.values_mut() {
                strip_keys(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_keys),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_models_schema_drops_what_leaving_out_says() {
        let full = serde_json::json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": ["integer", "null"], "minimum": 0},
                "regex": {"type": "boolean", "default": false},
                "range": {"type": ["object", "null"], "properties": {
                    "start": {"type": "integer", "minimum": 0},
                    "end": {"type": ["integer", "null"], "minimum": 1}
                }, "required": ["start"]}
            },
            "required": ["path"]
        });
        let small = for_model(&full);
        assert_eq!(
            small,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"type": "integer"},
                    "regex": {"type": "boolean"},
                    "range": {"type": "object", "properties": {
                        "start": {"type": "integer"},
                        "end": {"type": "integer", "minimum": 1}
                    }, "required": ["start"]}
                },
                "required": ["path"]
            })
        );
        // Data is not schema: a property named `default`, an enum of objects.
        let data = serde_json::json!({"type": "object", "properties": {
            "default": {"type": "string", "enum": [{"minimum": 0, "default": 1}]}}});
        assert_eq!(for_model(&data), data);
        // A required nullable stays nullable: leaving it out is an error.
        let required = serde_json::json!({"type": "object",
            "properties": {"x": {"type": ["string", "null"]}}, "required": ["x"]});
        assert_eq!(for_model(&required), required);
    }

    #[test]
    fn field_names_read_like_paths() {
        assert_eq!(field_name(""), "(arguments)");
        assert_eq!(field_name("/range/start"), "range.start");
        assert_eq!(field_name("/edits/2/args/old"), "edits[2].args.old");
    }

    #[derive(Debug, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Demo {
        /// A count.
        count: u32,
    }

    #[test]
    fn validation_names_the_bad_field() {
        let schema = ArgsSchema::of::<Demo>();
        let err = schema
            .parse::<Demo>("demo", serde_json::json!({"count": "x"}))
            .unwrap_err();
        assert_eq!(err.field, "count");
        let err = schema
            .parse::<Demo>("demo", serde_json::json!({"count": 1, "extra": 2}))
            .unwrap_err();
        assert!(err.message.contains("extra"), "{err}");
        let ok: Demo = schema
            .parse("demo", Value::String("{\"count\": 3}".into()))
            .unwrap();
        assert_eq!(ok.count, 3);
    }
}
