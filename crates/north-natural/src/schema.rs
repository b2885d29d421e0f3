//! JSON schemas of Rust types (with their doc comments), cached by schema
//! id, plus the probe that finds a schema for a read binding when its type
//! has one.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use serde_json::Value;

/// Produces the JSON schema of one type.
pub type SchemaFn = fn() -> Arc<Value>;

fn cache() -> &'static RwLock<HashMap<String, Arc<Value>>> {
    static CACHE: OnceLock<RwLock<HashMap<String, Arc<Value>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The JSON schema of `T`, generated once per type.
pub fn schema_of<T: JsonSchema + ?Sized>() -> Arc<Value> {
    let id = T::schema_id();
    if let Some(hit) = cache()
        .read()
        .ok()
        .and_then(|c| c.get(id.as_ref()).cloned())
    {
        return hit;
    }
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let value = Arc::new(schema.to_value());
    if let Ok(mut c) = cache().write() {
        c.insert(id.into_owned(), value.clone());
    }
    value
}

/// Wraps a bound value so method resolution can pick a schema when the
/// type implements `JsonSchema` and none otherwise (autoref dispatch).
#[doc(hidden)]
pub struct SchemaProbe<'a, T: ?Sized>(pub &'a T);

/// Picked when the type implements `JsonSchema`.
#[doc(hidden)]
pub trait ViaJsonSchema {
    /// The schema function.
    fn natural_schema(&self) -> Option<SchemaFn>;
}

impl<T: JsonSchema + ?Sized> ViaJsonSchema for SchemaProbe<'_, T> {
    fn natural_schema(&self) -> Option<SchemaFn> {
        Some(schema_of::<T>)
    }
}

/// Picked otherwise.
#[doc(hidden)]
pub trait ViaNoSchema {
    /// No schema.
    fn natural_schema(&self) -> Option<SchemaFn>;
}

impl<T: ?Sized> ViaNoSchema for &SchemaProbe<'_, T> {
    fn natural_schema(&self) -> Option<SchemaFn> {
        None
    }
}

/// The sub-schema of a top-level property, with the root's definitions so
/// references still resolve.
pub(crate) fn property_schema(root: &Value, field: &str) -> Option<Value> {
    let mut prop = root.get("properties")?.get(field)?.clone();
    if let (Some(defs), Value::Object(map)) = (root.get("$defs"), &mut prop) {
        map.insert("$defs".to_owned(), defs.clone());
    }
    Some(prop)
}

/// A compact one-line rendering of a schema, cut to `limit` characters.
pub(crate) fn compact(schema: &Value, limit: usize) -> String {
    let mut text = match schema {
        Value::Object(map) if map.contains_key("$schema") => {
            let mut map = map.clone();
            map.remove("$schema");
            Value::Object(map).to_string()
        }
        other => other.to_string(),
    };
    if text.chars().count() > limit {
        text = text.chars().take(limit).collect();
        text.push_str("… (cut; call nh_help for the full schema)");
    }
    text
}
