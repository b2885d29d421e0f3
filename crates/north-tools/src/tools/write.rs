//! The write tools: `edit_replace_exact`, `edit_insert_at_line`,
//! `edit_create_file`, `edit_apply_batch`, and the profiles `fs.write_text`
//! and `write`. All of them only propose; nothing is written until the
//! caller applies the [`Proposal`] after review.

use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::{ArgsError, ArgsSchema};
use crate::describe;
use crate::edit::{
    self, Applied, BatchArgs, BatchTool, CreateFileArgs, EditFailure, EditOp, InsertAtLineArgs,
    Proposal, ReplaceExactArgs,
};
use crate::tool::{Tool, ToolContext, WriteTool};

/// Arguments of `fs.write_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteTextArgs {
    /// File path relative to the sandbox root.
    pub path: String,
    /// Full file content.
    pub text: String,
    /// Replace an existing file (default false).
    #[serde(default)]
    pub overwrite: bool,
}

/// Arguments of the mesh `write` tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeshWriteArgs {
    /// File path relative to the working directory.
    pub path: String,
    /// Full file content.
    pub content: String,
}

/// Which write tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Replace,
    Insert,
    Create,
    Batch,
    FsWriteText,
    MeshWrite,
}

struct Schemas {
    replace: ArgsSchema,
    insert: ArgsSchema,
    create: ArgsSchema,
    batch: ArgsSchema,
    write_text: ArgsSchema,
    mesh_write: ArgsSchema,
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| Schemas {
        replace: ArgsSchema::of::<ReplaceExactArgs>(),
        insert: ArgsSchema::of::<InsertAtLineArgs>(),
        create: ArgsSchema::of::<CreateFileArgs>(),
        batch: ArgsSchema::of::<BatchArgs>(),
        write_text: ArgsSchema::of::<WriteTextArgs>(),
        mesh_write: ArgsSchema::of::<MeshWriteArgs>(),
    })
}

/// A write tool of any kind.
pub(crate) struct EditTool {
    kind: WriteKind,
    /// False when a policy disables writes (the mesh's `write_enabled`).
    enabled: bool,
}

impl EditTool {
    pub fn tool(kind: WriteKind) -> Arc<dyn Tool> {
        Arc::new(EditTool {
            kind,
            enabled: true,
        })
    }

    /// The mesh `write`, refusing everything when `write_enabled` is false.
    pub(crate) fn mesh_write(write_enabled: bool) -> Arc<dyn Tool> {
        Arc::new(EditTool {
            kind: WriteKind::MeshWrite,
            enabled: write_enabled,
        })
    }

    fn name(&self) -> &'static str {
        match self.kind {
            WriteKind::Replace => "edit_replace_exact",
            WriteKind::Insert => "edit_insert_at_line",
            WriteKind::Create => "edit_create_file",
            WriteKind::Batch => "edit_apply_batch",
            WriteKind::FsWriteText => "fs.write_text",
            WriteKind::MeshWrite => "write",
        }
    }

    fn description(&self) -> &'static str {
        match self.kind {
            WriteKind::Replace => {
                "Replace exact text in a file (whitespace included, no fuzzy matching); written once the user accepts the diff."
            }
            WriteKind::Insert => {
                "Insert lines so the first becomes line `line`; written once the user accepts the diff."
            }
            WriteKind::Create => {
                "Create a file (overwrite:true replaces one); written once the user accepts the diff."
            }
            WriteKind::Batch => {
                "Several edits as one all-or-nothing change, applied in order; written once the user accepts the diffs."
            }
            WriteKind::FsWriteText => "Write a text file under the sandbox root (after approval).",
            WriteKind::MeshWrite => "Write a file (after approval). Returns \"wrote N bytes\".",
        }
    }

    fn schema(&self) -> &'static ArgsSchema {
        let s = schemas();
        match self.kind {
            WriteKind::Replace => &s.replace,
            WriteKind::Insert => &s.insert,
            WriteKind::Create => &s.create,
            WriteKind::Batch => &s.batch,
            WriteKind::FsWriteText => &s.write_text,
            WriteKind::MeshWrite => &s.mesh_write,
        }
    }

    /// The edits the arguments describe.
    fn ops(&self, args: Value) -> Result<Vec<EditOp>, ArgsError> {
        let name = self.name();
        let schema = self.schema();
        Ok(match self.kind {
            WriteKind::Replace => vec![EditOp::ReplaceExact(schema.parse(name, args)?)],
            WriteKind::Insert => vec![EditOp::InsertAtLine(schema.parse(name, args)?)],
            WriteKind::Create => vec![EditOp::CreateFile(schema.parse(name, args)?)],
            WriteKind::FsWriteText => {
                let a: WriteTextArgs = schema.parse(name, args)?;
                vec![EditOp::CreateFile(CreateFileArgs {
                    path: a.path,
                    content: a.text,
                    overwrite: a.overwrite,
                })]
            }
            WriteKind::MeshWrite => {
                let a: MeshWriteArgs = schema.parse(name, args)?;
                vec![EditOp::CreateFile(CreateFileArgs {
                    path: a.path,
                    content: a.content,
                    overwrite: true,
                })]
            }
            WriteKind::Batch => {
                let batch: BatchArgs = schema.parse(name, args)?;
                if batch.edits.is_empty() {
                    return Err(ArgsError {
                        tool: name.to_owned(),
                        field: "edits".to_owned(),
                        message: "edits is empty".to_owned(),
                    });
                }
                let s = schemas();
                let mut ops = Vec::with_capacity(batch.edits.len());
                for (i, edit) in batch.edits.into_iter().enumerate() {
                    let (tool, schema) = match edit.tool_name {
                        BatchTool::ReplaceExact => ("edit_replace_exact", &s.replace),
                        BatchTool::InsertAtLine => ("edit_insert_at_line", &s.insert),
                        BatchTool::CreateFile => ("edit_create_file", &s.create),
                    };
                    let nested = |e: ArgsError| ArgsError {
                        tool: name.to_owned(),
                        field: if e.field == "(arguments)" {
                            format!("edits[{i}].args")
                        } else {
                            format!("edits[{i}].args.{}", e.field)
                        },
                        message: format!("{} (arguments of {tool})", e.message),
                    };
                    ops.push(match edit.tool_name {
                        BatchTool::ReplaceExact => {
                            EditOp::ReplaceExact(schema.parse(tool, edit.args).map_err(nested)?)
                        }
                        BatchTool::InsertAtLine => {
                            EditOp::InsertAtLine(schema.parse(tool, edit.args).map_err(nested)?)
                        }
                        BatchTool::CreateFile => {
                            EditOp::CreateFile(schema.parse(tool, edit.args).map_err(nested)?)
                        }
                    });
                }
                ops
            }
        })
    }
}

