//! Running one block: bind the variables into context locals, build the
//! prompt, loop model ↔ tools until a final answer, then hand the effect and
//! the assigned writable bindings back to the generated code.

use std::any::type_name;
use std::sync::{Arc, Mutex};

use north_protocol::{ChatRequest, ContentBlock, Message, Role, ToolCall};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::env::{CallGuard, Environment};
use crate::error::{BlockLocation, Error, ParseError};
use crate::final_answer::{Final, parse_final};
use crate::prompt::{Finish, locals_lines, system_text, user_text};
use crate::schema::{SchemaFn, schema_of};
use crate::scope::visible_tools;
use crate::summary::short_type_name;
use crate::sync::lock;
use crate::tools::{BindingInfo, LocalKind, Locals, Outcome, Run, Tool, ToolContext};
use crate::validate::{Rejection, coerce};

/// Where a block sits, fixed at expansion time.
#[doc(hidden)]
#[derive(Debug)]
pub struct BlockMeta {
    /// The function's name.
    pub function: &'static str,
    /// 0 for the docstring block, then 1, 2, ... for inline blocks.
    pub index: u32,
    /// Source line of the block.
    pub line: u32,
    /// Whether the block sits inside a `for`/`while`/`loop` body.
    pub in_loop: bool,
    /// Parameters a local declared before the block shadows there: the
    /// name means that local, so the parameter is not a context local.
    pub shadowed: &'static [&'static str],
}

impl BlockMeta {
    fn label(&self) -> String {
        if self.index == 0 {
            format!("docstring block (line {})", self.line)
        } else {
            format!("inline block {} (line {})", self.index, self.line)
        }
    }

    fn location(&self) -> BlockLocation {
        BlockLocation::new(self.function, self.label())
    }
}

/// The control-flow effect a block requested.
#[doc(hidden)]
#[derive(Debug, PartialEq)]
pub enum Effect<T> {
    /// Go on after the block.
    None,
    /// `continue` the enclosing loop.
    Continue,
    /// `break` the enclosing loop.
    Break,
    /// Return this value from the function.
    Return(T),
}

/// A block being prepared by the generated code.
#[doc(hidden)]
pub struct BlockRun<'g> {
    meta: &'static BlockMeta,
    guard: &'g CallGuard,
    bindings: Vec<BindingInfo>,
    values: Map<String, Value>,
}

fn to_json<T: Serialize + ?Sized>(meta: &BlockMeta, name: &str, value: &T) -> Result<Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::Binding {
        at: meta.location(),
        binding: name.to_owned(),
        message: format!(
            "cannot convert the value of `{}` to JSON: {e}",
            type_name::<T>()
        ),
    })
}

/// How a block checks a `return` value against the function's success
/// type `T`. Built where `T`'s bounds are known (`ReturnValue`), so that
/// `BlockRun::run` itself has none the generated code could fail on.
#[doc(hidden)]
pub struct ReturnSpec<T> {
    schema: SchemaFn,
    decode: fn(Value) -> Result<T, Rejection>,
}

impl<T: DeserializeOwned + JsonSchema> ReturnSpec<T> {
    pub(crate) fn of() -> Self {
        ReturnSpec {
            schema: schema_of::<T>,
            decode: crate::validate::deserialize::<T>,
        }
    }
}

impl<'g> BlockRun<'g> {
    /// Starts a block of the call `guard`.
    pub fn new(meta: &'static BlockMeta, guard: &'g CallGuard) -> Self {
        BlockRun {
            meta,
            guard,
            bindings: Vec::new(),
            values: Map::new(),
        }
    }

