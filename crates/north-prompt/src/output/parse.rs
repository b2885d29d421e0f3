//! Finding the JSON in a model's answer and checking it against the
//! declared output (`parse_output_value`); [`crate::reply`] deserializes it
//! for a rendered prompt.

use std::fmt;

use north_protocol::json_kind;
use serde_json::{Map, Value};

use super::{ARRAY_WRAPPER_KEY, OutputContainer, StructuredOutputConfig, resolve};

/// Why an answer did not parse as the declared output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputParseErrorKind {
    /// The prompt declares no structured output.
    #[error("the prompt declares no structured output")]
    NotDeclared,
    /// No JSON object or array anywhere in the answer.
    #[error("no JSON object or array found in the answer")]
    NoJson,
    /// A fenced `json` block was found but is not valid JSON.
    #[error("the fenced json block is not valid JSON: {message}")]
    InvalidFencedJson {
        /// serde's message.
        message: String,
    },
    /// An object was expected and something else came, or the reverse.
    #[error("expected a JSON {expected}, found {found}")]
    WrongContainer {
        /// The declared container.
        expected: OutputContainer,
        /// What the answer held.
        found: &'static str,
    },
    /// A value that must be an object is not one (an array item, say).
    #[error("at `{path}`: expected an object, found {found}")]
    NotAnObject {
        /// JSON path of the value (`$[2]`).
        path: String,
        /// What was there.
        found: &'static str,
    },
    /// Required fields are absent.
    #[error("at `{path}`: missing required field(s): {}", .fields.join(", "))]
    MissingFields {
        /// JSON path of the object.
        path: String,
        /// The absent fields.
        fields: Vec<String>,
    },
    /// Keys the output type does not have (and extra keys are not allowed).
    #[error("at `{path}`: unknown key(s): {}", .keys.join(", "))]
    UnknownKeys {
        /// JSON path of the object.
        path: String,
        /// The unknown keys.
        keys: Vec<String>,
    },
    /// The JSON has the right shape but a value does not fit its type.
    #[error("the answer does not match the output type: {message}")]
    InvalidValue {
        /// serde's message.
        message: String,
    },
}

/// A structured-output failure, with the raw answer attached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not parse structured output: {kind}")]
pub struct OutputParseError {
    kind: OutputParseErrorKind,
    raw: String,
}

