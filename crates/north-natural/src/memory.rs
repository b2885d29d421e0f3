//! Memory: a user type the environment owns for its duration. The model
//! updates it field by field through `nh_assign memory.<field>`; each update
//! is validated against the whole type and applied atomically.

use std::any::type_name;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::Error;
use crate::schema::schema_of;

/// What a memory type needs: JSON both ways and a schema. It must
/// serialize to a JSON object (its fields are the assignable targets).
pub trait MemoryModel: Serialize + DeserializeOwned + JsonSchema + Send + 'static {}

impl<T: Serialize + DeserializeOwned + JsonSchema + Send + 'static> MemoryModel for T {}

/// The memory used when an environment declares none: no fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct NoMemory {}

struct State<M> {
    value: M,
    json: Value,
}

/// A shared handle to a typed memory value. Clone it to keep reading the
/// memory after handing it to an [`Environment`](crate::Environment).
pub struct Memory<M> {
    state: Arc<Mutex<State<M>>>,
}

impl<M> Clone for Memory<M> {
    fn clone(&self) -> Self {
        Memory {
            state: self.state.clone(),
        }
    }
}

impl<M> fmt::Debug for Memory<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memory")
            .field("type", &type_name::<M>())
            .finish_non_exhaustive()
    }
}

fn to_object<M: Serialize>(value: &M) -> Result<Value, Error> {
    let json = serde_json::to_value(value).map_err(|e| Error::Memory {
        type_name: type_name::<M>().to_owned(),
        message: format!("cannot serialize: {e}"),
    })?;
    if !json.is_object() {
        return Err(Error::Memory {
            type_name: type_name::<M>().to_owned(),
            message: format!(
                "must serialize to a JSON object, not {}",
                crate::summary::json_type(&json)
            ),
        });
    }
    Ok(json)
}

impl Memory<NoMemory> {
    /// The memory with no fields: memory is disabled, so blocks get no
    /// `memory.<field>` targets. The spec makes memory a required part of an
    /// environment; this is how to say "none" explicitly.
    pub fn none() -> Self {
        Memory {
            state: Arc::new(Mutex::new(State {
                value: NoMemory {},
                json: Value::Object(serde_json::Map::new()),
            })),
        }
    }
}

impl<M: MemoryModel> Memory<M> {
    /// Wraps `value`; it must serialize to a JSON object.
    pub fn new(value: M) -> Result<Self, Error> {
        let json = to_object(&value)?;
        Ok(Memory {
            state: Arc::new(Mutex::new(State { value, json })),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<M>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the current value.
    pub fn with<R>(&self, f: impl FnOnce(&M) -> R) -> R {
        f(&self.lock().value)
    }

    /// A copy of the current value.
    pub fn get(&self) -> M
    where
        M: Clone,
    {
        self.lock().value.clone()
    }

    /// The current value as JSON.
    pub fn json(&self) -> Value {
        self.lock().json.clone()
    }

    /// Replaces the value, returning the old one.
    pub fn replace(&self, value: M) -> Result<M, Error> {
        let json = to_object(&value)?;
        let mut state = self.lock();
        state.json = json;
        Ok(std::mem::replace(&mut state.value, value))
    }
}

/// Why a memory field update was refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejected {
    pub path: Option<String>,
    pub message: String,
}

/// Memory with its type erased, as the environment holds it.
pub(crate) trait ErasedMemory: Send + Sync {
    fn json(&self) -> Value;
    fn type_name(&self) -> &'static str;
    fn schema(&self) -> Arc<Value>;
    /// Validates the memory with `field` set to `value`; on success stores
    /// it and returns the field's value as the type serializes it.
    fn assign_field(&self, field: &str, value: Value) -> Result<Value, Rejected>;
}

impl<M: MemoryModel> ErasedMemory for Memory<M> {
    fn json(&self) -> Value {
        Memory::json(self)
    }

    fn type_name(&self) -> &'static str {
        type_name::<M>()
    }

    fn schema(&self) -> Arc<Value> {
        schema_of::<M>()
    }

    fn assign_field(&self, field: &str, value: Value) -> Result<Value, Rejected> {
        let mut state = self.lock();
        let mut candidate = state.json.clone();
        let Some(slot) = candidate.as_object_mut().and_then(|o| o.get_mut(field)) else {
            let fields: Vec<String> = state
                .json
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            return Err(Rejected {
                path: None,
                message: format!(
                    "memory has no field `{field}` (fields: {})",
                    if fields.is_empty() {
                        "none".to_owned()
                    } else {
                        fields.join(", ")
                    }
                ),
            });
        };
        *slot = value;
        let parsed: M = crate::validate::deserialize(candidate).map_err(|r| Rejected {
            path: r.path.map(|p| {
                p.strip_prefix(field)
                    .map(|rest| format!("{field}{rest}"))
                    .unwrap_or(p)
            }),
            message: r.message,
        })?;
        let json = to_object(&parsed).map_err(|e| Rejected {
            path: None,
            message: e.to_string(),
        })?;
        let stored = json.get(field).cloned().unwrap_or(Value::Null);
        state.value = parsed;
        state.json = json;
        Ok(stored)
    }
}

/// The environment's memory, type-erased.
#[derive(Clone)]
pub struct MemoryHandle(pub(crate) Arc<dyn ErasedMemory>);

impl fmt::Debug for MemoryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MemoryHandle")
            .field(&self.0.type_name())
            .finish()
    }
}

impl MemoryHandle {
    /// The memory's current value as JSON.
    pub fn json(&self) -> Value {
        self.0.json()
    }

    /// The memory's Rust type name.
    pub fn type_name(&self) -> &'static str {
        self.0.type_name()
    }
}

impl<M: MemoryModel> From<Memory<M>> for MemoryHandle {
    fn from(memory: Memory<M>) -> Self {
        MemoryHandle(Arc::new(memory))
    }
}

impl<M: MemoryModel> From<&Memory<M>> for MemoryHandle {
    fn from(memory: &Memory<M>) -> Self {
        MemoryHandle(Arc::new(memory.clone()))
    }
}
