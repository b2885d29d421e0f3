//! `ToolContext`: a block's context locals, bindings and memory, as tools
//! see and change them.

use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::error::{BlockLocation, Error, ToolEvalError, ToolValidationError};
use crate::memory::MemoryHandle;
use crate::schema::SchemaFn;
use crate::summary::summarize;
use crate::sync::lock;
use crate::validate::Coerce;

/// How a context local got into a block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocalKind {
    /// Named as `<name>` or `<:name>` in the block: its value at the block.
    Bound,
    /// A parameter of the function the block does not name: its value at
    /// call start, read-only. `mutable` when the function could have
    /// changed it since.
    Param { mutable: bool },
}

/// One context local of a block other than `memory`: a `<name>` or
/// `<:name>` binding, or a parameter of the function.
#[derive(Clone)]
pub(crate) struct BindingInfo {
    pub name: &'static str,
    pub type_name: String,
    /// Set for writable bindings.
    pub coerce: Option<Coerce>,
    pub schema: Option<SchemaFn>,
    pub kind: LocalKind,
}

impl LocalKind {
    /// What the locals summary says about a local of this kind.
    pub(crate) fn note(self, writable: bool) -> &'static str {
        match self {
            LocalKind::Bound if writable => ", writable",
            LocalKind::Bound => "",
            LocalKind::Param { mutable: false } => ", parameter",
            LocalKind::Param { mutable: true } => ", parameter, value at call start",
        }
    }
}

impl BindingInfo {
    pub(crate) fn writable(&self) -> bool {
        self.coerce.is_some()
    }

    pub(crate) fn bound(&self) -> bool {
        self.kind == LocalKind::Bound
    }
}

pub(crate) struct Locals {
    /// Context locals: bound variables, parameters and `memory`.
    pub values: Map<String, Value>,
    /// Writable bindings updated during the block, to commit at its end.
    pub assigned: Vec<&'static str>,
}

/// What a tool sees of the running block: its location, context locals
/// (the bound variables, the function's parameters and `memory` as JSON),
/// and the environment.
pub struct ToolContext {
    pub(crate) at: BlockLocation,
    /// The environment's workspace root.
    pub(crate) root: std::path::PathBuf,
    /// The environment's memory.
    pub(crate) memory: MemoryHandle,
    pub(crate) bindings: Vec<BindingInfo>,
    pub(crate) locals: Mutex<Locals>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

/// The result of a successful assignment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Assigned {
    pub target: String,
    pub type_name: String,
    pub value: Value,
    pub coerced: bool,
}

fn is_ident(s: &str) -> bool {
    crate::tools::is_valid_tool_name(s)
}

/// `label`, `<label>`, `<:label>` and `.label` all name the binding `label`.
pub(crate) fn normalize_target(target: &str) -> &str {
    let t = target.trim();
    let t = t
        .strip_prefix("<:")
        .or_else(|| t.strip_prefix('<'))
        .unwrap_or(t);
    let t = t.strip_suffix('>').unwrap_or(t);
    t.strip_prefix('.').unwrap_or(t)
}

impl ToolContext {
    /// The natural function's name.
    pub fn function(&self) -> &str {
        &self.at.function
    }

    /// The block (`docstring block`, `inline block 2 (line 14)`).
    pub fn block(&self) -> &str {
        &self.at.block
    }

    /// Function and block together.
    pub fn location(&self) -> &BlockLocation {
        &self.at
    }

    /// The environment's workspace root.
    pub fn workspace_root(&self) -> &Path {
        &self.root
    }

    /// The context locals as a JSON object (bindings, parameters and
    /// `memory`).
    pub fn locals(&self) -> Value {
        Value::Object(lock(&self.locals).values.clone())
    }

    /// One context local.
    pub fn get(&self, name: &str) -> Option<Value> {
        lock(&self.locals).values.get(name).cloned()
    }

    /// The memory as JSON.
    pub fn memory(&self) -> Value {
        self.memory.json()
    }

