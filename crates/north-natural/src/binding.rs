//! What the types around a block need: a read binding's, a writable
//! binding's and the function's success type. `#[natural]` reaches the
//! runtime through these traits (`Trait::method(&value, ...)`), so a missing
//! derive is reported with the trait's own message — naming the type and the
//! derive to add — and with the public trait as the only requirement shown,
//! instead of a bare trait bound on the runtime's internals.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::block::{BlockRun, Done, ReturnSpec};
use crate::error::Error;
use crate::schema::SchemaFn;

/// What the type of a read binding (`<name>`) needs: `serde::Serialize`,
/// so the model can see the value.
///
/// Implemented for every `Serialize` type; there is nothing to implement
/// by hand. It is public so that the compiler's message for a type that
/// lacks it names something you can look up.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a read binding (`<name>`): it needs `serde::Serialize`, so the model can see its value",
    label = "a read binding of this block has type `{Self}`",
    note = "add `#[derive(serde::Serialize)]` to `{Self}`, or bind a variable made from it that is `Serialize` (for example a `String`)"
)]
pub trait ReadableBinding {
    /// Binds `<name>` into `block`. Called by the code `#[natural]`
    /// generates; not a stable API.
    #[doc(hidden)]
    fn __natural_read(
        &self,
        block: &mut BlockRun<'_>,
        name: &'static str,
        schema: Option<SchemaFn>,
    ) -> Result<(), Error>;
}

impl<T: Serialize + ?Sized> ReadableBinding for T {
    fn __natural_read(
        &self,
        block: &mut BlockRun<'_>,
        name: &'static str,
        schema: Option<SchemaFn>,
    ) -> Result<(), Error> {
        block.read(name, self, schema)
    }
}

/// What the type of a writable binding (`<:name>`) needs:
/// `schemars::JsonSchema` (the model is shown the schema), `serde::Serialize`
/// (it sees the current value) and `serde::Deserialize` (its value is
/// validated into the type and committed).
///
/// Implemented for every type with the three; there is nothing to
/// implement by hand. It is public so that the compiler's message for a type
/// that lacks one names something you can look up.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a writable binding (`<:name>`): it needs `schemars::JsonSchema`, `serde::Serialize` and `serde::Deserialize`",
    label = "a writable binding of this block has type `{Self}`",
    note = "add `#[derive(schemars::JsonSchema, serde::Serialize, serde::Deserialize)]` to `{Self}`"
)]
pub trait WritableBinding {
    /// Binds `<:name>` into `block`. Called by the code `#[natural]`
    /// generates; not a stable API.
    #[doc(hidden)]
    fn __natural_write(&self, block: &mut BlockRun<'_>, name: &'static str) -> Result<(), Error>;

    /// Commits the block's value of `<:name>` into `self` if the block
    /// assigned it. Called by the code `#[natural]` generates; not a stable
    /// API.
    #[doc(hidden)]
    fn __natural_commit<R>(&mut self, done: &mut Done<R>, name: &'static str) -> Result<(), Error>;
}

impl<T: Serialize + DeserializeOwned + JsonSchema> WritableBinding for T {
    fn __natural_write(&self, block: &mut BlockRun<'_>, name: &'static str) -> Result<(), Error> {
        block.write(name, self)
    }

    fn __natural_commit<R>(&mut self, done: &mut Done<R>, name: &'static str) -> Result<(), Error> {
        done.commit(name, self)
    }
}

/// What the success type `T` of a natural function's `Result<T, E>` needs
/// once the function has a block: `schemars::JsonSchema` (the model is shown
/// the schema of what it may `return`) and `serde::Deserialize` (the value it
/// returns is validated into `T`).
///
/// Implemented for every type with the two; there is nothing to implement
/// by hand. It is public so that the compiler's message for a type that
/// lacks one names something you can look up.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the success type of a #[natural] function with blocks: it needs `schemars::JsonSchema` and `serde::Deserialize`, because a block may `return` a value the model gives",
    label = "the model's `return` value is validated into `{Self}`",
    note = "add `#[derive(schemars::JsonSchema, serde::Deserialize)]` to `{Self}`, or return a type that has them and convert after the call"
)]
pub trait ReturnValue {
    /// How blocks validate a returned value. Called by the code
    /// `#[natural]` generates; not a stable API.
    #[doc(hidden)]
    fn __natural_return() -> ReturnSpec<Self>
    where
        Self: Sized;
}

impl<T: DeserializeOwned + JsonSchema> ReturnValue for T {
    fn __natural_return() -> ReturnSpec<T> {
        ReturnSpec::of()
    }
}
