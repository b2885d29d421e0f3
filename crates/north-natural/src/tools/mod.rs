//! Tools the model may call during a block: the `nh_*` built-ins, user
//! tools, the context a tool runs with and the registry one scope keeps.
//! Which scopes a block sees, and where a registration goes, is
//! [`crate::scope`]'s job.

mod builtin;
mod context;

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::ToolSpec;
use serde_json::Value;

use crate::error::{ToolOrigin, ToolRegistrationError};
use crate::schema::SchemaFn;

pub(crate) use builtin::{BUILTIN_NAMES, Builtin, Outcome, builtin_tools};
pub use context::ToolContext;
pub(crate) use context::{BindingInfo, LocalKind, Locals};

/// What a user tool returns on failure: a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A failure with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError { message }
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

/// The future a tool handler returns.
pub type ToolFuture<'a> = BoxFuture<'a, Result<Value, ToolError>>;

type Handler = Arc<dyn for<'a> Fn(&'a ToolContext, Value) -> ToolFuture<'a> + Send + Sync>;

#[derive(Clone)]
pub(crate) enum Run {
    Builtin(Builtin),
    User(Handler),
}

#[derive(Clone)]
enum InputSchema {
    Value(Arc<Value>),
    Lazy(SchemaFn),
}

/// A tool: a name, a description, the JSON schema of its arguments and a
/// handler that receives the block's [`ToolContext`]. Declare one with
/// `#[north_natural::tool]` or build one with [`Tool::new`] /
/// [`Tool::from_fn`].
#[derive(Clone)]
pub struct Tool {
    name: String,
    description: String,
    schema: InputSchema,
    pub(crate) run: Run,
    overwrite: bool,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("overwrite", &self.overwrite)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// An async tool. `handler` gets the block context and the arguments
    /// object as the model sent it.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl for<'a> Fn(&'a ToolContext, Value) -> ToolFuture<'a> + Send + Sync + 'static,
    ) -> Self {
        Tool {
            name: name.into(),
            description: description.into(),
            schema: InputSchema::Value(Arc::new(input_schema)),
            run: Run::User(Arc::new(handler)),
            overwrite: false,
        }
    }

    /// A synchronous tool.
    pub fn from_fn(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(&ToolContext, Value) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Self {
        let handler = Arc::new(handler);
        Tool::new(name, description, input_schema, move |ctx, args| {
            let out = handler(ctx, args);
            Box::pin(async move { out })
        })
    }

    #[doc(hidden)]
    pub fn __from_macro(
        name: &'static str,
        description: &'static str,
        schema: SchemaFn,
        call: for<'a> fn(&'a ToolContext, Value) -> ToolFuture<'a>,
        overwrite: bool,
    ) -> Self {
        Tool {
            name: name.to_owned(),
            description: description.to_owned(),
            schema: InputSchema::Lazy(schema),
            run: Run::User(Arc::new(call)),
            overwrite,
        }
    }

    pub(crate) fn builtin(b: Builtin) -> Self {
        Tool {
            name: b.name().to_owned(),
            description: b.description().to_owned(),
            schema: InputSchema::Value(Arc::new(b.input_schema())),
            run: Run::Builtin(b),
            overwrite: false,
        }
    }

    /// Lets registration replace a visible tool of the same name
    /// (built-ins included).
    #[must_use]
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON schema of the arguments object.
    pub fn input_schema(&self) -> Value {
        let mut schema = match &self.schema {
            InputSchema::Value(v) => (**v).clone(),
            InputSchema::Lazy(f) => (*f()).clone(),
        };
        if let Value::Object(map) = &mut schema {
            map.remove("$schema");
            map.remove("title");
        }
        schema
    }

    pub(crate) fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema(),
            approval: Default::default(),
        }
    }
}

/// Whether `name` is ASCII `^[A-Za-z_][A-Za-z0-9_]*$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Tools of one scope, in registration order.
#[derive(Default, Clone)]
pub(crate) struct Registry {
    pub(crate) tools: Vec<Tool>,
}

impl Registry {
    pub(crate) fn insert(&mut self, tool: Tool) {
        match self.tools.iter_mut().find(|t| t.name == tool.name) {
            Some(slot) => *slot = tool,
            None => self.tools.push(tool),
        }
    }

    pub(crate) fn remove(&mut self, name: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|t| t.name != name);
        before != self.tools.len()
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }
}

/// Checks `tool`'s name, then looks for it among the visible tools, given
/// as `(origin, registry)` from the outermost scope to the innermost (the
/// built-ins come first implicitly). Reports the innermost match: that is
/// the tool the new one would shadow or replace.
pub(crate) fn check_registration<'a>(
    tool: &Tool,
    visible: impl DoubleEndedIterator<Item = (ToolOrigin, &'a Registry)>,
) -> Result<(), ToolRegistrationError> {
    if !is_valid_tool_name(&tool.name) {
        return Err(ToolRegistrationError::InvalidName {
            name: tool.name.clone(),
        });
    }
    if tool.overwrite {
        return Ok(());
    }
    let existing = visible
        .rev()
        .find(|(_, registry)| registry.names().any(|n| n == tool.name))
        .map(|(origin, _)| origin)
        .or_else(|| {
            BUILTIN_NAMES
                .contains(&tool.name.as_str())
                .then_some(ToolOrigin::BuiltIn)
        });
    match existing {
        Some(existing) => Err(ToolRegistrationError::Conflict {
            name: tool.name.clone(),
            existing,
        }),
        None => Ok(()),
    }
}
