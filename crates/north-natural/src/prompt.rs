//! The prompt of a block, built with `north-prompt`: fixed instructions as
//! the system text, and a user message with the program, the bindings, a
//! bounded locals summary (this call, then enclosing natural calls), a
//! bounded memory summary and the allowed final answers.

use std::fmt::Write;
use std::sync::{Arc, OnceLock};

use north_prompt::{MarkdownSection, NoParams, Prompt, PromptParams, PromptTemplate, template};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::env::{Configuration, Frame};
use crate::error::Error;
use crate::schema::compact;
use crate::summary::{bounded, local_line};
use crate::sync::lock;
use crate::tools::ToolContext;

/// Heading that opens the program in the user message.
pub(crate) const PROGRAM_HEADING: &str = "## 1. Program\n\n";
/// Heading that follows the program.
pub(crate) const BINDINGS_HEADING: &str = "\n\n## 2. Bindings";

const SCHEMA_LIMIT: usize = 1200;

#[derive(Serialize, JsonSchema, Default, PromptParams)]
struct BlockParams {
    program: String,
    bindings: String,
    locals: String,
    memory: String,
    finish: String,
}

const INSTRUCTIONS: &str = "\
You execute one natural block: an instruction written inside a Rust function, \
run while the function runs. Follow the program exactly; it refers to the \
function's variables as bindings: `<name>` can be read, `<:name>` can also be written.

The context locals are a JSON object holding every bound variable, the \
function's parameters (read-only, as the call received them) and `memory`. \
Read them with nh_eval (a jq filter over that object, such as `.items | length`), \
inspect them with nh_dir, and get a type's JSON schema with nh_help. Write a \
writable binding or a memory field with nh_assign(target, expression): the \
expression is a jq filter (a JSON literal is one) and its value must fit the \
Rust type of the target exactly, or nothing changes and you get the validation \
details to fix the value. Writable bindings keep their current value unless you \
assign them. Other tools may be listed; use them when the program needs them.

When the work is done, reply with a single JSON object and no other text, as \
the Finish section describes.";

fn templates() -> Result<&'static (PromptTemplate, PromptTemplate), Error> {
    static TEMPLATES: OnceLock<Result<(PromptTemplate, PromptTemplate), String>> = OnceLock::new();
    TEMPLATES
        .get_or_init(|| {
            let system = PromptTemplate::builder("north-natural", "block-instructions")
                .section(MarkdownSection::<NoParams>::plain(
                    "Natural block",
                    "natural-block",
                    INSTRUCTIONS,
                ))
                .build()
                .map_err(|e| e.to_string())?;
            let user = PromptTemplate::builder("north-natural", "block")
                .section(MarkdownSection::<BlockParams>::new(
                    "Program",
                    "program",
                    template!(BlockParams, "${program}"),
                ))
                .section(MarkdownSection::<BlockParams>::new(
                    "Bindings",
                    "bindings",
                    template!(BlockParams, "${bindings}"),
                ))
                .section(MarkdownSection::<BlockParams>::new(
                    "Locals",
                    "locals",
                    template!(BlockParams, "${locals}"),
                ))
                .section(MarkdownSection::<BlockParams>::new(
                    "Memory",
                    "memory",
                    template!(BlockParams, "${memory}"),
                ))
                .section(MarkdownSection::<BlockParams>::new(
                    "Finish",
                    "finish",
                    template!(BlockParams, "${finish}"),
                ))
                .build()
                .map_err(|e| e.to_string())?;
            Ok((system, user))
        })
        .as_ref()
        .map_err(|message| Error::Prompt {
            message: message.clone(),
        })
}

/// The system instructions.
pub(crate) fn system_text() -> Result<String, Error> {
    static TEXT: OnceLock<String> = OnceLock::new();
    if let Some(t) = TEXT.get() {
        return Ok(t.clone());
    }
    let (system, _) = templates()?;
    let text = Prompt::new(system.clone())
        .render()
        .map_err(|e| Error::Prompt {
            message: e.to_string(),
        })?
        .into_text();
    Ok(TEXT.get_or_init(|| text).clone())
}

/// What the finish section needs to know.
pub(crate) struct Finish<'a> {
    pub in_loop: bool,
    pub return_type: &'a str,
    pub return_schema: Arc<Value>,
}