    /// Binds `<name>` (read).
    pub(crate) fn read<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
        schema: Option<SchemaFn>,
    ) -> Result<(), Error> {
        self.values
            .insert(name.to_owned(), to_json(self.meta, name, value)?);
        self.bindings.push(BindingInfo {
            name,
            type_name: short_type_name(type_name::<T>()),
            coerce: None,
            schema,
            kind: LocalKind::Bound,
        });
        Ok(())
    }

    /// Binds `<:name>` (writable): the model's values must fit `T`.
    pub(crate) fn write<T: Serialize + DeserializeOwned + JsonSchema>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.values
            .insert(name.to_owned(), to_json(self.meta, name, value)?);
        self.bindings.push(BindingInfo {
            name,
            type_name: short_type_name(type_name::<T>()),
            coerce: Some(coerce::<T>),
            schema: Some(schema_of::<T>),
            kind: LocalKind::Bound,
        });
        Ok(())
    }

    /// Runs the block with its interpolated `program`; `T` is the
    /// function's success type (for `return`), checked through `ret`.
    pub async fn run<T>(self, program: String, ret: ReturnSpec<T>) -> Result<Done<T>, Error> {
        let at = self.meta.location();
        let scope = self.guard.scope().cloned();
        let Some(env) = scope.as_ref().and_then(|s| s.env.clone()) else {
            return Err(Error::NoEnvironment {
                function: Some(self.meta.function.to_owned()),
            });
        };
        let frames = scope
            .as_ref()
            .map(|s| lock(&s.frames).clone())
            .unwrap_or_default();
        let mut values = Map::new();
        values.insert("memory".to_owned(), env.memory().json());
        values.extend(self.values);
        let mut bindings = self.bindings;
        add_params(
            &self.guard.params,
            self.meta.shadowed,
            &mut values,
            &mut bindings,
        );
        let ctx = ToolContext {
            at: at.clone(),
            root: env.workspace_root().to_path_buf(),
            memory: env.memory().clone(),
            bindings,
            locals: Mutex::new(Locals {
                values,
                assigned: Vec::new(),
            }),
        };
        let outer: Vec<_> = frames
            .iter()
            .filter(|f| !Arc::ptr_eq(f, &self.guard.frame))
            .cloned()
            .collect();
        let tools = visible_tools(&env, &frames);
        let this_call = locals_lines(&ctx);
        let return_type = short_type_name(type_name::<T>());
        let finish = Finish {
            in_loop: self.meta.in_loop,
            return_type: &return_type,
            return_schema: (ret.schema)(),
        };
        let cfg = env.configuration();
        let mut request = ChatRequest::new(
            cfg.model.clone(),
            vec![Message::user(user_text(
                &ctx, cfg, &program, &this_call, &outer, &finish,
            )?)],
        );
        request.system = Some(system_text()?);
        request.tools = tools.iter().map(|t| t.spec()).collect();
        request.max_tokens = cfg.max_tokens;

        let answer = converse(&env, request, &tools, &ctx, &at).await?;

        *lock(&self.guard.frame.last_locals) = Some(locals_lines(&ctx));

        let effect = effect_of(&answer, self.meta.in_loop, &at, &ret)?;
        let locals = std::mem::replace(
            &mut *lock(&ctx.locals),
            Locals {
                values: Map::new(),
                assigned: Vec::new(),
            },
        );
        Ok(Done {
            at,
            values: locals.values,
            assigned: locals.assigned,
            effect,
        })
    }
}

/// Adds the function's parameters to a block's locals (spec 8.1: the
/// context locals start from the function's locals, not only the bound
/// ones); a binding's current value, `memory` and a shadowed name win over
/// a parameter's call-start snapshot.
fn add_params(
    params: &[crate::env::Param],
    shadowed: &[&str],
    values: &mut Map<String, Value>,
    bindings: &mut Vec<BindingInfo>,
) {
    for param in params {
        if values.contains_key(param.name) || shadowed.contains(&param.name) {
            continue;
        }
        values.insert(param.name.to_owned(), param.value.clone());
        bindings.push(BindingInfo {
            name: param.name,
            type_name: param.type_name.clone(),
            coerce: None,
            schema: param.schema,
            kind: LocalKind::Param {
                mutable: param.mutable,
            },
        });
    }
}

/// Asks the model until it answers without tool calls, running the tools
/// it calls; the answer's text. Too many failed tool calls end the block
/// with the last failure, too many turns with [`Error::StepLimit`].
async fn converse(
    env: &Environment,
    mut request: ChatRequest,
    tools: &[Tool],
    ctx: &ToolContext,
    at: &BlockLocation,
) -> Result<String, Error> {
    let cfg = env.configuration();
    let failure_limit = if env.backend().provider() == crate::stub::PROVIDER {
        1
    } else {
        cfg.max_tool_failures.max(1)
    };
    let mut failures = 0;
    for _ in 0..cfg.max_steps {
        let response = env
            .backend()
            .chat(request.clone())
            .await
            .map_err(|source| Error::Backend {
                at: at.clone(),
                source: Box::new(source),
            })?;
        let calls: Vec<_> = response.tool_calls().into_iter().cloned().collect();
        if calls.is_empty() {
            return Ok(response.text());
        }
        request.messages.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
        });
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let outcome = call_tool(tools, ctx, &call, at).await;
            let content = outcome.content();
            let is_error = match outcome {
                Outcome::Ok(_) => false,
                Outcome::Failed { error, .. } => {
                    failures += 1;
                    if failures >= failure_limit {
                        return Err(error);
                    }
                    true
                }
            };
            results.push(ContentBlock::ToolResult {
                call_id: call.id.clone(),
                content,
                is_error,
            });
        }
        request.messages.push(Message {
            role: Role::Tool,
            content: results,
        });
    }
    Err(Error::StepLimit {
        at: at.clone(),
        limit: cfg.max_steps,
    })
}

