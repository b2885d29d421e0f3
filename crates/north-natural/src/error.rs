//! Errors of natural functions. Every message names the function and the
//! block, and the binding or target when there is one.

use std::fmt;

use north_llm::LlmError;
use thiserror::Error;

/// Where an error happened: the natural function and the block in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLocation {
    /// The function's name.
    pub function: String,
    /// The block: `docstring block` or `inline block N (line L)`.
    pub block: String,
}

impl BlockLocation {
    pub(crate) fn new(function: &str, block: impl Into<String>) -> Self {
        BlockLocation {
            function: function.to_owned(),
            block: block.into(),
        }
    }
}

impl fmt::Display for BlockLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "natural function `{}`, {}", self.function, self.block)
    }
}

/// The model's final answer is not the JSON the contract asks for. (A
/// `return` effect whose `value_json` is not JSON is [`Error::Return`]:
/// the answer parsed, its effect failed.)
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{at}: invalid final answer: {message}")]
pub struct ParseError {
    /// Where.
    pub at: BlockLocation,
    /// What is wrong.
    pub message: String,
    /// The offending text (cut to 200 characters).
    pub answer: String,
}

/// A tool could not evaluate an expression (jq syntax or runtime error, a
/// target that is not allowed, bad arguments).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{at}: {tool} cannot evaluate `{expression}`: {message}")]
pub struct ToolEvalError {
    /// Where.
    pub at: BlockLocation,
    /// The tool (`nh_eval`, `nh_assign`, ...).
    pub tool: String,
    /// The expression (or the raw arguments when they were unusable).
    pub expression: String,
    /// What went wrong.
    pub message: String,
}

/// A value did not fit the Rust type of its target (`nh_assign` to a
/// writable binding or a memory field); nothing was updated.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{at}: {value} does not fit {target} of type `{type_name}`{}: {message}", path.as_deref().map(|p| format!(" at `{p}`")).unwrap_or_default())]
pub struct ToolValidationError {
    /// Where.
    pub at: BlockLocation,
    /// The target: a binding name or `memory.<field>`.
    pub target: String,
    /// The Rust type the value had to fit.
    pub type_name: String,
    /// Path inside the value where validation failed, if known.
    pub path: Option<String>,
    /// The validation message.
    pub message: String,
    /// A short summary of the rejected value.
    pub value: String,
}

/// Where a visible tool lives, as a name conflict reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOrigin {
    /// One of the `nh_*` built-ins.
    BuiltIn,
    /// The global registry.
    Global,
    /// The environment's registry.
    Environment,
    /// Registered during a natural call still active on the task: the
    /// current one or one enclosing it.
    Call {
        /// That call's function.
        function: String,
    },
}

impl fmt::Display for ToolOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolOrigin::BuiltIn => f.write_str("the built-in tool"),
            ToolOrigin::Global => f.write_str("the global tool"),
            ToolOrigin::Environment => f.write_str("the environment tool"),
            ToolOrigin::Call { function } => {
                write!(f, "the call-scoped tool (natural call `{function}`)")
            }
        }
    }
}

/// A tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ToolRegistrationError {
    /// The name is not ASCII `^[A-Za-z_][A-Za-z0-9_]*$`.
    #[error(
        "invalid tool name `{name}`: names are ASCII letters, digits and `_`, not starting with a digit"
    )]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// A tool visible from where the registration happens already has the
    /// name and `overwrite` was not set.
    #[error(
        "tool `{name}` conflicts with {existing} of the same name; register it with overwrite = true to replace it"
    )]
    Conflict {
        /// The name.
        name: String,
        /// Where the existing tool lives (the innermost one, when several
        /// scopes have the name).
        existing: ToolOrigin,
    },
}

