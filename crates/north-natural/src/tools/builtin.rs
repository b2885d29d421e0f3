//! The built-in tools: `nh_dir`, `nh_help`, `nh_eval`, `nh_assign`.

use std::sync::OnceLock;

use north_protocol::ToolOutcome;
use serde_json::{Value, json};

use super::context::normalize_target;
use super::{Tool, ToolContext};
use crate::error::Error;
use crate::schema::property_schema;
use crate::summary::{json_type, short_type_name, summarize};

/// Names of the built-ins.
pub(crate) const BUILTIN_NAMES: [&str; 4] = ["nh_dir", "nh_help", "nh_eval", "nh_assign"];

/// One built-in tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Dir,
    Help,
    Eval,
    Assign,
}

pub(crate) fn builtin_tools() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        [Builtin::Dir, Builtin::Help, Builtin::Eval, Builtin::Assign]
            .into_iter()
            .map(Tool::builtin)
            .collect()
    })
}

fn expression_schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"expression": {"type": "string", "description": what}},
        "required": ["expression"],
        "additionalProperties": false
    })
}

/// The result of a tool call: what the model is told, and the typed error
/// when it failed.
pub(crate) enum Outcome {
    Ok(Value),
    Failed {
        /// Partial output (the `nh_assign` diagnostics), or null.
        output: Value,
        /// What went wrong, for the model.
        message: String,
        /// The same, typed, for the caller when the block gives up.
        error: Error,
    },
}

impl Outcome {
    /// The tool-role content the model receives: the workspace's one tool
    /// result envelope, `{ok, output, error}` ([`ToolOutcome`]), as North's
    /// own tools return it.
    pub(crate) fn content(&self) -> String {
        let envelope = match self {
            Outcome::Ok(output) => ToolOutcome::ok(output.clone()),
            Outcome::Failed {
                output, message, ..
            } => ToolOutcome {
                ok: false,
                output: output.clone(),
                error: Some(message.clone()),
            },
        };
        serde_json::to_string(&envelope).unwrap_or_default()
    }
}

impl Builtin {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Builtin::Dir => "nh_dir",
            Builtin::Help => "nh_help",
            Builtin::Eval => "nh_eval",
            Builtin::Assign => "nh_assign",
        }
    }

    pub(crate) fn description(self) -> &'static str {
        match self {
            Builtin::Dir => {
                "Lists the shape of a value: for an object its keys with their JSON types (and Rust types for bindings), for an array its length and element types. `.` lists the context locals."
            }
            Builtin::Help => {
                "Returns the JSON schema (with doc comments) of a binding's Rust type (`label`), of the memory (`memory`) or a memory field (`memory.facts`); for any other jq expression, a description of its value."
            }
            Builtin::Eval => {
                "Evaluates a jq filter over the context locals (an object of the bound variables, the function's parameters and `memory`) and returns the single result as JSON text."
            }
            Builtin::Assign => {
                "Evaluates a jq filter over the context locals and stores the single result in `target`: a writable binding name (`label`) or a memory field (`memory.facts`). The value is validated against the target's Rust type; nothing changes on failure. Returns a diagnostic object."
            }
        }
    }

    pub(crate) fn input_schema(self) -> Value {
        match self {
            Builtin::Dir => expression_schema("jq filter; `.` for the context locals"),
            Builtin::Help => {
                expression_schema("a binding name, `memory`, `memory.<field>` or a jq filter")
            }
            Builtin::Eval => {
                expression_schema("jq filter over the context locals, e.g. `.items | length`")
            }
            Builtin::Assign => json!({
                "type": "object",
                "properties": {
                    "target": {"type": "string", "description": "a writable binding name or memory.<field>"},
                    "expression": {"type": "string", "description": "jq filter over the context locals; a JSON literal is a valid filter"}
                },
                "required": ["target", "expression"],
                "additionalProperties": false
            }),
        }
    }

    pub(crate) fn call(self, ctx: &ToolContext, args: &Value) -> Outcome {
        let arg = |key: &str| args.get(key).and_then(Value::as_str);
        let Some(expression) = arg("expression") else {
            return bad_args(ctx, self, args, "`expression` (a string) is required");
        };
        match self {
            Builtin::Eval => match ctx.eval(expression) {
                Ok(v) => Outcome::Ok(v),
                Err(e) => failed("evaluation", e.message.clone(), e.into()),
            },
            Builtin::Dir => match ctx.eval_as("nh_dir", expression) {
                Ok(v) => Outcome::Ok(describe(ctx, expression, &v)),
                Err(e) => failed("evaluation", e.message.clone(), e.into()),
            },
            Builtin::Help => help(ctx, expression),
            Builtin::Assign => {
                let Some(target) = arg("target") else {
                    return bad_args(ctx, self, args, "`target` (a string) is required");
                };
                assign(ctx, target, expression)
            }
        }
    }
}

