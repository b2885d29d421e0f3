//! Typed resources a prompt needs at run time (an HTTP client, a clock, the
//! workspace filesystem), keyed by type.
//!
//! A [`ResourceRegistry`] holds [`Binding`]s (factories) or ready
//! [`ResourceInstance`]s; registries merge with later entries winning. A
//! [`ScopedResourceContext`] builds every resource when its scope is entered,
//! calls [`Resource::start`] in construction order and [`Resource::close`] in
//! reverse order when the scope ends — normally, early, or by a panic.
//! Resources that implement [`Resource::snapshot`] take part in transactional
//! tool execution ([`execute_tool_transaction`]). A cloned prompt gets its
//! own instances through a [`Rewiring`].

mod context;
mod rewiring;
mod transaction;

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

pub use context::{ResourceResolver, ResourceScope, ResourceSnapshot, ScopedResourceContext};
pub use rewiring::Rewiring;
pub use transaction::{SessionSnapshot, ToolTransactionError, execute_tool_transaction};

/// Lifecycle hooks of a managed resource. Every method has a no-op default,
/// so `impl Resource for MyClient {}` is enough for a resource without
/// lifecycle. Resources are shared (`Arc`), so hooks take `&self`: keep
/// mutable state behind a lock.
pub trait Resource: Send + Sync + 'static {
    /// Called once when the scope is entered, after construction and after
    /// the resources it depends on were started.
    fn start(&self) -> Result<(), ResourceError> {
        Ok(())
    }

    /// Called once when the scope ends, in reverse start order.
    fn close(&self) {}

    /// Captures state to roll back to; `None` when the resource is not
    /// snapshotable.
    fn snapshot(&self) -> Option<Snapshot> {
        None
    }

    /// Rolls back to a snapshot this resource produced.
    fn restore(&self, snapshot: &Snapshot) -> Result<(), ResourceError> {
        let _ = snapshot;
        Ok(())
    }
}

/// A resource's saved state, opaque to everything but the resource.
pub struct Snapshot(Box<dyn Any + Send + Sync>);

impl Snapshot {
    /// Wraps a resource's state.
    pub fn new<T: Send + Sync + 'static>(state: T) -> Self {
        Snapshot(Box::new(state))
    }

    /// The state, if it has type `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Snapshot(..)")
    }
}

/// A resource failure. Access outside an active scope is
/// [`ResourceError::OutsideScope`], never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// Resources were accessed while no scope was active (the spec's
    /// `RuntimeError("Resources accessed outside context")`).
    #[error("resources accessed outside their scope: enter `prompt.resources()` first")]
    OutsideScope,
    /// The scope was already entered and not yet left.
    #[error("the prompt's resource scope is already active")]
    AlreadyActive,
    /// No binding for the type.
    #[error("no resource bound for `{type_name}`")]
    NotBound {
        /// The requested type.
        type_name: &'static str,
    },
    /// Factories depend on each other in a cycle.
    #[error("resource dependency cycle: {}", .chain.join(" -> "))]
    Cycle {
        /// The types in the cycle, first repeated at the end.
        chain: Vec<&'static str>,
    },
    /// A factory failed.
    #[error("could not create resource `{type_name}`: {message}")]
    Factory {
        /// The resource's type.
        type_name: &'static str,
        /// What failed.
        message: String,
    },
    /// `start` failed; the resources started before it were closed again.
    #[error("could not start resource `{type_name}`: {message}")]
    Start {
        /// The resource's type.
        type_name: &'static str,
        /// What failed.
        message: String,
    },
    /// `restore` failed.
    #[error("could not restore resource `{type_name}`: {message}")]
    Restore {
        /// The resource's type.
        type_name: &'static str,
        /// What failed.
        message: String,
    },
    /// A snapshot from another context was passed to `restore`.
    #[error("the snapshot belongs to another resource context")]
    ForeignSnapshot,
    /// A resource's own failure.
    #[error("{message}")]
    Other {
        /// What failed.
        message: String,
    },
}

impl ResourceError {
    /// A resource's own failure, for factories and lifecycle hooks.
    pub fn other(message: impl Into<String>) -> Self {
        ResourceError::Other {
            message: message.into(),
        }
    }
}

/// What a factory produced: the value (an `Arc<T>` behind `Any`) and, for
/// managed resources, its lifecycle hooks.
pub(crate) struct Instance {
    pub(crate) value: Box<dyn Any + Send + Sync>,
    pub(crate) lifecycle: Option<Arc<dyn Resource>>,
}

