//! Structured output: the declaration a template carries (object of a type
//! or array of a type), its schemas, and parsing a model's answer.

mod parse;
mod schema;

use std::any::TypeId;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) use parse::type_mismatch;
pub use parse::{OutputParseError, OutputParseErrorKind, parse_output_value};
pub use schema::{strict_schema, strict_schema_for};

use crate::error::PromptValidationError;

/// Key of the wrapper object the strict schema of an array output uses:
/// providers require an object at the root, so `[..]` travels as
/// `{"items": [..]}`. Parsing accepts both forms.
pub const ARRAY_WRAPPER_KEY: &str = "items";

/// What a template's output type may be: `()` (no structured output), a
/// struct (an object), or a `Vec` of structs (an array). Implemented for
/// every type with a schema that deserializes; others are refused when the
/// template is built.
pub trait Output: JsonSchema + DeserializeOwned + 'static {}

impl<T: JsonSchema + DeserializeOwned + 'static> Output for T {}

/// Whether the output is one JSON object or an array of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputContainer {
    /// A single object.
    Object,
    /// An array of objects.
    Array,
}

impl std::fmt::Display for OutputContainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutputContainer::Object => "object",
            OutputContainer::Array => "array",
        })
    }
}

/// The structured output a prompt declares, with its schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredOutputConfig {
    container: OutputContainer,
    type_name: &'static str,
    allow_extra_keys: bool,
    schema: Arc<Value>,
    strict_schema: Arc<Value>,
    /// `schema` with `$ref`s inlined, used to validate answers.
    validation: Arc<Value>,
}

impl StructuredOutputConfig {
    /// Object or array.
    pub fn container(&self) -> OutputContainer {
        self.container
    }

    /// The output type's name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Whether unknown keys in an answer are tolerated (default false).
    pub fn allow_extra_keys(&self) -> bool {
        self.allow_extra_keys
    }

    /// The JSON schema schemars generates for the output type.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The strict variant for OpenAI structured outputs and Anthropic tool
    /// input schemas (an array output is wrapped as
    /// `{"items": [..]}`, see [`ARRAY_WRAPPER_KEY`]).
    pub fn strict_schema(&self) -> &Value {
        &self.strict_schema
    }

    pub(crate) fn validation_schema(&self) -> &Value {
        &self.validation
    }
}

/// The declaration for output type `O`, or `None` for `()`.
pub(crate) fn declare<O: Output>(
    allow_extra_keys: bool,
) -> Result<Option<StructuredOutputConfig>, PromptValidationError> {
    if TypeId::of::<O>() == TypeId::of::<()>() {
        return Ok(None);
    }
    let type_name = std::any::type_name::<O>();
    let refuse = |reason: String| PromptValidationError::OutputNotStruct {
        output_type: type_name,
        reason,
    };
    let generated = schema::generated_schema::<O>();
    let validation = schema::inline_refs(&generated);
    let container = match schema_type(&validation) {
        Some("object") => {
            check_struct(&validation).map_err(refuse)?;
            OutputContainer::Object
        }
        Some("array") => {
            let items = validation
                .get("items")
                .ok_or_else(|| refuse("the array has no item schema".to_owned()))?;
            let items = resolve(items, &validation);
            if schema_type(items) != Some("object") {
                return Err(refuse("array items are not structs".to_owned()));
            }
            check_struct(items).map_err(refuse)?;
            OutputContainer::Array
        }
        other => {
            return Err(refuse(format!(
                "its schema has type {}",
                other.unwrap_or("(none; an enum or union)")
            )));
        }
    };
    let strict = schema::strict_schema(&generated);
    let strict = match container {
        OutputContainer::Object => strict,
        OutputContainer::Array => wrap_array(strict),
    };
    Ok(Some(StructuredOutputConfig {
        container,
        type_name,
        allow_extra_keys,
        schema: Arc::new(generated),
        strict_schema: Arc::new(strict),
        validation: Arc::new(validation),
    }))
}

fn schema_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) => Some(t),
        _ => None,
    }
}

/// Follows a remaining (recursive) `$ref` into root `$defs`.
pub(crate) fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some("#") => root,
        Some(reference) => reference
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs")?.get(name))
            .unwrap_or(schema),
        None => schema,
    }
}

fn check_struct(schema: &Value) -> Result<(), String> {
    if schema.get("properties").is_none()
        && matches!(schema.get("additionalProperties"), Some(Value::Object(_)))
    {
        return Err("it is a map, not a struct".to_owned());
    }
    Ok(())
}

/// Moves an array schema under `{"items": ..}`, keeping `$defs` at the root.
fn wrap_array(mut strict: Value) -> Value {
    let defs = strict.as_object_mut().and_then(|m| m.remove("$defs"));
    let mut properties = Map::new();
    properties.insert(ARRAY_WRAPPER_KEY.to_owned(), strict);
    let mut root = Map::new();
    root.insert("type".to_owned(), Value::String("object".to_owned()));
    root.insert("properties".to_owned(), Value::Object(properties));
    root.insert(
        "required".to_owned(),
        Value::Array(vec![Value::String(ARRAY_WRAPPER_KEY.to_owned())]),
    );
    root.insert("additionalProperties".to_owned(), Value::Bool(false));
    if let Some(defs) = defs {
        root.insert("$defs".to_owned(), defs);
    }
    Value::Object(root)
}
