//! The environment natural blocks run in, carried by dynamic scoping: a
//! tokio task-local for async code and a thread-local for sync code. Also
//! the stack of natural calls active on the task (for call-scoped tools and
//! the outward locals summary) and each call's parameter snapshot.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use north_llm::Backend;
use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::memory::{Memory, MemoryHandle, MemoryModel};
use crate::schema::SchemaFn;
use crate::summary::{local_line, short_type_name};
use crate::sync::lock;
use crate::tools::{LocalKind, Registry};

/// Settings for natural blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configuration {
    /// Model name sent to the backend (default: OpenAI `gpt-5.2`).
    pub model: String,
    /// Model turns allowed per block before it fails.
    pub max_steps: u32,
    /// Failed tool calls allowed per block; the next failure ends the block
    /// with that failure's error. (On the stub backend the first failure
    /// ends it: there is no model to repair it.)
    pub max_tool_failures: u32,
    /// Maximum characters of the locals summary (all frames together).
    pub locals_summary_limit: usize,
    /// Maximum characters of the memory summary.
    pub memory_summary_limit: usize,
    /// Output token limit per model turn.
    pub max_tokens: u32,
}

impl Default for Configuration {
    fn default() -> Self {
        Configuration {
            model: north_llm::openai::DEFAULT_MODEL.to_owned(),
            max_steps: 16,
            max_tool_failures: 3,
            locals_summary_limit: 10_000,
            memory_summary_limit: 4_000,
            max_tokens: 4096,
        }
    }
}

impl Configuration {
    /// The default configuration with another model name.
    pub fn with_model(model: impl Into<String>) -> Self {
        Configuration {
            model: model.into(),
            ..Configuration::default()
        }
    }
}

/// What natural blocks need: configuration, workspace root, a model
/// backend and the memory — all four required by the spec, so build one
/// with [`Environment::builder`] (or [`Environment::stub`] for tests on the
/// stub backend). Cheap to clone (shared parts, including its tools).
#[derive(Clone)]
pub struct Environment {
    configuration: Arc<Configuration>,
    workspace_root: Arc<PathBuf>,
    backend: Arc<dyn Backend>,
    memory: MemoryHandle,
    tools: Arc<Mutex<Registry>>,
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Environment")
            .field("configuration", &self.configuration)
            .field("workspace_root", &self.workspace_root)
            .field("backend", &self.backend.provider())
            .field("memory", &self.memory)
            .finish_non_exhaustive()
    }
}

impl Environment {
    /// An environment from its four required parts (see
    /// [`Environment::builder`], the public way to provide them).
    pub(crate) fn from_parts(
        configuration: Configuration,
        workspace_root: PathBuf,
        backend: Arc<dyn Backend>,
        memory: MemoryHandle,
    ) -> Self {
        Environment {
            configuration: Arc::new(configuration),
            workspace_root: Arc::new(workspace_root),
            backend,
            memory,
            tools: Arc::default(),
        }
    }

    /// This environment with another configuration (tools registered in
    /// it stay shared).
    #[must_use]
    pub fn with_configuration(mut self, configuration: Configuration) -> Self {
        self.configuration = Arc::new(configuration);
        self
    }

    /// This environment with another workspace root (tools stay shared).
    #[must_use]
    pub fn with_workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace_root = Arc::new(root.into());
        self
    }

    /// This environment with another memory (tools stay shared); keep a
    /// clone of `memory` to read it afterwards.
    #[must_use]
    pub fn with_memory<M: MemoryModel>(mut self, memory: &Memory<M>) -> Self {
        self.memory = MemoryHandle::from(memory);
        self
    }

    /// The configuration.
    pub fn configuration(&self) -> &Configuration {
        &self.configuration
    }

    /// The workspace root.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// The model backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// The memory.
    pub fn memory(&self) -> &MemoryHandle {
        &self.memory
    }

    pub(crate) fn tools(&self) -> MutexGuard<'_, Registry> {
        lock(&self.tools)
    }
}