/// Everything a natural function can fail with. Natural functions return
/// `Result<T, E>` with `E: From<Error>`, so blocks propagate with `?`.
#[derive(Debug, Error)]
pub enum Error {
    /// No environment is active (see [`environment`](crate::environment)).
    #[error("{}no natural environment is active: run the call inside north_natural::environment(...)", function.as_deref().map(|f| format!("natural function `{f}`: ")).unwrap_or_default())]
    NoEnvironment {
        /// The function that needed it, if any.
        function: Option<String>,
    },
    /// The final answer broke the JSON contract.
    #[error(transparent)]
    Parse(Box<ParseError>),
    /// A tool evaluation failed and the model did not recover.
    #[error(transparent)]
    ToolEval(Box<ToolEvalError>),
    /// A value did not fit its target's type and the model did not recover.
    #[error(transparent)]
    ToolValidation(Box<ToolValidationError>),
    /// A user tool failed and the model did not recover.
    #[error("{at}: tool `{tool}` failed: {message}")]
    Tool {
        /// Where.
        at: BlockLocation,
        /// The tool.
        tool: String,
        /// Its error.
        message: String,
    },
    /// A `return` effect's value does not fit the function's return type.
    #[error("{at}: the returned value does not fit the return type `{type_name}`: {message}")]
    Return {
        /// Where.
        at: BlockLocation,
        /// The function's success type.
        type_name: String,
        /// Why.
        message: String,
    },
    /// The model reported that it could not execute the block.
    #[error("{at}: the model reported an error{}: {message}", error_type.as_deref().map(|t| format!(" ({t})")).unwrap_or_default())]
    Model {
        /// Where.
        at: BlockLocation,
        /// The model's message.
        message: String,
        /// The model's error type, if it gave one.
        error_type: Option<String>,
    },
    /// `break` or `continue` from a block that is not inside a loop.
    #[error("{at}: the model asked for `{effect}`, but this block is not inside a loop")]
    EffectOutsideLoop {
        /// Where.
        at: BlockLocation,
        /// `break` or `continue`.
        effect: &'static str,
    },
    /// The function ended without a return effect and its return type has
    /// no value for "nothing" (only `()` and `Option` do).
    #[error(
        "natural function `{function}` ended without a return value of type `{type_name}`: the docstring block did not request a `return` effect"
    )]
    MissingReturn {
        /// The function.
        function: String,
        /// Its success type.
        type_name: String,
    },
    /// The model backend failed.
    #[error("{at}: model request failed: {source}")]
    Backend {
        /// Where.
        at: BlockLocation,
        /// The backend error.
        #[source]
        source: Box<LlmError>,
    },
    /// The block used more model turns than allowed.
    #[error("{at}: no final answer after {limit} model turns")]
    StepLimit {
        /// Where.
        at: BlockLocation,
        /// The limit (`Configuration::max_steps`).
        limit: u32,
    },
    /// A bound variable could not be turned into JSON or back.
    #[error("{at}: binding `{binding}`: {message}")]
    Binding {
        /// Where.
        at: BlockLocation,
        /// The binding.
        binding: String,
        /// What failed.
        message: String,
    },
    /// Memory could not be set up.
    #[error("memory of type `{type_name}`: {message}")]
    Memory {
        /// The memory type.
        type_name: String,
        /// What is wrong.
        message: String,
    },
    /// The block's prompt could not be built.
    #[error("cannot build the natural block prompt: {message}")]
    Prompt {
        /// Why.
        message: String,
    },
    /// Tool registration failed.
    #[error(transparent)]
    Registration(#[from] ToolRegistrationError),
    /// The synchronous form of a natural function could not run.
    #[error("natural function `{function}`: {message}")]
    Runtime {
        /// The function.
        function: String,
        /// Why.
        message: String,
    },
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Error::Parse(Box::new(e))
    }
}

impl From<ToolEvalError> for Error {
    fn from(e: ToolEvalError) -> Self {
        Error::ToolEval(Box::new(e))
    }
}

impl From<ToolValidationError> for Error {
    fn from(e: ToolValidationError) -> Self {
        Error::ToolValidation(Box::new(e))
    }
}
