//! Validating JSON into exact Rust types, with the path of the failure.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a value does not fit a type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    /// Path inside the value (`items[2].name`), `None` at the root.
    pub path: Option<String>,
    pub message: String,
}

pub(crate) fn deserialize<T: DeserializeOwned>(value: Value) -> Result<T, Rejection> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        Rejection {
            path: (path != ".").then_some(path),
            message: e.into_inner().to_string(),
        }
    })
}

/// Validates `value` as `T` and returns it as `T` serializes (the coerced form).
pub(crate) fn coerce<T: Serialize + DeserializeOwned>(value: Value) -> Result<Value, Rejection> {
    let typed: T = deserialize(value)?;
    serde_json::to_value(&typed).map_err(|e| Rejection {
        path: None,
        message: format!("cannot serialize the validated value: {e}"),
    })
}

/// A type-erased validator for one Rust type.
pub(crate) type Coerce = fn(Value) -> Result<Value, Rejection>;
