//! Natural blocks: instructions inside Rust functions that a model executes
//! against the function's own variables (the spec `natural-blocks.md`).
//!
//! Rust controls the flow; the model executes the blocks. A function marked
//! [`#[natural]`](natural) may hold a *docstring block* (a doc comment whose
//! first non-empty line is exactly `natural`, run when the function starts)
//! and *inline blocks* (a standalone string-literal statement whose first
//! non-empty line is exactly `natural`, run where it stands). In the text,
//! `<name>` lets the model read a variable and `<:name>` lets it write one
//! (the variable must be `mut`); the values it writes are validated against
//! the variable's real Rust type. `{name}` interpolates a variable with
//! `Display` when the block runs; `{{` and `}}` are literal braces. All of
//! this is checked while the function compiles.
//!
//! Main types: [`Environment`] (configuration, workspace root, a
//! `north-llm` [`Backend`](north_llm::Backend), [`Memory`] — all four
//! required, through [`Environment::builder`]) set with [`environment`];
//! [`StubBackend`] to run with no model; [`Tool`] and [`#[tool]`](tool) for
//! user tools; [`Error`] and the three tool/answer error types
//! [`ParseError`], [`ToolEvalError`], [`ToolValidationError`];
//! [`check_blocks!`] to catch a forgotten `#[natural]` in a test. The
//! traits [`ReadableBinding`], [`WritableBinding`] and [`ReturnValue`] say
//! what the types of `<name>`, `<:name>` and the success value need; every
//! type with the derives has them, and the compiler names them when a derive
//! is missing.
//!
//! This crate must not run model-written code: the model acts only through
//! tools, and its expressions are side-effect-free jq filters.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! use north_natural::{
//!     Configuration, Envelope, Environment, Memory, StubBackend, environment, natural,
//! };
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// How a review feels.
//! #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[serde(rename_all = "lowercase")]
//! enum Sentiment {
//!     Positive,
//!     Negative,
//! }
//!
//! /// What the model remembers between calls.
//! #[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
//! struct Notes {
//!     /// Products people complained about.
//!     complaints: Vec<String>,
//! }
//!
//! #[natural]
//! async fn triage(product: &str, reviews: Vec<String>) -> north_natural::Result<u32> {
//!     let mut negative = 0u32;
//!     for review in &reviews {
//!         let mut sentiment = Sentiment::Positive;
//!         "natural
//!         Classify this review of {product} into <:sentiment>: {review}
//!         If it is negative and <product> is not in memory.complaints yet, add it.
//!         ";
//!         if sentiment == Sentiment::Negative {
//!             negative += 1;
//!         }
//!     }
//!     Ok(negative)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> north_natural::Result<()> {
//! // The stub backend answers each block from an envelope: no model needed.
//! // With a key, use `north_natural::backend_from_env()` instead.
//! let stub = StubBackend::new([
//!     Envelope::done().bind("sentiment", "positive"),
//!     Envelope::done()
//!         .bind("sentiment", "negative")
//!         .bind("memory.complaints", ["kettle"]),
//! ]);
//! let memory = Memory::new(Notes::default())?;
//! // The spec makes all four parts of an environment required: leaving one
//! // out of the builder is a compile error.
//! let env = Environment::builder()
//!     .configuration(Configuration::default())
//!     .workspace_root(".")
//!     .backend(Arc::new(stub))
//!     .memory(&memory)
//!     .build();
//!
//! let reviews = vec!["Boils fast.".to_owned(), "Leaks everywhere.".to_owned()];
//! let negative = environment(env, triage("kettle", reviews)).await?;
//! assert_eq!(negative, 1);
//! assert_eq!(memory.get().complaints, ["kettle"]);
//! # Ok(())
//! # }
//! ```
//!
//! # Blocks at run time
//!
//! When a block runs, the bound variables become the *context locals*, a
//! JSON object that also holds `memory` and the function's parameters: each
//! parameter whose type is `Serialize` is captured when the call starts and
//! offered read-only to every block that does not bind it (a parameter of
//! another type is left out; bind a variable to give the model its current
//! value). The model sees the program, the bindings with their Rust types
//! (and the JSON schema of writable ones), a bounded summary of the locals
//! (this call's, then those of enclosing natural calls on the same task) and
//! of the memory. It works through
//! tools: `nh_eval` (a jq filter over the context locals), `nh_dir`,
//! `nh_help` (the JSON schema of a binding's type, with its doc comments)
//! and `nh_assign(target, expression)`, which validates the value against
//! the target's type — a writable binding or `memory.<field>` — and changes
//! nothing if it does not fit. It ends with a JSON object: `{"effect":
//! null}`, `{"effect": {"type": "continue" | "break"}}` (only for blocks
//! inside a `for`/`while`/`loop` body; they act on the innermost loop, as
//! an unlabeled Rust `break`/`continue` at the block would, even from inside
//! a labeled block in that loop; a `loop` left with `break <value>` cannot
//! hold a block), `{"effect": {"type": "return",
//! "value_json": "..."}}` (validated against the function's success type),
//! or `{"error": {"message": ..., "type": ...}}`. Writable bindings that were
//! assigned are then committed into the Rust variables.
//!
//! A natural function returns `Result<T, E>` with `E: From<Error>`; a
//! function whose body is empty returns what its docstring block returns.
//! A sync `fn` works too: it blocks on a runtime and takes its environment
//! from [`environment_sync`].
//!
//! # Tools
//!
//! ```
//! use north_natural::{ToolContext, tool};
//!
//! /// Looks up the stock level of a product.
//! #[tool]
//! async fn stock(ctx: &ToolContext, product: String) -> Result<u32, String> {
//!     match product.as_str() {
//!         "kettle" => Ok(12),
//!         other => Err(format!("no product `{other}` (asked from {})", ctx.function())),
//!     }
//! }
//!
//! // `#[tool]` adds `stock_tool()`; register it globally, in an environment
//! // or — from inside a natural call — for the rest of that call.
//! north_natural::register_global_tool(stock_tool()).unwrap();
//! # assert!(north_natural::remove_global_tool("stock"));
//! ```
//!
//! Names are ASCII identifiers; registering a name that is already visible
//! from where the registration happens — built-in, global, the environment,
//! or the current and enclosing natural calls — fails with
//! [`ToolRegistrationError::Conflict`] naming where the existing tool lives,
//! unless the tool is marked `overwrite(true)` (or
//! `#[tool(overwrite = true)]`).
//!
//! # A forgotten `#[natural]`
//!
//! Without the attribute a natural doc comment is just documentation and an
//! inline block just a string: nothing runs and nothing fails. Scan the
//! crate in a test:
//!
//! ```
//! // In a test: #[test] fn every_natural_block_has_its_attribute() { ... }
//! north_natural::check_blocks!().assert_ok(); // scans src/, panics with file:line and the fix
//! ```
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `error`: errors of natural functions
//! - `schema`: jSON schemas of Rust types (with their doc comments), cached by schema id, plus the…
//! - `summary`: bounded, human-readable summaries of JSON values for prompts and tool results
//! - `validate`: validating JSON into exact Rust types, with the path of the failure
//! - `memory`: memory (uses `error`, `schema`, `summary`, `validate`)
//! - `sync`: locking that survives a poisoned mutex
//! - `jq`: jq filters over JSON, through the jaq crates
//! - `tools`: tools the model may call during a block (uses `error`, `jq`, `memory`, `schema`, `summary`, `sync`, `validate`)
//! - `env`: the environment natural blocks run in, carried by dynamic scoping (uses `error`, `memory`, `schema`, `summary`, `sync`, `tools`)
//! - `builder`: building an environment with its four required fields (uses `env`, `memory`)
//! - `final_answer`: the final JSON contract (uses `summary`)
//! - `prompt`: the prompt of a block, built with `north-prompt` (uses `env`, `error`, `schema`, `summary`, `sync`, `tools`)
//! - `scope`: where tools are registered and which a block sees (uses `env`, `error`, `sync`, `tools`)
//! - `stub`: the stub backend (uses `prompt`, `sync`)
//! - `block`: running one block (uses `env`, `error`, `final_answer`, `prompt`, `schema`, `scope`, `stub`, `summary`, `sync`, `tools`, `validate`)
//! - `binding`: what the types of bindings and of the success value need, as public traits (uses `block`, `error`, `schema`)
//! - `private`: support for the code `#[natural]` and `#[tool]` generate (uses `block`, `env`, `error`, `schema`, `tools`, `validate`)
//! - `providers`: picking a real model provider from the process environment (uses `env`; the `http` feature, on by default)
//! - `check`: the report of `check_blocks!`, which finds natural blocks without `#[natural]`

