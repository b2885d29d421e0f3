//! Building an [`Environment`]. The spec (section 10) makes all four of its
//! fields required — configuration, workspace root, the model backend (the
//! spec's "agent") and memory — so the builder tracks which ones were set in
//! its type and offers `build` only when all four are: forgetting one is a
//! compile error that names it, not a silent default.

use std::path::PathBuf;
use std::sync::Arc;

use north_llm::Backend;

use crate::env::{Configuration, Environment};
use crate::memory::MemoryHandle;

/// Marker: [`EnvironmentBuilder::configuration`] was not called yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct MissingConfiguration;

/// Marker: [`EnvironmentBuilder::workspace_root`] was not called yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct MissingWorkspaceRoot;

/// Marker: [`EnvironmentBuilder::backend`] was not called yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct MissingBackend;

/// Marker: [`EnvironmentBuilder::memory`] was not called yet.
#[derive(Debug, Clone, Copy, Default)]
pub struct MissingMemory;

mod sealed {
    /// Keeps the `Has*` traits implemented only by this module's types, so
    /// `build` cannot be reached with a marker standing in for a value.
    pub trait Sealed {}
    impl Sealed for crate::env::Configuration {}
    impl Sealed for std::path::PathBuf {}
    impl Sealed for std::sync::Arc<dyn north_llm::Backend> {}
    impl Sealed for crate::memory::MemoryHandle {}
}

/// A builder slot holding the configuration.
#[diagnostic::on_unimplemented(
    message = "the environment has no configuration: call `.configuration(...)` before `.build()`",
    label = "this builder has no configuration yet",
    note = "the spec makes it required; `north_natural::Configuration::default()` is OpenAI `gpt-5.2` with the default limits"
)]
pub trait HasConfiguration: sealed::Sealed {
    /// The configuration.
    fn into_configuration(self) -> Configuration;
}

impl HasConfiguration for Configuration {
    fn into_configuration(self) -> Configuration {
        self
    }
}

/// A builder slot holding the workspace root.
#[diagnostic::on_unimplemented(
    message = "the environment has no workspace root: call `.workspace_root(...)` before `.build()`",
    label = "this builder has no workspace root yet",
    note = "the spec makes it required: it is the base directory tools resolve paths against"
)]
pub trait HasWorkspaceRoot: sealed::Sealed {
    /// The workspace root.
    fn into_workspace_root(self) -> PathBuf;
}

impl HasWorkspaceRoot for PathBuf {
    fn into_workspace_root(self) -> PathBuf {
        self
    }
}

/// A builder slot holding the backend.
#[diagnostic::on_unimplemented(
    message = "the environment has no model backend: call `.backend(...)` before `.build()`",
    label = "this builder has no backend yet",
    note = "any `north_llm::Backend` works: `north_natural::backend_from_env()` picks a provider, `StubBackend` runs with no model"
)]
pub trait HasBackend: sealed::Sealed {
    /// The backend.
    fn into_backend(self) -> Arc<dyn Backend>;
}

impl HasBackend for Arc<dyn Backend> {
    fn into_backend(self) -> Arc<dyn Backend> {
        self
    }
}

/// A builder slot holding the memory.
#[diagnostic::on_unimplemented(
    message = "the environment has no memory: call `.memory(...)` before `.build()`",
    label = "this builder has no memory yet",
    note = "the spec makes it required: pass `&north_natural::Memory::new(value)?`, or `north_natural::Memory::none()` for an environment without memory"
)]
pub trait HasMemory: sealed::Sealed {
    /// The memory.
    fn into_memory(self) -> MemoryHandle;
}

impl HasMemory for MemoryHandle {
    fn into_memory(self) -> MemoryHandle {
        self
    }
}

