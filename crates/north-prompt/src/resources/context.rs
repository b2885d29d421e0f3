//! The active set of resources of one scope: construction with dependency
//! resolution, start/close ordering, access, snapshot and restore.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Instance, Resource, ResourceError, ResourceRegistry, Snapshot};

/// A started resource's binding index and hooks.
type Lifecycle = (usize, Arc<dyn Resource>);

static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Active,
    Closed,
}

struct State {
    phase: Phase,
    /// Instances by binding index.
    instances: Vec<Option<Instance>>,
    /// Binding indices in start order.
    started: Vec<usize>,
}

/// The resources of one entered scope. Obtained from a [`ResourceScope`]
/// (or `prompt.resources().context()`); every access after the scope closed
/// is an error value.
pub struct ScopedResourceContext {
    id: u64,
    registry: ResourceRegistry,
    state: Mutex<State>,
}

impl std::fmt::Debug for ScopedResourceContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedResourceContext")
            .field("resources", &self.registry.type_names())
            .field("phase", &self.lock().phase)
            .finish()
    }
}

impl ScopedResourceContext {
    pub(crate) fn new(registry: ResourceRegistry) -> Self {
        ScopedResourceContext {
            id: NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed),
            registry,
            state: Mutex::new(State {
                phase: Phase::Idle,
                instances: Vec::new(),
                started: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave `State` half-written
        // in a way that matters here, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Builds every binding in registration order (dependencies first, as
    /// factories resolve them) and starts each right after it is built. On
    /// failure — or a panic in a factory or hook — everything already
    /// started is closed again in reverse order.
    pub(crate) fn start(&self) -> Result<(), ResourceError> {
        if self.lock().phase != Phase::Idle {
            return Err(ResourceError::AlreadyActive);
        }
        let build = Build {
            registry: &self.registry,
            slots: RefCell::new(
                std::iter::repeat_with(|| None)
                    .take(self.registry.len())
                    .collect(),
            ),
            in_progress: RefCell::new(Vec::new()),
            started: RefCell::new(Vec::new()),
        };
        let mut guard = StartGuard {
            build: &build,
            armed: true,
        };
        for index in 0..self.registry.len() {
            if let Err(err) = build.ensure(index) {
                // The guard closes what was started.
                drop(guard);
                self.lock().phase = Phase::Closed;
                return Err(err);
            }
        }
        guard.armed = false;
        drop(guard);
        let mut state = self.lock();
        state.instances = build.slots.into_inner();
        state.started = build.started.into_inner();
        state.phase = Phase::Active;
        Ok(())
    }

    /// Closes every started resource in reverse start order. Idempotent.
    pub fn close(&self) {
        let (instances, started) = {
            let mut state = self.lock();
            if state.phase == Phase::Closed {
                return;
            }
            state.phase = Phase::Closed;
            (
                std::mem::take(&mut state.instances),
                std::mem::take(&mut state.started),
            )
        };
        close_in_reverse(&instances, &started);
    }

    /// Whether the scope is active (started and not closed).
    pub fn is_active(&self) -> bool {
        self.lock().phase == Phase::Active
    }

    /// The resource bound for `T`.
    pub fn get<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, ResourceError> {
        self.get_optional::<T>()?.ok_or(ResourceError::NotBound {
            type_name: std::any::type_name::<T>(),
        })
    }

    /// The resource bound for `T`, or `None` when nothing binds it.
    pub fn get_optional<T: ?Sized + Send + Sync + 'static>(
        &self,
    ) -> Result<Option<Arc<T>>, ResourceError> {
        let state = self.lock();
        if state.phase != Phase::Active {
            return Err(ResourceError::OutsideScope);
        }
        let Some(index) = self.registry.index_of(TypeId::of::<T>()) else {
            return Ok(None);
        };
        Ok(state
            .instances
            .get(index)
            .and_then(Option::as_ref)
            .and_then(|i| downcast_arc::<T>(i.value.as_ref())))
    }

    /// Saves the state of every snapshotable resource.
    pub fn snapshot(&self) -> Result<ResourceSnapshot, ResourceError> {
        let lifecycles = self.active_lifecycles()?;
        let entries = lifecycles
            .into_iter()
            .filter_map(|(index, l)| l.snapshot().map(|s| (index, s)))
            .collect();
        Ok(ResourceSnapshot {
            context: self.id,
            entries,
        })
    }

    /// Rolls every snapshotable resource back to `snapshot`. All resources
    /// are restored even if one fails; the first failure is returned.
    pub fn restore(&self, snapshot: &ResourceSnapshot) -> Result<(), ResourceError> {
        if snapshot.context != self.id {
            return Err(ResourceError::ForeignSnapshot);
        }
        let lifecycles = self.active_lifecycles()?;
        let mut first_error = None;
        for (index, saved) in &snapshot.entries {
            if let Some((_, lifecycle)) = lifecycles.iter().find(|(i, _)| i == index)
                && let Err(err) = lifecycle.restore(saved)
            {
                let type_name = self
                    .registry
                    .bindings()
                    .get(*index)
                    .map_or("?", |b| b.type_name);
                first_error.get_or_insert(match err {
                    ResourceError::Restore { .. } => err,
                    other => ResourceError::Restore {
                        type_name,
                        message: other.to_string(),
                    },
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn active_lifecycles(&self) -> Result<Vec<Lifecycle>, ResourceError> {
        let state = self.lock();
        if state.phase != Phase::Active {
            return Err(ResourceError::OutsideScope);
        }
        Ok(state
            .started
            .iter()
            .filter_map(|&index| {
                let lifecycle = state.instances.get(index)?.as_ref()?.lifecycle.clone()?;
                Some((index, lifecycle))
            })
            .collect())
    }
}

fn downcast_arc<T: ?Sized + Send + Sync + 'static>(
    value: &(dyn Any + Send + Sync),
) -> Option<Arc<T>> {
    value.downcast_ref::<Arc<T>>().cloned()
}

fn close_in_reverse(instances: &[Option<Instance>], started: &[usize]) {
    for &index in started.iter().rev() {
        if let Some(Some(Instance {
            lifecycle: Some(lifecycle),
            ..
        })) = instances.get(index)
        {
            lifecycle.close();
        }
    }
}

/// The saved state of a context's snapshotable resources.
#[derive(Debug)]
pub struct ResourceSnapshot {
    context: u64,
    entries: Vec<(usize, Snapshot)>,
}

impl ResourceSnapshot {
    /// Number of resources captured.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no resource was snapshotable.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Construction state while a scope starts.
struct Build<'r> {
    registry: &'r ResourceRegistry,
    slots: RefCell<Vec<Option<Instance>>>,
    in_progress: RefCell<Vec<usize>>,
    started: RefCell<Vec<usize>>,
}

impl Build<'_> {
    fn ensure(&self, index: usize) -> Result<(), ResourceError> {
        if self.slots.borrow().get(index).is_some_and(Option::is_some) {
            return Ok(());
        }
        let Some(binding) = self.registry.bindings().get(index) else {
            return Ok(());
        };
        if let Some(pos) = self.in_progress.borrow().iter().position(|&i| i == index) {
            let bindings = self.registry.bindings();
            let mut chain: Vec<&'static str> = self.in_progress.borrow()[pos..]
                .iter()
                .filter_map(|&i| bindings.get(i).map(|b| b.type_name))
                .collect();
            chain.push(binding.type_name);
            return Err(ResourceError::Cycle { chain });
        }
        self.in_progress.borrow_mut().push(index);
        let made = (binding.factory)(&ResourceResolver { build: self });
        self.in_progress.borrow_mut().pop();
        let instance = made.map_err(|err| match err {
            ResourceError::Cycle { .. }
            | ResourceError::Factory { .. }
            | ResourceError::Start { .. }
            | ResourceError::NotBound { .. } => err,
            other => ResourceError::Factory {
                type_name: binding.type_name,
                message: other.to_string(),
            },
        })?;
        if let Some(lifecycle) = &instance.lifecycle {
            lifecycle.start().map_err(|err| ResourceError::Start {
                type_name: binding.type_name,
                message: err.to_string(),
            })?;
        }
        self.started.borrow_mut().push(index);
        if let Some(slot) = self.slots.borrow_mut().get_mut(index) {
            *slot = Some(instance);
        }
        Ok(())
    }
}

/// Closes what a failed (or panicking) start had started.
struct StartGuard<'a, 'r> {
    build: &'a Build<'r>,
    armed: bool,
}

impl Drop for StartGuard<'_, '_> {
    fn drop(&mut self) {
        if self.armed {
            let started = std::mem::take(&mut *self.build.started.borrow_mut());
            let slots = std::mem::take(&mut *self.build.slots.borrow_mut());
            close_in_reverse(&slots, &started);
        }
    }
}

/// What a factory sees: the other resources of the scope being built.
pub struct ResourceResolver<'a> {
    build: &'a Build<'a>,
}

impl ResourceResolver<'_> {
    /// The resource bound for `T`, built first if needed.
    pub fn get<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, ResourceError> {
        self.get_optional::<T>()?.ok_or(ResourceError::NotBound {
            type_name: std::any::type_name::<T>(),
        })
    }

    /// The resource bound for `T`, or `None` when nothing binds it.
    pub fn get_optional<T: ?Sized + Send + Sync + 'static>(
        &self,
    ) -> Result<Option<Arc<T>>, ResourceError> {
        let Some(index) = self.build.registry.index_of(TypeId::of::<T>()) else {
            return Ok(None);
        };
        self.build.ensure(index)?;
        Ok(self
            .build
            .slots
            .borrow()
            .get(index)
            .and_then(Option::as_ref)
            .and_then(|i| downcast_arc::<T>(i.value.as_ref())))
    }
}

/// The guard of an entered resource scope: dereferences to the
/// [`ScopedResourceContext`] and closes it when dropped — at the end of the
/// block, on early return, or while a panic unwinds.
#[must_use = "resources close as soon as the scope guard is dropped"]
pub struct ResourceScope<'p> {
    context: Arc<ScopedResourceContext>,
    slot: Option<&'p Mutex<Option<Arc<ScopedResourceContext>>>>,
}

impl<'p> ResourceScope<'p> {
    pub(crate) fn detached(context: Arc<ScopedResourceContext>) -> ResourceScope<'static> {
        ResourceScope {
            context,
            slot: None,
        }
    }

    pub(crate) fn attached(
        context: Arc<ScopedResourceContext>,
        slot: &'p Mutex<Option<Arc<ScopedResourceContext>>>,
    ) -> Self {
        ResourceScope {
            context,
            slot: Some(slot),
        }
    }

    /// A shared handle to the context (for framework code that outlives a
    /// borrow; it reports [`ResourceError::OutsideScope`] once closed).
    pub fn context(&self) -> Arc<ScopedResourceContext> {
        self.context.clone()
    }
}

impl Deref for ResourceScope<'_> {
    type Target = ScopedResourceContext;

    fn deref(&self) -> &ScopedResourceContext {
        &self.context
    }
}

impl Drop for ResourceScope<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            let mut active = slot.lock().unwrap_or_else(|e| e.into_inner());
            if active
                .as_ref()
                .is_some_and(|c| Arc::ptr_eq(c, &self.context))
            {
                *active = None;
            }
        }
        self.context.close();
    }
}

impl std::fmt::Debug for ResourceScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ResourceScope").field(&self.context).finish()
    }
}