mod binding;
mod block;
pub mod builder;
mod check;
mod env;
mod error;
mod final_answer;
mod jq;
mod memory;
mod prompt;
#[cfg(feature = "http")]
mod providers;
mod schema;
mod scope;
mod stub;
mod summary;
mod sync;
mod tools;
mod validate;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// The `schemars` North uses for binding and tool schemas (derive
/// `schemars::JsonSchema` on your types from the same version).
pub use schemars;

pub use binding::{ReadableBinding, ReturnValue, WritableBinding};
pub use builder::EnvironmentBuilder;
pub use check::{BlockCheck, BlockCheckError, BlockProblem};
pub use env::{
    Configuration, Environment, EnvironmentOverride, environment, environment_override,
    environment_override_sync, environment_sync, get_environment,
};
pub use error::{
    BlockLocation, Error, ParseError, ToolEvalError, ToolOrigin, ToolRegistrationError,
    ToolValidationError,
};
pub use memory::{Memory, MemoryHandle, MemoryModel, NoMemory};
pub use north_natural_macros::{check_blocks, natural, tool};
pub use prompt::program_of;
#[cfg(feature = "http")]
pub use providers::backend_from_env;
pub use scope::{ToolScope, register_global_tool, register_tool, remove_global_tool};
pub use stub::{Envelope, StubBackend, StubBlock, StubToolCall};
pub use tools::{Tool, ToolContext, ToolError, ToolFuture, is_valid_tool_name};

/// `Result` with [`Error`]: a ready-made return type for natural functions.
pub type Result<T, E = Error> = std::result::Result<T, E>;
