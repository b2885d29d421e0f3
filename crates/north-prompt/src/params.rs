//! Section params: the bound every params type meets, the compile-time field
//! list derived by `#[derive(PromptParams)]`, and the per-prompt store of
//! bound values (one per type).

use std::any::{Any, TypeId};
use std::sync::Arc;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::PromptValidationError;

/// What a section's params type must be: a plain struct that serializes to
/// a JSON object (its fields fill the placeholders), has a JSON schema (to
/// check placeholders against its fields) and a `Default` (the last resort
/// when nothing is bound). Implemented for every such type.
pub trait Params: Serialize + JsonSchema + Default + Send + Sync + 'static {}

impl<T: Serialize + JsonSchema + Default + Send + Sync + 'static> Params for T {}

/// The serialized field names of a params struct, known at compile time.
///
/// Derive it with `#[derive(PromptParams)]`; `template!` and
/// `markdown_section!` then reject a placeholder typo while compiling.
pub trait PromptParams {
    /// Serialized names of the struct's fields (serde renames applied).
    const FIELDS: &'static [&'static str];
    /// False when the derive could not know every name (a
    /// `#[serde(flatten)]` field); the compile-time check then accepts any
    /// placeholder and construction checks it instead.
    const EXHAUSTIVE: bool;
}

/// Params for sections that need none: serializes to `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct NoParams {}

impl PromptParams for NoParams {
    const FIELDS: &'static [&'static str] = &[];
    const EXHAUSTIVE: bool = true;
}

/// The serialized property names of `P`, or why `P` is not a struct.
pub(crate) fn params_fields<P: JsonSchema>() -> Result<Vec<String>, String> {
    let schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<P>();
    struct_fields(&schema)
}

fn struct_fields(schema: &Schema) -> Result<Vec<String>, String> {
    let root = schema.as_value();
    let defs = root.get("$defs").and_then(Value::as_object);
    if !is_object_type(root) {
        return Err(format!(
            "its JSON schema has type {}",
            root.get("type")
                .map_or_else(|| "unknown".to_owned(), Value::to_string)
        ));
    }
    if matches!(root.get("additionalProperties"), Some(Value::Object(_)))
        && root.get("properties").is_none()
    {
        return Err("it is a map, not a struct".to_owned());
    }
    let mut fields = Vec::new();
    collect_properties(root, defs, &mut fields, 0);
    Ok(fields)
}

fn is_object_type(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        None => schema.get("properties").is_some(),
        _ => false,
    }
}

fn collect_properties(
    schema: &Value,
    defs: Option<&Map<String, Value>>,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs?.get(name))
    {
        collect_properties(target, defs, out, depth + 1);
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for name in props.keys() {
            if !out.iter().any(|f| f == name) {
                out.push(name.clone());
            }
        }
    }
    for combinator in ["allOf", "anyOf", "oneOf"] {
        if let Some(parts) = schema.get(combinator).and_then(Value::as_array) {
            for part in parts {
                collect_properties(part, defs, out, depth + 1);
            }
        }
    }
}

/// A params value of any type, for [`crate::Prompt::bind_all`]. Cloning it
/// shares the value, which nothing can change once bound.
#[derive(Clone)]
pub struct ParamValue {
    type_id: TypeId,
    type_name: &'static str,
    value: Arc<dyn Any + Send + Sync>,
}

impl ParamValue {
    /// Wraps a params value.
    pub fn new<P: Params>(params: P) -> Self {
        ParamValue {
            type_id: TypeId::of::<P>(),
            type_name: std::any::type_name::<P>(),
            value: Arc::new(params),
        }
    }

    /// The wrapped value's type name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl std::fmt::Debug for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamValue")
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// The bound params of a prompt: at most one value per type.
#[derive(Clone, Default)]
pub(crate) struct ParamStore {
    values: Vec<ParamValue>,
    duplicate: Option<&'static str>,
}

impl ParamStore {
    pub(crate) fn insert(&mut self, value: ParamValue) {
        match self.values.iter_mut().find(|v| v.type_id == value.type_id) {
            Some(slot) => *slot = value,
            None => self.values.push(value),
        }
    }

    /// Binds several values at once; the same type twice is remembered and
    /// refused at render.
    pub(crate) fn insert_all(&mut self, values: impl IntoIterator<Item = ParamValue>) {
        let mut seen: Vec<TypeId> = Vec::new();
        for value in values {
            if seen.contains(&value.type_id) {
                self.duplicate.get_or_insert(value.type_name);
            }
            seen.push(value.type_id);
            self.insert(value);
        }
    }

    pub(crate) fn check(&self) -> Result<(), PromptValidationError> {
        match self.duplicate {
            Some(params_type) => Err(PromptValidationError::DuplicateParams { params_type }),
            None => Ok(()),
        }
    }

    pub(crate) fn get(&self, type_id: TypeId) -> Option<&(dyn Any + Send + Sync)> {
        self.values
            .iter()
            .find(|v| v.type_id == type_id)
            .map(|v| v.value.as_ref())
    }

    pub(crate) fn get_typed<P: 'static>(&self) -> Option<&P> {
        self.get(TypeId::of::<P>())?.downcast_ref::<P>()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Serialize, JsonSchema, Default)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        first_name: String,
        #[serde(rename = "years")]
        age: u32,
        #[serde(skip)]
        _hidden: u8,
        #[serde(flatten)]
        extra: Inner,
    }

    #[derive(Serialize, JsonSchema, Default)]
    struct Inner {
        note: Option<String>,
    }

    #[test]
    fn fields_follow_serialized_names() {
        let mut fields = params_fields::<Renamed>().unwrap();
        fields.sort();
        assert_eq!(fields, ["firstName", "note", "years"]);
    }

    #[test]
    fn non_structs_are_refused() {
        assert!(params_fields::<String>().is_err());
        assert!(params_fields::<Vec<Inner>>().is_err());
        assert!(params_fields::<BTreeMap<String, String>>().is_err());
        assert_eq!(params_fields::<NoParams>().unwrap(), Vec::<String>::new());
    }
}
