//! Proc macros for `north-natural` (use them through that crate):
//! `#[natural]` compiles a function's natural blocks at expansion time —
//! sentinel detection, binding extraction and checks against the lexical
//! scope, `{ident}` interpolation, loop context — into calls of the
//! `north-natural` runtime; `#[tool]` declares a tool from a function.
//!
//! `check_blocks!` scans source files for natural blocks in functions that
//! lack `#[natural]`.
//!
//! This crate must not contain runtime behaviour: everything it generates
//! calls `north_natural::__private` or builds `north_natural` values.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `text`: block text at expansion time
//! - `lex`: a small Rust lexer with line numbers, for `check_blocks!`
//! - `loops`: the loops around blocks: which one a block's `continue`/`break` acts on
//! - `natural`: `#[natural]` (uses `loops`, `text`)
//! - `tool`: `#[tool]` (uses `text`)
//! - `check`: `check_blocks!` (uses `lex`, `text`)

use proc_macro::TokenStream;

mod check;
mod lex;
mod loops;
mod natural;
mod text;
mod tool;

/// Compiles the natural blocks of a function.
///
/// The function (async, or sync to block on a runtime) returns
/// `Result<T, E>` with `E: From<north_natural::Error>`. Its docstring block
/// (a doc comment whose first non-empty line is exactly `natural`) runs when
/// it starts; each inline block (a string-literal statement whose first
/// non-empty line is exactly `natural`) runs where it stands. `<name>` and
/// `<:name>` bind variables in scope (`mut` for `<:name>`), `{name}`
/// interpolates one, `{{`/`}}` are literal braces. A block inside a loop body
/// may `continue` or `break` the innermost loop (also from a labeled block
/// in it); a `loop` left with `break <value>`, a closure and an `async` block
/// cannot hold a block. See the `north_natural` crate docs.
#[proc_macro_attribute]
pub fn natural(attr: TokenStream, item: TokenStream) -> TokenStream {
    natural::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Declares a tool for natural blocks.
///
/// The function's first parameter is `&north_natural::ToolContext`; the
/// others are its arguments (their types give the JSON schema) and its doc
/// comment is the description. It may be async and may return `Result<T, E>`
/// (`E: Display`) or a plain `T: Serialize`. Adds `<name>_tool()` returning a
/// `north_natural::Tool`. Options: `name = "..."`, `description = "..."`,
/// `overwrite = true`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Finds functions that hold a natural block but no `#[natural]`
/// attribute: without it, a natural doc comment is only documentation and an
/// inline block only a string, so nothing runs and nothing fails.
///
/// `check_blocks!()` scans `src/`; `check_blocks!("src", "examples")` scans
/// the given files and directories (relative to the crate's `Cargo.toml`
/// directory, recursively, skipping hidden and `target` directories). The
/// scan happens while the calling crate compiles, with the same block rules
/// as `#[natural]`, and each scanned file is tracked so an edit triggers a
/// new scan. It evaluates to a `north_natural::BlockCheck`; in a test:
///
/// ```ignore
/// #[test]
/// fn every_natural_block_has_its_attribute() {
///     north_natural::check_blocks!().assert_ok();
/// }
/// ```
///
/// A path that does not exist is a compile error.
#[proc_macro]
pub fn check_blocks(input: TokenStream) -> TokenStream {
    check::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