/// Builds an [`Environment`]; start with [`Environment::builder`]. Each
/// type parameter is the value of one required field or the marker saying
/// it is missing; [`build`](EnvironmentBuilder::build) compiles only once
/// all four are set. Setting a field again replaces it.
///
/// ```
/// use std::sync::Arc;
///
/// use north_natural::{Configuration, Environment, Memory, StubBackend};
///
/// let env = Environment::builder()
///     .configuration(Configuration::default())
///     .workspace_root(".")
///     .backend(Arc::new(StubBackend::new([])))
///     .memory(Memory::none())
///     .build();
/// assert_eq!(env.backend().provider(), "stub");
/// ```
///
/// Leaving one out does not compile:
///
/// ```compile_fail
/// use std::sync::Arc;
///
/// use north_natural::{Configuration, Environment, StubBackend};
///
/// let env = Environment::builder()
///     .configuration(Configuration::default())
///     .workspace_root(".")
///     .backend(Arc::new(StubBackend::new([])))
///     .build(); // error: the environment has no memory
/// ```
#[derive(Debug, Clone)]
#[must_use = "an environment builder does nothing until `.build()`"]
pub struct EnvironmentBuilder<
    C = MissingConfiguration,
    R = MissingWorkspaceRoot,
    B = MissingBackend,
    M = MissingMemory,
> {
    configuration: C,
    workspace_root: R,
    backend: B,
    memory: M,
}

impl Environment {
    /// A builder for an environment; the spec requires all four fields
    /// (configuration, workspace root, backend, memory) and
    /// [`EnvironmentBuilder::build`] does not compile until each is set.
    pub fn builder() -> EnvironmentBuilder {
        EnvironmentBuilder {
            configuration: MissingConfiguration,
            workspace_root: MissingWorkspaceRoot,
            backend: MissingBackend,
            memory: MissingMemory,
        }
    }
}

impl<C, R, B, M> EnvironmentBuilder<C, R, B, M> {
    /// Sets the configuration (model name and limits).
    pub fn configuration(
        self,
        configuration: Configuration,
    ) -> EnvironmentBuilder<Configuration, R, B, M> {
        EnvironmentBuilder {
            configuration,
            workspace_root: self.workspace_root,
            backend: self.backend,
            memory: self.memory,
        }
    }

    /// Sets the workspace root: the base directory tools resolve paths
    /// against ([`ToolContext::workspace_root`](crate::ToolContext::workspace_root)).
    pub fn workspace_root(self, root: impl Into<PathBuf>) -> EnvironmentBuilder<C, PathBuf, B, M> {
        EnvironmentBuilder {
            configuration: self.configuration,
            workspace_root: root.into(),
            backend: self.backend,
            memory: self.memory,
        }
    }

    /// Sets the model backend that executes the blocks.
    pub fn backend(
        self,
        backend: Arc<dyn Backend>,
    ) -> EnvironmentBuilder<C, R, Arc<dyn Backend>, M> {
        EnvironmentBuilder {
            configuration: self.configuration,
            workspace_root: self.workspace_root,
            backend,
            memory: self.memory,
        }
    }

    /// Sets the memory: `&memory` for a [`Memory`](crate::Memory) you keep
    /// reading afterwards, or [`Memory::none()`](crate::Memory::none).
    pub fn memory(
        self,
        memory: impl Into<MemoryHandle>,
    ) -> EnvironmentBuilder<C, R, B, MemoryHandle> {
        EnvironmentBuilder {
            configuration: self.configuration,
            workspace_root: self.workspace_root,
            backend: self.backend,
            memory: memory.into(),
        }
    }

    /// The environment. Compiles only when all four fields are set; the
    /// bounds sit on the method (not the impl) so a missing field is
    /// reported with its own message rather than "method not found".
    pub fn build(self) -> Environment
    where
        C: HasConfiguration,
        R: HasWorkspaceRoot,
        B: HasBackend,
        M: HasMemory,
    {
        Environment::from_parts(
            self.configuration.into_configuration(),
            self.workspace_root.into_workspace_root(),
            self.backend.into_backend(),
            self.memory.into_memory(),
        )
    }
}