/// Fields to overlay on the current environment (see [`environment_override`]).
#[derive(Default, Clone)]
pub struct EnvironmentOverride {
    configuration: Option<Configuration>,
    workspace_root: Option<PathBuf>,
    backend: Option<Arc<dyn Backend>>,
    memory: Option<MemoryHandle>,
}

impl fmt::Debug for EnvironmentOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvironmentOverride")
            .field("configuration", &self.configuration)
            .field("workspace_root", &self.workspace_root)
            .field("backend", &self.backend.as_ref().map(|b| b.provider()))
            .field("memory", &self.memory)
            .finish()
    }
}

impl EnvironmentOverride {
    /// Overrides nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Overrides the configuration.
    #[must_use]
    pub fn configuration(mut self, configuration: Configuration) -> Self {
        self.configuration = Some(configuration);
        self
    }

    /// Overrides the workspace root.
    #[must_use]
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace_root = Some(root.into());
        self
    }

    /// Overrides the backend.
    #[must_use]
    pub fn backend(mut self, backend: Arc<dyn Backend>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Overrides the memory.
    #[must_use]
    pub fn memory<M: MemoryModel>(mut self, memory: &Memory<M>) -> Self {
        self.memory = Some(MemoryHandle::from(memory));
        self
    }

    fn apply(self, base: &Environment) -> Environment {
        let mut env = base.clone();
        if let Some(c) = self.configuration {
            env.configuration = Arc::new(c);
        }
        if let Some(r) = self.workspace_root {
            env.workspace_root = Arc::new(r);
        }
        if let Some(b) = self.backend {
            env.backend = b;
        }
        if let Some(m) = self.memory {
            env.memory = m;
        }
        env
    }
}

/// One active natural call.
pub(crate) struct Frame {
    pub function: &'static str,
    pub tools: Mutex<Registry>,
    /// The locals summary of this call for nested calls: its latest
    /// block's, or its parameters before its first block.
    pub last_locals: Mutex<Option<String>>,
}

/// What a task (or thread) carries: its environment and natural call stack.
pub(crate) struct Scope {
    pub env: Option<Environment>,
    pub frames: Mutex<Vec<Arc<Frame>>>,
}

impl Scope {
    fn child(env: Option<Environment>, parent: Option<&Scope>) -> Arc<Scope> {
        let frames = parent.map(|p| lock(&p.frames).clone()).unwrap_or_default();
        Arc::new(Scope {
            env,
            frames: Mutex::new(frames),
        })
    }
}

tokio::task_local! {
    static TASK_SCOPE: Arc<Scope>;
}

thread_local! {
    static THREAD_SCOPES: RefCell<Vec<Arc<Scope>>> = const { RefCell::new(Vec::new()) };
}

/// The innermost scope: the task's, else the thread's.
pub(crate) fn current_scope() -> Option<Arc<Scope>> {
    TASK_SCOPE
        .try_with(|s| s.clone())
        .ok()
        .or_else(|| THREAD_SCOPES.with(|t| t.borrow().last().cloned()))
}

/// Runs `future` with `scope` as the task's scope.
pub(crate) async fn with_scope<F: Future>(scope: Arc<Scope>, future: F) -> F::Output {
    TASK_SCOPE.scope(scope, future).await
}

/// Runs `future` with `env` as its environment (replacing any current one;
/// usable when none is set). Tasks spawned inside do not inherit it.
pub async fn environment<F: Future>(env: Environment, future: F) -> F::Output {
    let parent = current_scope();
    with_scope(Scope::child(Some(env), parent.as_deref()), future).await
}

/// Runs `f` with `env` as the environment of this thread (for the sync
/// form of natural functions).
pub fn environment_sync<R>(env: Environment, f: impl FnOnce() -> R) -> R {
    let parent = current_scope();
    let scope = Scope::child(Some(env), parent.as_deref());
    THREAD_SCOPES.with(|t| t.borrow_mut().push(scope));
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            THREAD_SCOPES.with(|t| t.borrow_mut().pop());
        }
    }
    let _pop = Pop;
    f()
}

