//! JSON schemas for structured output: the schema schemars generates, a copy
//! with `$ref`s inlined (recursive types keep theirs under `$defs`), and a
//! strict variant that OpenAI structured outputs and Anthropic tool input
//! schemas accept.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Keywords strict OpenAI structured outputs reject (or that carry no
/// meaning for a model); removed from the strict variant everywhere.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "format",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "not",
    "contentEncoding",
    "contentMediaType",
];

/// The root schema schemars generates for `T` (draft 2020-12).
pub(crate) fn generated_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The strict schema of `T` (see [`strict_schema`]).
pub fn strict_schema_for<T: JsonSchema>() -> Value {
    strict_schema(&generated_schema::<T>())
}

/// A strict copy of a JSON schema: `$ref`s inlined (a recursive type keeps
/// its definition under root `$defs`), every object closed
/// (`additionalProperties: false`) with all its properties `required`,
/// `oneOf` turned into `anyOf`, `allOf` parts merged, and keywords strict
/// providers reject (`format`, bounds, `default`, `title`, …) removed.
///
/// Fields that were optional stay optional in meaning: an `Option` field is
/// already nullable, so it is required but may be `null`. Maps (objects with
/// a schema for `additionalProperties` and no properties) are left open, as
/// strict mode has no way to express them.
pub fn strict_schema(schema: &Value) -> Value {
    let mut strict = inline_refs(schema);
    strictify(&mut strict);
    strict
}

/// A copy of `schema` with every `#/$defs/` reference inlined, except
/// references back into a definition being expanded (recursion), which stay
/// and keep their definition under root `$defs`.
pub(crate) fn inline_refs(schema: &Value) -> Value {
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut needed = BTreeSet::new();
    let mut root = inline(schema, defs, &mut Vec::new(), &mut needed, 0);
    let mut kept = Map::new();
    while let Some(name) = needed.iter().find(|n| !kept.contains_key(*n)).cloned() {
        let Some(def) = defs.get(&name) else {
            kept.insert(name, Value::Bool(true));
            continue;
        };
        let inlined = inline(def, defs, &mut vec![name.clone()], &mut needed, 0);
        kept.insert(name, inlined);
    }
    if let Value::Object(map) = &mut root {
        map.remove("$defs");
        if !kept.is_empty() {
            map.insert("$defs".to_owned(), Value::Object(kept));
        }
    }
    root
}

fn ref_name(map: &Map<String, Value>) -> Option<&str> {
    map.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

fn inline(
    node: &Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    needed: &mut BTreeSet<String>,
    depth: usize,
) -> Value {
    let Value::Object(map) = node else {
        return match node {
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| inline(v, defs, stack, needed, depth + 1))
                    .collect(),
            ),
            other => other.clone(),
        };
    };
    if let Some(name) = ref_name(map)
        && depth < 128
    {
        if stack.iter().any(|s| s == name) {
            needed.insert(name.to_owned());
            return node.clone();
        }
        if let Some(def) = defs.get(name) {
            stack.push(name.to_owned());
            let mut resolved = inline(def, defs, stack, needed, depth + 1);
            stack.pop();
            if let Value::Object(resolved_map) = &mut resolved {
                // Siblings of `$ref` (a field's own description) win over
                // the definition's.
                for (key, value) in map {
                    if key != "$ref" {
                        resolved_map
                            .insert(key.clone(), inline(value, defs, stack, needed, depth + 1));
                    }
                }
            }
            return resolved;
        }
    }
    let mut out = Map::new();
    for (key, value) in map {
        if key == "$defs" {
            continue;
        }
        let inlined = match key.as_str() {
            // Data, not schemas.
            "enum" | "const" | "examples" | "default" => value.clone(),
            "properties" => match value {
                Value::Object(props) => Value::Object(
                    props
                        .iter()
                        .map(|(k, v)| (k.clone(), inline(v, defs, stack, needed, depth + 1)))
                        .collect(),
                ),
                other => other.clone(),
            },
            _ => inline(value, defs, stack, needed, depth + 1),
        };
        out.insert(key.clone(), inlined);
    }
    Value::Object(out)
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    }
}

fn strictify(node: &mut Value) {
    let Value::Object(map) = node else {
        return;
    };
    for keyword in UNSUPPORTED_KEYWORDS {
        map.remove(*keyword);
    }
    if let Some(one_of) = map.remove("oneOf") {
        match map.get_mut("anyOf") {
            Some(Value::Array(any_of)) => {
                if let Value::Array(parts) = one_of {
                    any_of.extend(parts);
                }
            }
            _ => {
                map.insert("anyOf".to_owned(), one_of);
            }
        }
    }
    if let Some(Value::Array(parts)) = map.remove("allOf") {
        for mut part in parts {
            strictify(&mut part);
            merge_into(map, part);
        }
    }
    for key in ["anyOf", "prefixItems"] {
        if let Some(Value::Array(parts)) = map.get_mut(key) {
            parts.iter_mut().for_each(strictify);
        }
    }
    if let Some(items) = map.get_mut("items") {
        match items {
            Value::Array(parts) => parts.iter_mut().for_each(strictify),
            other => strictify(other),
        }
    }
    if let Some(Value::Object(defs)) = map.get_mut("$defs") {
        defs.values_mut().for_each(strictify);
    }
    let is_map = !map.contains_key("properties")
        && matches!(map.get("additionalProperties"), Some(Value::Object(_)));
    if is_map {
        if let Some(additional) = map.get_mut("additionalProperties") {
            strictify(additional);
        }
        return;
    }
    if is_object_schema(map) {
        let props = map
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        let mut required = Vec::new();
        if let Value::Object(props) = props {
            for (name, schema) in props.iter_mut() {
                strictify(schema);
                required.push(Value::String(name.clone()));
            }
        }
        // Sorted so the schema is the same whatever the map ordering.
        required.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        map.insert("required".to_owned(), Value::Array(required));
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
        if !map.contains_key("type") {
            map.insert("type".to_owned(), Value::String("object".to_owned()));
        }
    }
}

/// Merges an `allOf` part into its parent: properties and requirements are
/// unioned, other keywords fill gaps.
fn merge_into(parent: &mut Map<String, Value>, part: Value) {
    let Value::Object(part) = part else {
        return;
    };
    for (key, value) in part {
        match (key.as_str(), parent.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(more)) => {
                for (k, v) in more {
                    existing.entry(k).or_insert(v);
                }
            }
            ("required", Some(Value::Array(existing)), Value::Array(more)) => {
                for v in more {
                    if !existing.contains(&v) {
                        existing.push(v);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                parent.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recursive_refs_stay_under_defs() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                        "leaf": {"$ref": "#/$defs/Leaf"}
                    }
                },
                "Leaf": {"type": "string", "format": "uri"}
            }
        });
        let strict = strict_schema(&schema);
        assert_eq!(strict["properties"]["leaf"], json!({"type": "string"}));
        assert_eq!(
            strict["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(
            strict["$defs"]["Node"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            strict["$defs"]["Node"]["required"],
            json!(["children", "leaf"])
        );
        assert!(strict["$defs"].get("Leaf").is_none());
    }

    #[test]
    fn all_of_parts_merge() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "allOf": [{"properties": {"b": {"type": "integer", "minimum": 0}}, "required": ["b"]}]
        });
        let strict = strict_schema(&schema);
        assert_eq!(strict["required"], json!(["a", "b"]));
        assert_eq!(strict["properties"]["b"], json!({"type": "integer"}));
        assert!(strict.get("allOf").is_none());
    }
}