/// The locals lines of this block, for the summary and for nested calls.
pub(crate) fn locals_lines(ctx: &ToolContext) -> String {
    let locals = lock(&ctx.locals);
    let mut out = String::new();
    for b in &ctx.bindings {
        let value = locals.values.get(b.name).unwrap_or(&Value::Null);
        local_line(
            &mut out,
            b.name,
            &b.type_name,
            b.kind.note(b.writable()),
            value,
        );
    }
    out
}

pub(crate) fn user_text(
    ctx: &ToolContext,
    cfg: &Configuration,
    program: &str,
    this_call: &str,
    outer: &[Arc<Frame>],
    finish: &Finish<'_>,
) -> Result<String, Error> {
    let mut bindings = String::new();
    for b in ctx.bindings.iter().filter(|b| b.bound()) {
        let _ = write!(
            bindings,
            "- `<{}{}>`: Rust type `{}`",
            if b.writable() { ":" } else { "" },
            b.name,
            b.type_name
        );
        if b.writable()
            && let Some(schema) = b.schema
        {
            let _ = write!(
                bindings,
                "; JSON schema: {}",
                compact(&schema(), SCHEMA_LIMIT)
            );
        }
        bindings.push('\n');
    }
    if bindings.is_empty() {
        bindings.push_str("This block binds no variables.");
    }

    let mut locals = format!(
        "In this call (`{}`, {}):\n{this_call}",
        ctx.at.function, ctx.at.block
    );
    for frame in outer.iter().rev() {
        let Some(lines) = lock(&frame.last_locals).clone() else {
            continue;
        };
        let section = format!(
            "\nIn the enclosing natural call `{}`:\n{lines}",
            frame.function
        );
        if locals.chars().count() + section.chars().count() > cfg.locals_summary_limit {
            break;
        }
        locals.push_str(&section);
    }
    let locals = bounded(locals.trim_end(), cfg.locals_summary_limit);

    let memory_handle = &ctx.memory;
    let memory_json = memory_handle.json();
    let memory = if memory_json.as_object().is_some_and(|o| o.is_empty()) {
        "This environment's memory has no fields.".to_owned()
    } else {
        bounded(
            &format!(
                "Type `{}` (update a field with nh_assign target `memory.<field>`; nh_help `memory` for its schema):\n{}",
                crate::summary::short_type_name(memory_handle.type_name()),
                memory_json
            ),
            cfg.memory_summary_limit,
        )
    };

    let mut finish_text = String::from(
        "Reply with exactly one JSON object and nothing else:\n\
         - `{\"effect\": null, \"error\": null}` when the block is done and the function goes on.\n",
    );
    if finish.in_loop {
        finish_text.push_str(
            "- `{\"effect\": {\"type\": \"continue\", \"value_json\": null}, \"error\": null}` or `{\"effect\": {\"type\": \"break\", \"value_json\": null}, \"error\": null}` to continue or leave the enclosing loop.\n",
        );
    }
    let _ = writeln!(
        finish_text,
        "- `{{\"effect\": {{\"type\": \"return\", \"value_json\": \"<JSON text>\"}}, \"error\": null}}` to return from the function now; value_json is JSON text of a value of type `{}`, schema: {}",
        finish.return_type,
        compact(&finish.return_schema, SCHEMA_LIMIT)
    );
    finish_text.push_str(
        "- `{\"effect\": null, \"error\": {\"message\": \"<why>\", \"type\": \"<kind>\"}}` if the block cannot be executed.",
    );
    if !finish.in_loop {
        finish_text
            .push_str("\nThis block is not inside a loop: `continue` and `break` are not allowed.");
    }

    let (_, user) = templates()?;
    Ok(Prompt::new(user.clone())
        .bind(BlockParams {
            program: if program.trim().is_empty() {
                "(empty program)".to_owned()
            } else {
                program.to_owned()
            },
            bindings: bindings.trim_end().to_owned(),
            locals,
            memory,
            finish: finish_text,
        })
        .render()
        .map_err(|e| Error::Prompt {
            message: e.to_string(),
        })?
        .into_text())
}

/// The program of a block request (what the stub backend looks at).
pub fn program_of(request: &north_protocol::ChatRequest) -> Option<&str> {
    let first = request.messages.first()?;
    let text = first.content.iter().find_map(|b| match b {
        north_protocol::ContentBlock::Text { text } => Some(text.as_str()),
        _ => None,
    })?;
    let start = text.find(PROGRAM_HEADING)? + PROGRAM_HEADING.len();
    let end = text[start..]
        .find(BINDINGS_HEADING)
        .map_or(text.len(), |i| start + i);
    Some(&text[start..end])
}