/// Runs one tool call the model made (an unknown tool is a failed call).
async fn call_tool(
    tools: &[Tool],
    ctx: &ToolContext,
    call: &ToolCall,
    at: &BlockLocation,
) -> Outcome {
    let failed = |message: String, why: String| Outcome::Failed {
        output: serde_json::Value::Null,
        message,
        error: Error::Tool {
            at: at.clone(),
            tool: call.name.clone(),
            message: why,
        },
    };
    match tools.iter().find(|t| t.name() == call.name) {
        None => failed(
            format!("unknown tool: no tool named `{}`", call.name),
            "the model called a tool that does not exist".to_owned(),
        ),
        Some(tool) => match &tool.run {
            Run::Builtin(b) => b.call(ctx, &call.arguments),
            Run::User(handler) => match handler(ctx, call.arguments.clone()).await {
                Ok(v) => Outcome::Ok(v),
                Err(e) => failed(e.message().to_owned(), e.message().to_owned()),
            },
        },
    }
}

/// What the model's final answer tells the block to do: go on, `continue`
/// or `break` its loop, or return a value of the function's type.
fn effect_of<T>(
    answer: &str,
    in_loop: bool,
    at: &BlockLocation,
    ret: &ReturnSpec<T>,
) -> Result<Effect<T>, Error> {
    let parse_error = |message: String| ParseError {
        at: at.clone(),
        message,
        answer: answer.chars().take(200).collect(),
    };
    let returned = |message: String| Error::Return {
        at: at.clone(),
        type_name: short_type_name(type_name::<T>()),
        message,
    };
    Ok(match parse_final(answer).map_err(parse_error)? {
        Final::Proceed => Effect::None,
        f @ (Final::Continue | Final::Break) if !in_loop => {
            return Err(Error::EffectOutsideLoop {
                at: at.clone(),
                effect: if f == Final::Break {
                    "break"
                } else {
                    "continue"
                },
            });
        }
        Final::Continue => Effect::Continue,
        Final::Break => Effect::Break,
        Final::Return(value_json) => {
            let value = match value_json {
                None => Value::Null,
                // The final answer parsed; its effect failed: an error of
                // the block's execution, as the reference reports it.
                Some(text) => serde_json::from_str(&text)
                    .map_err(|e| returned(format!("`effect.value_json` is not JSON text: {e}")))?,
            };
            let typed = (ret.decode)(value).map_err(|r| {
                returned(match r.path {
                    Some(p) => format!("at `{p}`: {}", r.message),
                    None => r.message,
                })
            })?;
            Effect::Return(typed)
        }
        Final::Failed {
            message,
            error_type,
        } => {
            return Err(Error::Model {
                at: at.clone(),
                message,
                error_type,
            });
        }
    })
}

/// A finished block: the effect and the writable bindings to commit.
#[doc(hidden)]
pub struct Done<T> {
    at: BlockLocation,
    values: Map<String, Value>,
    assigned: Vec<&'static str>,
    effect: Effect<T>,
}

impl<T> Done<T> {
    /// Commits `<:name>` into `slot` if the block assigned it.
    pub(crate) fn commit<V: DeserializeOwned>(
        &mut self,
        name: &'static str,
        slot: &mut V,
    ) -> Result<(), Error> {
        if !self.assigned.contains(&name) {
            return Ok(());
        }
        let Some(value) = self.values.remove(name) else {
            return Ok(());
        };
        *slot = serde_json::from_value(value).map_err(|e| Error::Binding {
            at: self.at.clone(),
            binding: name.to_owned(),
            message: format!(
                "cannot commit the new value into `{}`: {e}",
                type_name::<V>()
            ),
        })?;
        Ok(())
    }

    /// The requested effect.
    pub fn into_effect(self) -> Effect<T> {
        self.effect
    }
}

/// The value of a function whose docstring block ended without `return`:
/// `()` and `Option` have one (null); other types are an error.
#[doc(hidden)]
pub fn implicit_return<T>(function: &'static str, ret: ReturnSpec<T>) -> Result<T, Error> {
    (ret.decode)(Value::Null).map_err(|_| Error::MissingReturn {
        function: function.to_owned(),
        type_name: short_type_name(type_name::<T>()),
    })
}