    pub(crate) fn eval_error(
        &self,
        tool: &str,
        expression: &str,
        message: String,
    ) -> ToolEvalError {
        ToolEvalError {
            at: self.at.clone(),
            tool: tool.to_owned(),
            expression: expression.to_owned(),
            message,
        }
    }

    /// Evaluates a jq filter over the context locals; it must produce
    /// exactly one value.
    pub fn eval(&self, expression: &str) -> Result<Value, ToolEvalError> {
        self.eval_as("nh_eval", expression)
    }

    pub(crate) fn eval_as(&self, tool: &str, expression: &str) -> Result<Value, ToolEvalError> {
        let locals = lock(&self.locals);
        let input = Value::Object(locals.values.clone());
        drop(locals);
        crate::jq::eval(expression, &input).map_err(|m| self.eval_error(tool, expression, m))
    }

    /// Evaluates `expression` and stores it in `target` (a writable binding
    /// of the block or `memory.<field>`) after validating it against the
    /// target's Rust type. Nothing changes on failure. Returns the stored
    /// value.
    pub fn assign(&self, target: &str, expression: &str) -> Result<Value, Error> {
        self.assign_detailed(target, expression).map(|a| a.value)
    }

    pub(crate) fn assign_detailed(
        &self,
        target: &str,
        expression: &str,
    ) -> Result<Assigned, Error> {
        let name = normalize_target(target);
        if let Some(field) = name.strip_prefix("memory.") {
            if !is_ident(field) {
                return Err(self
                    .eval_error("nh_assign", expression, format!("invalid memory target `{target}`: use memory.<field> with a top-level field name"))
                    .into());
            }
            let value = self.eval_as("nh_assign", expression)?;
            let memory = &self.memory;
            let stored =
                memory
                    .0
                    .assign_field(field, value.clone())
                    .map_err(|r| ToolValidationError {
                        at: self.at.clone(),
                        target: format!("memory.{field}"),
                        type_name: crate::summary::short_type_name(memory.type_name()),
                        path: r.path,
                        message: r.message,
                        value: summarize(&value),
                    })?;
            lock(&self.locals)
                .values
                .insert("memory".to_owned(), memory.json());
            return Ok(Assigned {
                target: format!("memory.{field}"),
                type_name: crate::summary::short_type_name(memory.type_name()),
                coerced: stored != value,
                value: stored,
            });
        }
        let writable: Vec<&str> = self
            .bindings
            .iter()
            .filter(|b| b.writable())
            .map(|b| b.name)
            .collect();
        let Some(binding) = self
            .bindings
            .iter()
            .find(|b| b.name == name && b.writable())
        else {
            let allowed = if writable.is_empty() {
                "this block has no writable bindings".to_owned()
            } else {
                format!("writable: {}", writable.join(", "))
            };
            // A parameter is visible without being bound: say why it is
            // read-only rather than pretend it does not exist.
            let what = if self.bindings.iter().any(|b| b.name == name) {
                "is read-only in this block (only <:name> bindings are writable)"
            } else {
                "is not a writable binding (<:name>) of this block or memory.<field>"
            };
            return Err(self
                .eval_error(
                    "nh_assign",
                    expression,
                    format!("target `{target}` {what}; {allowed}"),
                )
                .into());
        };
        let value = self.eval_as("nh_assign", expression)?;
        let coerce = binding.coerce.ok_or_else(|| {
            Error::from(self.eval_error("nh_assign", expression, "not writable".to_owned()))
        })?;
        let stored = coerce(value.clone()).map_err(|r| ToolValidationError {
            at: self.at.clone(),
            target: binding.name.to_owned(),
            type_name: binding.type_name.clone(),
            path: r.path,
            message: r.message,
            value: summarize(&value),
        })?;
        let mut locals = lock(&self.locals);
        locals
            .values
            .insert(binding.name.to_owned(), stored.clone());
        if !locals.assigned.contains(&binding.name) {
            locals.assigned.push(binding.name);
        }
        Ok(Assigned {
            target: binding.name.to_owned(),
            type_name: binding.type_name.clone(),
            coerced: stored != value,
            value: stored,
        })
    }
}