type Factory = dyn Fn(&ResourceResolver<'_>) -> Result<Instance, ResourceError> + Send + Sync;

/// Makes the binding a clone uses in place of this one.
type Rewire = dyn Fn(&mut Rewiring) -> Binding + Send + Sync;

/// How to make one resource: its type and a factory that may resolve other
/// resources through the [`ResourceResolver`] it is given.
#[derive(Clone)]
pub struct Binding {
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) factory: Arc<Factory>,
    /// Set for ready-made instances, which a clone must not share blindly;
    /// factories make a fresh value per scope and need none.
    rewire: Option<Arc<Rewire>>,
}

impl Binding {
    /// A resource without lifecycle hooks, resolved as `T`.
    pub fn new<T, F>(factory: F) -> Self
    where
        T: Send + Sync + 'static,
        F: Fn(&ResourceResolver<'_>) -> Result<T, ResourceError> + Send + Sync + 'static,
    {
        Binding::shared::<T, _>(move |r| factory(r).map(Arc::new))
    }

    /// A resource whose [`Resource`] hooks run with the scope.
    pub fn managed<T, F>(factory: F) -> Self
    where
        T: Resource,
        F: Fn(&ResourceResolver<'_>) -> Result<T, ResourceError> + Send + Sync + 'static,
    {
        Binding {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            factory: Arc::new(move |r| {
                let value = Arc::new(factory(r)?);
                let lifecycle: Arc<dyn Resource> = value.clone();
                Ok(Instance {
                    value: Box::new(value),
                    lifecycle: Some(lifecycle),
                })
            }),
            rewire: None,
        }
    }

    /// A resource resolved as `T`, which may be unsized: bind
    /// `dyn Filesystem` to any implementation.
    pub fn shared<T, F>(factory: F) -> Self
    where
        T: ?Sized + Send + Sync + 'static,
        F: Fn(&ResourceResolver<'_>) -> Result<Arc<T>, ResourceError> + Send + Sync + 'static,
    {
        Binding {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            factory: Arc::new(move |r| {
                Ok(Instance {
                    value: Box::new(factory(r)?),
                    lifecycle: None,
                })
            }),
            rewire: None,
        }
    }

    /// The name of the type this binding resolves.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// A ready-made resource for [`ResourceRegistry::build`]. Every scope of one
/// prompt sees the same value; what a cloned prompt sees depends on how the
/// value was handed over (see [`Rewiring`]): by value ([`new`](Self::new),
/// [`managed`](Self::managed)) it belongs to the registry and the clone gets
/// its own copy; as an `Arc` ([`shared`](Self::shared),
/// [`shared_managed`](Self::shared_managed)) it is shared on purpose.
#[derive(Clone)]
pub struct ResourceInstance(Binding);

impl ResourceInstance {
    /// A value without lifecycle hooks, resolved as `T`; a cloned prompt
    /// gets its own copy (`T::clone`).
    pub fn new<T: Clone + Send + Sync + 'static>(value: T) -> Self {
        ResourceInstance(owned_binding(Arc::new(value), |_| None))
    }

    /// A shared value resolved as `T`, which may be unsized
    /// (`Arc<dyn Filesystem>`); a cloned prompt shares it too.
    pub fn shared<T: ?Sized + Send + Sync + 'static>(value: Arc<T>) -> Self {
        ResourceInstance(shared_binding(value))
    }

    /// A value whose [`Resource`] hooks run with each scope; a cloned
    /// prompt gets its own copy (`T::clone`).
    pub fn managed<T: Resource + Clone>(value: T) -> Self {
        ResourceInstance(owned_binding(Arc::new(value), |v| {
            let hooks: Arc<dyn Resource> = v.clone();
            Some(hooks)
        }))
    }

    /// A shared value whose [`Resource`] hooks run with each scope; a cloned
    /// prompt shares it too.
    pub fn shared_managed<T: Resource>(value: Arc<T>) -> Self {
        ResourceInstance(ready_binding(
            value.clone(),
            Some(value.clone()),
            Arc::new(
                move |rewiring: &mut Rewiring| match rewiring.lookup(&value) {
                    Some(copy) => ResourceInstance::shared_managed(copy).0,
                    None => ResourceInstance::shared_managed(value.clone()).0,
                },
            ),
        ))
    }
}

/// A binding that always yields `value` (with `lifecycle` hooks, if any).
fn ready_binding<T: ?Sized + Send + Sync + 'static>(
    value: Arc<T>,
    lifecycle: Option<Arc<dyn Resource>>,
    rewire: Arc<Rewire>,
) -> Binding {
    Binding {
        type_id: TypeId::of::<T>(),
        type_name: std::any::type_name::<T>(),
        factory: Arc::new(move |_| {
            Ok(Instance {
                value: Box::new(value.clone()),
                lifecycle: lifecycle.clone(),
            })
        }),
        rewire: Some(rewire),
    }
}

/// The lifecycle hooks of an owned value, if its type is a [`Resource`]
/// (a function pointer, so a copy gets hooks of its own).
type Hooks<T> = fn(&Arc<T>) -> Option<Arc<dyn Resource>>;

/// A value the registry owns: a clone copies it.
fn owned_binding<T: Clone + Send + Sync + 'static>(value: Arc<T>, hooks: Hooks<T>) -> Binding {
    let original = value.clone();
    ready_binding(
        value.clone(),
        hooks(&value),
        Arc::new(move |rewiring: &mut Rewiring| {
            let copy = rewiring.copy(&original, |v| Arc::new(v.clone()));
            owned_binding(copy, hooks)
        }),
    )
}