impl OutputParseError {
    pub(crate) fn new(kind: OutputParseErrorKind, raw: &str) -> Self {
        OutputParseError {
            kind,
            raw: raw.to_owned(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &OutputParseErrorKind {
        &self.kind
    }

    /// The model's answer as received.
    pub fn raw(&self) -> &str {
        &self.raw
    }
}

pub(crate) fn type_mismatch(message: &str) -> String {
    let Some(rest) = message.strip_prefix("invalid type: ") else {
        return message.to_string();
    };
    let Some((found, expected)) = rest.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let expected = match expected.trim() {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "integer",
        "f32" | "f64" => "number",
        "a boolean" => "boolean",
        "a string" | "a borrowed string" | "a character" => "string",
        e if e.starts_with("a sequence") => "array",
        e if e.starts_with("struct ") || e.starts_with("a map") => "object",
        e => e,
    };
    let found = if found.starts_with("string ") || found.starts_with("integer ") {
        found.to_string()
    } else if found.starts_with("floating point ") {
        found.replacen("floating point", "number", 1)
    } else {
        match found {
            "map" => "object".to_string(),
            "sequence" => "array".to_string(),
            "unit value" => "null".to_string(),
            other => other.to_string(),
        }
    };
    format!("expected {expected}, found {found}")
}

/// Steps 1–3 of [`parse_structured_output`](crate::parse_structured_output), returning the checked JSON.
pub fn parse_output_value(
    text: &str,
    config: &StructuredOutputConfig,
) -> Result<Value, OutputParseError> {
    let fail = |kind| OutputParseError::new(kind, text);
    if let Some(direct) = extract_direct(text) {
        return check(direct.map_err(fail)?, config).map_err(fail);
    }
    let (first, second) = match config.container() {
        OutputContainer::Object => (b'{', b'['),
        OutputContainer::Array => (b'[', b'{'),
    };
    // Prose may hold bracketed text that happens to be JSON (`[1]`): the
    // first candidate that fits the output wins, else the first one's error.
    let mut first_error = None;
    for candidate in scan_for(text, first) {
        match check(candidate, config) {
            Ok(value) => return Ok(value),
            Err(kind) => {
                first_error.get_or_insert(kind);
            }
        }
    }
    if let Some(kind) = first_error {
        return Err(fail(kind));
    }
    match scan_for(text, second).into_iter().next() {
        Some(other) => check(other, config).map_err(fail),
        None => Err(fail(OutputParseErrorKind::NoJson)),
    }
}

/// Container and field checks (with coercions) of one JSON value.
fn check(mut value: Value, config: &StructuredOutputConfig) -> Result<Value, OutputParseErrorKind> {
    if config.container() == OutputContainer::Array {
        value = unwrap_array(value);
    }
    let matches = match config.container() {
        OutputContainer::Object => value.is_object(),
        OutputContainer::Array => value.is_array(),
    };
    if !matches {
        return Err(OutputParseErrorKind::WrongContainer {
            expected: config.container(),
            found: json_kind(&value),
        });
    }
    let root = config.validation_schema();
    let checker = Checker {
        root,
        allow_extra_keys: config.allow_extra_keys(),
    };
    checker.conform(&mut value, root, &mut "$".to_owned(), 0)?;
    Ok(value)
}

fn unwrap_array(value: Value) -> Value {
    match value {
        Value::Object(mut map)
            if map.len() == 1 && map.get(ARRAY_WRAPPER_KEY).is_some_and(Value::is_array) =>
        {
            map.remove(ARRAY_WRAPPER_KEY).unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// The fenced block's JSON (which must be valid) or the whole message's;
/// `None` when neither applies and the text must be scanned.
fn extract_direct(text: &str) -> Option<Result<Value, OutputParseErrorKind>> {
    if let Some(block) = fenced_json_block(text) {
        return Some(serde_json::from_str(block.trim()).map_err(|err| {
            OutputParseErrorKind::InvalidFencedJson {
                message: err.to_string(),
            }
        }));
    }
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    serde_json::from_str(trimmed).ok().map(Ok)
}

/// The body of the first ```` ```json ```` fence (language tag matched
/// case-insensitively), if it is closed.
fn fenced_json_block(text: &str) -> Option<&str> {
    let mut search = 0;
    while let Some(found) = text.get(search..)?.find("```") {
        let tag_start = search + found + 3;
        let rest = text.get(tag_start..)?;
        let line_end = rest.find('\n')?;
        let tag = rest.get(..line_end)?.trim();
        if tag.eq_ignore_ascii_case("json") {
            let body_start = tag_start + line_end + 1;
            let body = text.get(body_start..)?;
            let close = body.find("```")?;
            return body.get(..close);
        }
        search = tag_start;
    }
    None
}

/// Most candidates looked at in one answer.
const MAX_CANDIDATES: usize = 64;

/// Values that start at an `open` byte and parse as JSON, left to right,
/// not looking inside a value already found (strings and nesting are the
/// JSON parser's business, so braces inside strings do not confuse it).
fn scan_for(text: &str, open: u8) -> Vec<Value> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() && found.len() < MAX_CANDIDATES {
        if bytes[at] != open {
            at += 1;
            continue;
        }
        let Some(rest) = text.get(at..) else {
            at += 1;
            continue;
        };
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                at += stream.byte_offset().max(1);
                found.push(value);
            }
            _ => at += 1,
        }
    }
    found
}

struct Checker<'a> {
    root: &'a Value,
    allow_extra_keys: bool,
}

struct Types<'a>(Option<&'a Value>);

impl Types<'_> {
    fn has(&self, name: &str) -> bool {
        match self.0 {
            Some(Value::String(t)) => t == name,
            Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
            _ => false,
        }
    }
}