/// Runs `future` with the current environment overlaid by `overrides`.
/// Fails with [`Error::NoEnvironment`] when no environment is active.
pub async fn environment_override<F: Future>(
    overrides: EnvironmentOverride,
    future: F,
) -> Result<F::Output, Error> {
    let parent = current_scope();
    let base = get_environment()?;
    let env = overrides.apply(&base);
    Ok(with_scope(Scope::child(Some(env), parent.as_deref()), future).await)
}

/// The sync form of [`environment_override`].
pub fn environment_override_sync<R>(
    overrides: EnvironmentOverride,
    f: impl FnOnce() -> R,
) -> Result<R, Error> {
    let base = get_environment()?;
    Ok(environment_sync(overrides.apply(&base), f))
}

/// The current environment, or [`Error::NoEnvironment`].
pub fn get_environment() -> Result<Environment, Error> {
    current_scope()
        .and_then(|s| s.env.clone())
        .ok_or(Error::NoEnvironment { function: None })
}

/// A parameter of a natural call, captured as JSON when the call starts so
/// every block can offer it as a context local (spec 8.1) without naming it.
pub(crate) struct Param {
    pub name: &'static str,
    pub type_name: String,
    pub schema: Option<SchemaFn>,
    pub value: Value,
    /// `mut x` or `x: &mut T`: the function may change it after the
    /// snapshot, so the model is told the value is the one at call start.
    pub mutable: bool,
}

/// Marks a natural call active on the current task for its lifetime.
#[doc(hidden)]
pub struct CallGuard {
    scope: Option<Arc<Scope>>,
    pub(crate) frame: Arc<Frame>,
    pub(crate) params: Vec<Param>,
}

impl fmt::Debug for CallGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallGuard")
            .field("function", &self.frame.function)
            .finish_non_exhaustive()
    }
}

impl CallGuard {
    /// Enters a call of `function`.
    pub fn enter(function: &'static str) -> Self {
        let frame = Arc::new(Frame {
            function,
            tools: Mutex::default(),
            last_locals: Mutex::default(),
        });
        let scope = current_scope();
        if let Some(s) = &scope {
            lock(&s.frames).push(frame.clone());
        }
        CallGuard {
            scope,
            frame,
            params: Vec::new(),
        }
    }

    /// Captures the parameter `name` as a context local for this call's
    /// blocks. Taken once, at call start, because a later borrow in a
    /// block could fail to compile once the body has moved the parameter
    /// (`for line in lines`); skipped when no environment is active (no
    /// block can run) or when the value does not serialize (a parameter
    /// the user never bound must not fail the call).
    pub fn param<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
        schema: Option<SchemaFn>,
        mutable: bool,
    ) {
        if self.scope.as_ref().is_none_or(|s| s.env.is_none()) {
            return;
        }
        let Ok(value) = serde_json::to_value(value) else {
            return;
        };
        let type_name = short_type_name(std::any::type_name::<T>());
        // Until this call's first block replaces it, the call's summary for
        // nested calls is its parameters: the spec's summary walks up the
        // call stack, and an enclosing call need not have run a block yet.
        let note = LocalKind::Param { mutable }.note(false);
        local_line(
            lock(&self.frame.last_locals).get_or_insert_default(),
            name,
            &type_name,
            note,
            &value,
        );
        self.params.push(Param {
            name,
            type_name,
            schema,
            value,
            mutable,
        });
    }

    pub(crate) fn scope(&self) -> Option<&Arc<Scope>> {
        self.scope.as_ref()
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(s) = &self.scope {
            let mut frames = lock(&s.frames);
            if let Some(i) = frames.iter().rposition(|f| Arc::ptr_eq(f, &self.frame)) {
                frames.remove(i);
            }
        }
    }
}
