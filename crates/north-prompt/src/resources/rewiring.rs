//! Rewiring: how a cloned prompt gets its own resource instances. One
//! [`Rewiring`] is threaded through the whole clone (template resources,
//! every section, bind-time resources), so an instance that several places
//! share in the original is copied once and shared the same way in the
//! clone, and the instances a caller provides replace every instance of
//! their type.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use super::{Binding, shared_binding};

/// An instance the caller supplied for its type.
struct Provided {
    type_id: TypeId,
    type_name: &'static str,
    /// An `Arc<T>`.
    value: Box<dyn Any + Send + Sync>,
    binding: Binding,
}

/// A copy made during this rewiring.
struct Copied {
    type_id: TypeId,
    /// Address of the original's value (with `type_id`, its identity).
    address: usize,
    /// The original `Arc<T>`, kept alive so its address cannot be reused by
    /// another value while this rewiring exists.
    _original: Box<dyn Any + Send + Sync>,
    /// The copy, an `Arc<T>`.
    copy: Box<dyn Any + Send + Sync>,
}

/// The instances a clone is wired to (the spec's
/// `section.clone(session=..., bus=...)`).
///
/// Pass one to [`crate::Prompt::clone_with`],
/// [`crate::PromptTemplate::clone_with`], [`crate::SectionNode::clone_with`]
/// or [`crate::Section::clone_with`]; `Clone::clone` on those types uses an
/// empty one. Within one rewiring:
/// - an instance [provided](Rewiring::provide) for a type replaces every
///   resource of that type, and sections holding one (a
///   [`crate::WorkspaceSection`]'s filesystem) hold it instead;
/// - every other instance a section holds, and every value handed to
///   [`crate::ResourceInstance::new`] / [`crate::ResourceInstance::managed`],
///   is copied once — the same original always maps to the same copy;
/// - values handed over as an `Arc` ([`crate::ResourceInstance::shared`]) are
///   shared on purpose and stay shared, unless that very instance was copied
///   elsewhere in the clone, in which case the copy is used;
/// - factory [`Binding`]s are kept: they make a fresh value in every scope.
#[derive(Default)]
pub struct Rewiring {
    provided: Vec<Provided>,
    copied: Vec<Copied>,
}

impl fmt::Debug for Rewiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rewiring")
            .field(
                "provided",
                &self
                    .provided
                    .iter()
                    .map(|p| p.type_name)
                    .collect::<Vec<_>>(),
            )
            .field("copied", &self.copied.len())
            .finish()
    }
}

fn address<T: ?Sized>(value: &Arc<T>) -> usize {
    Arc::as_ptr(value).cast::<()>().addr()
}

impl Rewiring {
    /// A rewiring that provides nothing: every instance is copied.
    pub fn new() -> Self {
        Rewiring::default()
    }

    /// Wires the clone to `value` for type `T` (which may be unsized:
    /// `provide::<dyn Filesystem>(fs)`); a later call for the same type wins.
    #[must_use]
    pub fn provide<T: ?Sized + Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        let type_id = TypeId::of::<T>();
        self.provided.retain(|p| p.type_id != type_id);
        self.provided.push(Provided {
            type_id,
            type_name: std::any::type_name::<T>(),
            binding: shared_binding(value.clone()),
            value: Box::new(value),
        });
        self
    }

    /// The clone's instance for `original`: the instance provided for `T`,
    /// else the copy already made of `original`, else a new copy made by
    /// `copy` (and remembered). Sections that hold resources call this from
    /// [`crate::Section::clone_with`].
    pub fn copy<T: ?Sized + Send + Sync + 'static>(
        &mut self,
        original: &Arc<T>,
        copy: impl FnOnce(&T) -> Arc<T>,
    ) -> Arc<T> {
        if let Some(existing) = self.lookup(original) {
            return existing;
        }
        let made = copy(original);
        self.copied.push(Copied {
            type_id: TypeId::of::<T>(),
            address: address(original),
            _original: Box::new(original.clone()),
            copy: Box::new(made.clone()),
        });
        made
    }

    /// The clone's instance for `original` if this rewiring has one (one
    /// provided for `T`, or a copy made earlier); `None` means the clone
    /// keeps `original`.
    pub fn lookup<T: ?Sized + Send + Sync + 'static>(&self, original: &Arc<T>) -> Option<Arc<T>> {
        let type_id = TypeId::of::<T>();
        if let Some(provided) = self.provided.iter().find(|p| p.type_id == type_id) {
            return provided.value.downcast_ref::<Arc<T>>().cloned();
        }
        let address = address(original);
        self.copied
            .iter()
            .find(|c| c.type_id == type_id && c.address == address)
            .and_then(|c| c.copy.downcast_ref::<Arc<T>>().cloned())
    }

    /// Whether the caller provided any instance.
    pub(crate) fn provides_any(&self) -> bool {
        !self.provided.is_empty()
    }

    /// The binding replacing every binding of `type_id`, if one was provided.
    pub(crate) fn provided_binding(&self, type_id: TypeId) -> Option<Binding> {
        self.provided
            .iter()
            .find(|p| p.type_id == type_id)
            .map(|p| p.binding.clone())
    }
}
