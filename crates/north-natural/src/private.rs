//! Support for the code `#[natural]` and `#[tool]` generate. Not a public
//! API: names and signatures may change in any release.

use std::fmt::{Display, Write};
use std::future::Future;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::block::{BlockMeta, BlockRun, Done, Effect, ReturnSpec, implicit_return};
pub use crate::env::CallGuard;
pub use crate::schema::{SchemaFn, SchemaProbe, ViaJsonSchema, ViaNoSchema, schema_of};
pub use crate::tools::{ToolContext, ToolError, ToolFuture};
pub use futures::future::BoxFuture;
pub use schemars;
pub use serde;
pub use serde_json;

use crate::env::{current_scope, with_scope};
use crate::error::Error;

/// The return type of a natural function.
#[diagnostic::on_unimplemented(
    message = "a #[natural] function must return `Result<T, E>` where `E: From<north_natural::Error>`; `{Self}` does not qualify",
    label = "blocks propagate `north_natural::Error` through this return type",
    note = "use `north_natural::Result<T>` or your own error type with `impl From<north_natural::Error>`"
)]
pub trait NaturalReturn {
    /// The success type.
    type Ok;
    /// Wraps a block error.
    fn from_error(error: Error) -> Self;
    /// Wraps a returned value.
    fn from_ok(value: Self::Ok) -> Self;
}

impl<T, E: From<Error>> NaturalReturn for Result<T, E> {
    type Ok = T;

    fn from_error(error: Error) -> Self {
        Err(E::from(error))
    }

    fn from_ok(value: T) -> Self {
        Ok(value)
    }
}

/// Wraps a parameter of a natural function so method resolution can
/// capture it as a context local when its type is `Serialize`, and skip it
/// otherwise (autoref specialization: [`ViaSerialize`] applies to the probe
/// itself and wins when its bound holds; [`ViaNoSerialize`] applies one
/// reference further and is the fallback). The spec initializes context
/// locals from all of the function's locals, but a parameter the user never
/// bound must not turn a non-`Serialize` type — or a generic `T` — into a
/// compile error; it is simply not offered.
///
/// The generated code calls, for each parameter `x`:
/// `(&ParamProbe(&x)).natural_param(&mut call, "x", schema, mutable)`.
pub struct ParamProbe<'a, T: ?Sized>(pub &'a T);

/// Picked when the parameter's type is `Serialize`: captures it.
pub trait ViaSerialize {
    /// Captures the parameter into `call`.
    fn natural_param(
        &self,
        call: &mut CallGuard,
        name: &'static str,
        schema: Option<SchemaFn>,
        mutable: bool,
    );
}

impl<T: Serialize + ?Sized> ViaSerialize for ParamProbe<'_, T> {
    fn natural_param(
        &self,
        call: &mut CallGuard,
        name: &'static str,
        schema: Option<SchemaFn>,
        mutable: bool,
    ) {
        call.param(name, self.0, schema, mutable);
    }
}

/// Picked otherwise: the parameter is not a context local.
pub trait ViaNoSerialize {
    /// Does nothing.
    fn natural_param(
        &self,
        call: &mut CallGuard,
        name: &'static str,
        schema: Option<SchemaFn>,
        mutable: bool,
    );
}

impl<T: ?Sized> ViaNoSerialize for &ParamProbe<'_, T> {
    fn natural_param(&self, _: &mut CallGuard, _: &'static str, _: Option<SchemaFn>, _: bool) {}
}

/// Checks the return type where the function is declared.
pub const fn assert_natural_return<R: NaturalReturn>() {}

/// Appends an interpolated value.
pub fn interpolate(out: &mut String, value: &dyn Display) {
    let _ = write!(out, "{value}");
}

/// Decodes a tool's arguments object.
pub fn tool_args<A: DeserializeOwned>(tool: &str, args: Value) -> Result<A, ToolError> {
    crate::validate::deserialize::<A>(args).map_err(|r| {
        ToolError::new(match r.path {
            Some(p) => format!("invalid arguments for `{tool}` at `{p}`: {}", r.message),
            None => format!("invalid arguments for `{tool}`: {}", r.message),
        })
    })
}

/// A tool's `Result` output as JSON.
pub fn tool_result<T: Serialize, E: Display>(out: Result<T, E>) -> Result<Value, ToolError> {
    match out {
        Ok(v) => tool_value(v),
        Err(e) => Err(ToolError::new(e.to_string())),
    }
}

/// A tool's plain output as JSON.
pub fn tool_value<T: Serialize>(out: T) -> Result<Value, ToolError> {
    serde_json::to_value(out)
        .map_err(|e| ToolError::new(format!("cannot convert the tool's result to JSON: {e}")))
}

fn runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("north-natural")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Runs the body of a sync natural function to completion, carrying the
/// current environment into it.
pub fn block_on<R: NaturalReturn>(function: &'static str, body: impl Future<Output = R>) -> R {
    let scope = current_scope();
    let body = async move {
        match scope {
            Some(s) => with_scope(s, body).await,
            None => body.await,
        }
    };
    let fail = |message: String| {
        R::from_error(Error::Runtime {
            function: function.to_owned(),
            message,
        })
    };
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.runtime_flavor() {
            tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| handle.block_on(body))
            }
            _ => fail(
                "the sync form cannot run inside a current-thread tokio runtime; make the function async and await it".to_owned(),
            ),
        },
        Err(_) => match runtime() {
            Ok(rt) => rt.block_on(body),
            Err(e) => fail(format!("cannot start a tokio runtime: {e}")),
        },
    }
}