impl Checker<'_> {
    fn conform(
        &self,
        value: &mut Value,
        schema: &Value,
        path: &mut String,
        depth: usize,
    ) -> Result<(), OutputParseErrorKind> {
        if depth > 64 {
            return Ok(());
        }
        let schema = resolve(schema, self.root);
        let types = Types(schema.get("type"));
        if value.is_null() && (types.has("null") || allows_null(schema, self.root)) {
            return Ok(());
        }
        if let Some(alternatives) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            let mut non_null = alternatives
                .iter()
                .filter(|alt| !is_null_schema(resolve(alt, self.root)));
            if let (Some(only), None) = (non_null.next(), non_null.next()) {
                return self.conform(value, only, path, depth + 1);
            }
            return Ok(());
        }
        let is_object = types.has("object") || schema.get("properties").is_some();
        if is_object {
            return self.conform_object(value, schema, path, depth);
        }
        if types.has("array") {
            if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    let result = self.conform(item, item_schema, path, depth + 1);
                    path.truncate(len);
                    result?;
                }
            }
            return Ok(());
        }
        coerce_scalar(value, &types);
        Ok(())
    }

    fn conform_object(
        &self,
        value: &mut Value,
        schema: &Value,
        path: &mut String,
        depth: usize,
    ) -> Result<(), OutputParseErrorKind> {
        let Value::Object(object) = value else {
            return Err(OutputParseErrorKind::NotAnObject {
                path: path.clone(),
                found: json_kind(value),
            });
        };
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut missing: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|name| !object.contains_key(*name))
            .map(str::to_owned)
            .collect();
        if !missing.is_empty() {
            missing.sort();
            return Err(OutputParseErrorKind::MissingFields {
                path: path.clone(),
                fields: missing,
            });
        }
        let open = matches!(
            schema.get("additionalProperties"),
            Some(Value::Bool(true) | Value::Object(_))
        );
        if !self.allow_extra_keys && !open {
            let mut unknown: Vec<String> = object
                .keys()
                .filter(|k| !properties.contains_key(*k))
                .cloned()
                .collect();
            if !unknown.is_empty() {
                unknown.sort();
                return Err(OutputParseErrorKind::UnknownKeys {
                    path: path.clone(),
                    keys: unknown,
                });
            }
        }
        for (key, field) in object.iter_mut() {
            if let Some(field_schema) = properties.get(key) {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                let result = self.conform(field, field_schema, path, depth + 1);
                path.truncate(len);
                result?;
            }
        }
        Ok(())
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
}

fn allows_null(schema: &Value, root: &Value) -> bool {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .is_some_and(|alts| alts.iter().any(|a| is_null_schema(resolve(a, root))))
}

/// The only coercions applied: a string holding a number where a number is
/// expected, `"true"`/`"false"` where a boolean is, and an integral float
/// where an integer is. Nothing is ever turned into a string.
fn coerce_scalar(value: &mut Value, types: &Types<'_>) {
    if types.has("string") {
        return;
    }
    let replacement = match &*value {
        Value::String(s) if types.has("integer") => {
            let s = s.trim();
            s.parse::<i64>()
                .map(Value::from)
                .or_else(|_| s.parse::<u64>().map(Value::from))
                .ok()
        }
        Value::String(s) if types.has("number") => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number)),
        Value::String(s) if types.has("boolean") => match s.trim() {
            t if t.eq_ignore_ascii_case("true") => Some(Value::Bool(true)),
            t if t.eq_ignore_ascii_case("false") => Some(Value::Bool(false)),
            _ => None,
        },
        Value::Number(n) if types.has("integer") && !n.is_i64() && !n.is_u64() => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15)
            .map(|f| Value::from(f as i64)),
        _ => None,
    };
    if let Some(replacement) = replacement {
        *value = replacement;
    }
}

impl fmt::Display for super::StructuredOutputConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {}", self.container(), self.type_name())
    }
}