fn failed(kind: &str, message: String, error: Error) -> Outcome {
    Outcome::Failed {
        output: Value::Null,
        message: format!("{kind}: {message}"),
        error,
    }
}

fn bad_args(ctx: &ToolContext, b: Builtin, args: &Value, message: &str) -> Outcome {
    let err = ctx.eval_error(
        b.name(),
        &args.to_string(),
        format!("invalid arguments: {message}"),
    );
    failed("arguments", err.message.clone(), err.into())
}

fn is_top_level_root(expression: &str) -> bool {
    matches!(expression.trim(), "." | "")
}

fn describe(ctx: &ToolContext, expression: &str, value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let root = is_top_level_root(expression);
            let entries: serde_json::Map<String, Value> = map
                .iter()
                .map(|(k, v)| {
                    let mut entry = json!({"json_type": json_type(v)});
                    if root {
                        if let Some(b) = ctx.bindings.iter().find(|b| b.name == k) {
                            entry["rust_type"] = json!(b.type_name);
                            entry["writable"] = json!(b.writable());
                            if !b.bound() {
                                entry["parameter"] = json!(true);
                            }
                        } else if k == "memory" {
                            entry["rust_type"] = json!(short_type_name(ctx.memory.type_name()));
                        }
                    }
                    (k.clone(), entry)
                })
                .collect();
            json!({"kind": "object", "keys": entries})
        }
        Value::Array(items) => {
            let mut types: Vec<&str> = items.iter().map(json_type).collect();
            types.sort_unstable();
            types.dedup();
            json!({"kind": "array", "length": items.len(), "element_types": types})
        }
        other => json!({"kind": json_type(other), "value": summarize(other)}),
    }
}

fn help(ctx: &ToolContext, expression: &str) -> Outcome {
    let name = normalize_target(expression);
    if name == "memory" {
        let memory = &ctx.memory;
        return Outcome::Ok(
            json!({"name": "memory", "rust_type": short_type_name(memory.type_name()), "schema": *memory.0.schema()}),
        );
    }
    if let Some(field) = name.strip_prefix("memory.") {
        let memory = &ctx.memory;
        if let Some(schema) = property_schema(&memory.0.schema(), field) {
            return Outcome::Ok(
                json!({"name": format!("memory.{field}"), "memory_type": short_type_name(memory.type_name()), "schema": schema}),
            );
        }
    }
    if let Some(b) = ctx.bindings.iter().find(|b| b.name == name) {
        let mut out = json!({"name": b.name, "rust_type": b.type_name, "writable": b.writable()});
        match b.schema {
            Some(schema) => out["schema"] = (*schema()).clone(),
            None => out["schema"] = Value::Null,
        }
        return Outcome::Ok(out);
    }
    match ctx.eval_as("nh_help", expression) {
        Ok(v) => Outcome::Ok(
            json!({"expression": expression, "json_type": json_type(&v), "value": summarize(&v), "schema": null}),
        ),
        Err(e) => failed("evaluation", e.message.clone(), e.into()),
    }
}

fn assign(ctx: &ToolContext, target: &str, expression: &str) -> Outcome {
    match ctx.assign_detailed(target, expression) {
        Ok(a) => Outcome::Ok(json!({
            "target": a.target,
            "summary": summarize(&a.value),
            "validation": {"type": a.type_name, "ok": true, "coerced": a.coerced},
        })),
        Err(error) => {
            let (validation, kind, message) = match &error {
                Error::ToolValidation(v) => (
                    json!({"type": v.type_name, "ok": false, "path": v.path, "message": v.message, "value": v.value}),
                    "validation",
                    v.message.clone(),
                ),
                Error::ToolEval(e) => (Value::Null, "evaluation", e.message.clone()),
                other => (Value::Null, "internal", other.to_string()),
            };
            Outcome::Failed {
                output: json!({"target": target, "summary": null, "validation": validation}),
                message: format!("{kind}: {message}"),
                error,
            }
        }
    }
}