/// A value shared on purpose: a clone keeps it unless the clone copied that
/// very instance elsewhere (or was given one for its type).
pub(crate) fn shared_binding<T: ?Sized + Send + Sync + 'static>(value: Arc<T>) -> Binding {
    ready_binding(
        value.clone(),
        None,
        Arc::new(
            move |rewiring: &mut Rewiring| match rewiring.lookup(&value) {
                Some(copy) => shared_binding(copy),
                None => shared_binding(value.clone()),
            },
        ),
    )
}

impl fmt::Debug for ResourceInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ResourceInstance")
            .field(&self.0.type_name)
            .finish()
    }
}

/// Resource bindings keyed by type, in registration order. At most one
/// binding per type: a later one replaces an earlier one in place.
#[derive(Clone, Default, Debug)]
pub struct ResourceRegistry {
    bindings: Vec<Binding>,
}

impl ResourceRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ResourceRegistry::default()
    }

    /// A registry of factory bindings (later bindings of a type win).
    pub fn of(bindings: impl IntoIterator<Item = Binding>) -> Self {
        let mut registry = ResourceRegistry::new();
        for binding in bindings {
            registry.insert(binding);
        }
        registry
    }

    /// A registry of ready-made instances (later instances of a type win).
    pub fn build(instances: impl IntoIterator<Item = ResourceInstance>) -> Self {
        ResourceRegistry::of(instances.into_iter().map(|i| i.0))
    }

    /// Adds a binding, replacing any binding of the same type.
    pub fn insert(&mut self, binding: Binding) {
        match self
            .bindings
            .iter_mut()
            .find(|b| b.type_id == binding.type_id)
        {
            Some(slot) => *slot = binding,
            None => self.bindings.push(binding),
        }
    }

    /// This registry with `binding` added (builder style).
    #[must_use]
    pub fn with(mut self, binding: Binding) -> Self {
        self.insert(binding);
        self
    }

    /// This registry with a ready-made instance added (builder style).
    #[must_use]
    pub fn with_instance(mut self, instance: ResourceInstance) -> Self {
        self.insert(instance.0);
        self
    }

    /// A new registry with `other`'s bindings over this one's: on a type
    /// conflict, `other` wins.
    #[must_use]
    pub fn merge(&self, other: &ResourceRegistry) -> ResourceRegistry {
        let mut merged = self.clone();
        merged.merge_in(other);
        merged
    }

    pub(crate) fn merge_in(&mut self, other: &ResourceRegistry) {
        for binding in &other.bindings {
            self.insert(binding.clone());
        }
    }

    /// The registry a clone uses: every binding rewired through `rewiring`
    /// (see [`Rewiring`] for what is copied, provided or kept).
    #[must_use]
    pub fn clone_with(&self, rewiring: &mut Rewiring) -> ResourceRegistry {
        let bindings = self
            .bindings
            .iter()
            .map(|binding| {
                if let Some(provided) = rewiring.provided_binding(binding.type_id) {
                    return provided;
                }
                match &binding.rewire {
                    Some(rewire) => rewire(rewiring),
                    None => binding.clone(),
                }
            })
            .collect();
        ResourceRegistry { bindings }
    }

    /// Whether a binding for `T` exists.
    pub fn contains<T: ?Sized + 'static>(&self) -> bool {
        self.index_of(TypeId::of::<T>()).is_some()
    }

    /// Number of bindings.
    pub fn len(&self) -> usize {
        self.bindings.len()
    }

    /// Whether there is no binding.
    pub fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }

    /// The bound type names, in registration order.
    pub fn type_names(&self) -> Vec<&'static str> {
        self.bindings.iter().map(|b| b.type_name).collect()
    }

    /// Builds every resource, starts them, and returns a guard that closes
    /// them when dropped (for use without a prompt).
    pub fn enter(&self) -> Result<ResourceScope<'static>, ResourceError> {
        let context = Arc::new(ScopedResourceContext::new(self.clone()));
        context.start()?;
        Ok(ResourceScope::detached(context))
    }

    pub(crate) fn index_of(&self, type_id: TypeId) -> Option<usize> {
        self.bindings.iter().position(|b| b.type_id == type_id)
    }

    pub(crate) fn bindings(&self) -> &[Binding] {
        &self.bindings
    }
}