/// The `ok:false` outcome for failed edits: every message in `error`, the
/// structured failures (with closest lines, occurrence lines) in `output`.
pub(crate) fn failures_outcome(failures: Vec<EditFailure>) -> ToolOutcome {
    let message = failures
        .iter()
        .map(|f| f.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    ToolOutcome {
        ok: false,
        output: json!({ "canApply": false, "failures": failures }),
        error: Some(format!("{message}\nNothing was changed.")),
    }
}

impl WriteTool for EditTool {
    fn propose(&self, args: Value, ctx: &ToolContext) -> Result<Proposal, ToolOutcome> {
        if !self.enabled {
            return Err(ToolOutcome::err(format!(
                "`{}` is disabled by policy (write_enabled is false)",
                self.name()
            )));
        }
        let ops = self
            .ops(args)
            .map_err(|e| ToolOutcome::err(e.to_string()))?;
        let sandbox = ctx.sandbox().map_err(|e| ToolOutcome::err(e.to_string()))?;
        edit::propose(&sandbox, &ops, self.kind == WriteKind::Batch).map_err(failures_outcome)
    }

    fn applied_output(&self, proposal: &Proposal, applied: &Applied) -> Value {
        match self.kind {
            WriteKind::MeshWrite => json!(format!("wrote {} bytes", applied.bytes())),
            WriteKind::FsWriteText => {
                let path = applied
                    .files
                    .first()
                    .map(|f| f.path.clone())
                    .unwrap_or_default();
                json!({ "path": path, "bytes": applied.bytes() })
            }
            // North's edit tools: the spec's result (`{diff | diffsByFile,
            // canApply, stats}`) so the model knows exactly what changed, plus
            // what was written.
            _ => {
                let mut out = proposal.to_model_json();
                if let Value::Object(map) = &mut out {
                    map.insert("applied".into(), Value::Bool(true));
                    map.insert("files".into(), json!(applied.files));
                }
                out
            }
        }
    }
}

impl Tool for EditTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            input_schema: self.schema().schema().clone(),
            approval: ApprovalPolicy::Write,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let tool = EditTool {
                kind: self.kind,
                enabled: self.enabled,
            };
            let ctx = ctx.clone();
            let proposed = tokio::task::spawn_blocking(move || tool.propose(args, &ctx)).await;
            match proposed {
                Ok(Ok(proposal)) => ToolOutcome::ok(proposal.to_model_json()),
                Ok(Err(outcome)) => outcome,
                Err(e) => {
                    ToolOutcome::err(format!("tool `{}` stopped unexpectedly: {e}", self.name()))
                }
            }
        })
    }

    fn as_write(&self) -> Option<&dyn WriteTool> {
        Some(self)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn intent(&self, args: &Value) -> Option<String> {
        let mut paths: Vec<&str> = match self.kind {
            WriteKind::Batch => args
                .get("edits")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .filter_map(|x| x.get("args").and_then(|a| describe::arg(a, "path")))
                        .collect()
                })
                .unwrap_or_default(),
            _ => vec![describe::arg(args, "path").unwrap_or("?")],
        };
        paths.dedup();
        let paths: Vec<String> = paths.iter().map(|p| format!("`{p}`")).collect();
        Some(format!("Preparing edits in {}", paths.join(", ")))
    }
}
