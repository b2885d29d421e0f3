//! The language-server tools: `lsp_diagnostics`, `lsp_definition`,
//! `lsp_references`, `lsp_symbols`. Read-only, offered only where a server
//! is configured or found for the project; results bounded by the client.

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use serde_json::{Value, json};

use crate::tool::{Tool, ToolContext};

/// Which of the four.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeTool {
    /// `lsp_diagnostics {path}`.
    Diagnostics,
    /// `lsp_definition {path, line, column}`.
    Definition,
    /// `lsp_references {path, line, column}`.
    References,
    /// `lsp_symbols {query}`.
    Symbols,
}

impl CodeTool {
    /// All four.
    pub const ALL: [CodeTool; 4] = [
        CodeTool::Diagnostics,
        CodeTool::Definition,
        CodeTool::References,
        CodeTool::Symbols,
    ];

    fn name(self) -> &'static str {
        match self {
            CodeTool::Diagnostics => "lsp_diagnostics",
            CodeTool::Definition => "lsp_definition",
            CodeTool::References => "lsp_references",
            CodeTool::Symbols => "lsp_symbols",
        }
    }
}

fn position_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the project root."},
            "line": {"type": "integer", "minimum": 1, "description": "1-based line."},
            "column": {"type": "integer", "minimum": 1, "description": "1-based column of the symbol (characters; outside the Basic Multilingual Plane a character counts as two)."}
        },
        "required": ["path", "line", "column"],
        "additionalProperties": false
    })
}

impl Tool for CodeTool {
    fn spec(&self) -> ToolSpec {
        let (description, schema) = match self {
            CodeTool::Diagnostics => (
                "The language server's errors and warnings for a file as it is on disk: [{line, column, severity, message}].",
                json!({
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "File path relative to the project root."}},
                    "required": ["path"],
                    "additionalProperties": false
                }),
            ),
            CodeTool::Definition => (
                "Where the symbol at a position is defined (language server): [{path, line, column}].",
                position_schema(),
            ),
            CodeTool::References => (
                "Where the symbol at a position is used, its definition included (language server): [{path, line, column}].",
                position_schema(),
            ),
            CodeTool::Symbols => (
                "Symbols of the workspace whose name matches a query (language server): [{name, kind, path, line}].",
                json!({
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                    "additionalProperties": false
                }),
            ),
        };
        ToolSpec {
            name: self.name().into(),
            description: description.into(),
            input_schema: schema,
            approval: ApprovalPolicy::None,
        }
    }

    fn kind(&self) -> ToolKind {
        match self {
            CodeTool::Diagnostics => ToolKind::Read,
            _ => ToolKind::Search,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(code) = ctx.code.clone() else {
                return ToolOutcome::err("no language server is configured for this project");
            };
            match run(*self, &args, &*code, ctx).await {
                Ok(v) => ToolOutcome::ok(v),
                Err(e) => ToolOutcome::err(e),
            }
        })
    }
}

/// The project path `args` name, checked to stay inside the project.
fn path_arg(args: &Value, ctx: &ToolContext) -> Result<String, String> {
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .ok_or("`path` is required")?;
    let sandbox = ctx.sandbox().map_err(|e| e.to_string())?;
    // What the read tools may not open (secret env files, ignored
    // files), the language tools do not either.
    Ok(sandbox
        .resolve_readable(path)
        .map_err(|e| e.to_string())?
        .rel)
}

fn position(args: &Value) -> Result<(u32, u32), String> {
    let n = |k: &str| {
        args.get(k)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .ok_or(format!("`{k}` must be a 1-based number"))
    };
    Ok((n("line")?, n("column")?))
}

async fn run(
    tool: CodeTool,
    args: &Value,
    code: &dyn crate::services::Code,
    ctx: &ToolContext,
) -> Result<Value, String> {
    match tool {
        CodeTool::Diagnostics => {
            let path = path_arg(args, ctx)?;
            let text = std::fs::read_to_string(ctx.root.join(&path))
                .map_err(|e| format!("cannot read {path}: {e}"))?;
            match code.diagnose(&path, &text).await {
                north_lsp::Diagnosed::Found { server, items } => {
                    Ok(json!({"path": path, "server": server, "diagnostics": items}))
                }
                north_lsp::Diagnosed::NoServer => {
                    Err(format!("no language server is configured for `{path}`"))
                }
                north_lsp::Diagnosed::NoAnswer { reason, .. } => Err(reason),
            }
        }
        CodeTool::Definition | CodeTool::References => {
            let path = path_arg(args, ctx)?;
            let (line, column) = position(args)?;
            let found = if tool == CodeTool::Definition {
                code.definition(&path, line, column).await
            } else {
                code.references(&path, line, column).await
            };
            found.map(|l| json!(l)).map_err(|e| e.to_string())
        }
        CodeTool::Symbols => {
            let query = args
                .get("query")
                .and_then(Value::as_str)
                .ok_or("`query` is required")?;
            code.symbols(query)
                .await
                .map(|s| json!(s))
                .map_err(|e| e.to_string())
        }
    }
}
