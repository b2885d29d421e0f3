//! `Prompt`: a template with bound params, bind-time resources and checked
//! body overrides, which renders and owns its resource scope.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{PromptRenderError, PromptValidationError};
use crate::params::{ParamStore, ParamValue, Params};
use crate::path::PromptOverrides;
use crate::render::{RenderOptions, RenderedPrompt, render_template};
use crate::resources::{
    ResourceError, ResourceRegistry, ResourceScope, Rewiring, ScopedResourceContext,
};
use crate::section::SectionNode;
use crate::template::PromptTemplate;

type ActiveSlot = Mutex<Option<Arc<ScopedResourceContext>>>;

/// A [`PromptTemplate`] with params bound: renders markdown and manages the
/// lifecycle of the resources the template, its sections and the bind call
/// declare.
///
/// A clone is a separate prompt: the same params and overrides, its own
/// resource instances wired into its own sections (see
/// [`Prompt::clone_with`]), and no active scope.
pub struct Prompt<O = ()> {
    template: PromptTemplate<O>,
    params: ParamStore,
    bound_resources: Option<ResourceRegistry>,
    /// Only this prompt's overrides, each checked when attached.
    overrides: PromptOverrides,
    active: ActiveSlot,
}

impl<O> Clone for Prompt<O> {
    fn clone(&self) -> Self {
        self.clone_with(&mut Rewiring::new())
    }
}

impl<O> fmt::Debug for Prompt<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("template", &self.template.descriptor())
            .field("resources_active", &self.lock_active().is_some())
            .finish_non_exhaustive()
    }
}

impl<O> Prompt<O> {
    /// A prompt with nothing bound.
    pub fn new(template: PromptTemplate<O>) -> Self {
        Prompt {
            template,
            params: ParamStore::default(),
            bound_resources: None,
            overrides: PromptOverrides::new(),
            active: Mutex::new(None),
        }
    }

    /// A copy of this prompt wired through `rewiring` (the spec's
    /// `clone(**kwargs)`): the template's and sections' resources, then the
    /// bind-time ones, are rewired in the order the scope collects them, so
    /// the clone's sections and the clone's scope see the same instances —
    /// the clone's, never the original's. Params (immutable once bound) and
    /// overrides are kept; the clone's resource scope starts inactive.
    pub fn clone_with(&self, rewiring: &mut Rewiring) -> Self {
        Prompt {
            template: self.template.clone_with(rewiring),
            params: self.params.clone(),
            bound_resources: self
                .bound_resources
                .as_ref()
                .map(|r| r.clone_with(rewiring)),
            overrides: self.overrides.clone(),
            active: Mutex::new(None),
        }
    }

    /// Attaches body overrides: the entries `overrides` holds for this
    /// prompt's `(ns, key)` are checked with
    /// [`PromptTemplate::check_overrides`] — the rule section templates met
    /// when the template was built — and, if all pass, apply to every later
    /// render. Attaching again adds to them (the later template wins for a
    /// path). Entries for other prompts are ignored.
    pub fn with_overrides(
        mut self,
        overrides: &PromptOverrides,
    ) -> Result<Self, PromptValidationError> {
        self.template.check_overrides(overrides)?;
        let (ns, key) = (self.template.ns(), self.template.key());
        if let Some(mine) = overrides.for_prompt(ns, key) {
            for (path, template) in mine {
                self.overrides.set(ns, key, path.clone(), template.clone());
            }
        }
        Ok(self)
    }

    /// The body overrides attached with [`Prompt::with_overrides`].
    pub fn overrides(&self) -> &PromptOverrides {
        &self.overrides
    }

    /// Binds a params value; binding the same type again replaces it.
    #[must_use]
    pub fn bind<P: Params>(mut self, params: P) -> Self {
        self.params.insert(ParamValue::new(params));
        self
    }

    /// Binds several params values at once. The same type twice in one call
    /// is refused when rendering
    /// ([`crate::PromptValidationError::DuplicateParams`]).
    #[must_use]
    pub fn bind_all(mut self, params: impl IntoIterator<Item = ParamValue>) -> Self {
        self.params.insert_all(params);
        self
    }

    /// Sets the bind-time resources (they win over template and section
    /// resources of the same type).
    #[must_use]
    pub fn bind_resources(mut self, resources: ResourceRegistry) -> Self {
        self.bound_resources = Some(resources);
        self
    }

    /// The bound value of params type `P`, if any.
    pub fn params<P: 'static>(&self) -> Option<&P> {
        self.params.get_typed::<P>()
    }

    /// The template.
    pub fn template(&self) -> &PromptTemplate<O> {
        &self.template
    }

    /// Renders with the bound params, the attached overrides and each
    /// section's own visibility.
    pub fn render(&self) -> Result<RenderedPrompt<O>, PromptRenderError> {
        self.render_with(&RenderOptions::default())
    }

    /// Renders with visibility overrides and/or body overrides. Body
    /// overrides in `options` apply over the attached ones (per section
    /// path); all are checked first, and a bad one fails the render with
    /// [`PromptRenderError::Override`].
    pub fn render_with(
        &self,
        options: &RenderOptions<'_>,
    ) -> Result<RenderedPrompt<O>, PromptRenderError> {
        render_template(&self.template, &self.params, &self.overrides, options)
    }

    /// The prompt's resources: enter them, or resolve them while entered.
    pub fn resources(&self) -> PromptResources<'_, O> {
        PromptResources { prompt: self }
    }

    /// Every resource the scope will hold, merged in order: template,
    /// sections depth-first, bind-time; later wins.
    pub fn collected_resources(&self) -> ResourceRegistry {
        fn walk(nodes: &[SectionNode], into: &mut ResourceRegistry) {
            for node in nodes {
                into.merge_in(&node.erased().resources());
                walk(node.children(), into);
            }
        }
        let mut registry = self.template.resources().clone();
        walk(self.template.sections(), &mut registry);
        if let Some(bound) = &self.bound_resources {
            registry.merge_in(bound);
        }
        registry
    }

    fn lock_active(&self) -> MutexGuard<'_, Option<Arc<ScopedResourceContext>>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<O> Drop for Prompt<O> {
    fn drop(&mut self) {
        // Only reachable with an active scope if its guard was leaked.
        if let Some(context) = self.lock_active().take() {
            context.close();
        }
    }
}

/// Access to a prompt's resources: [`PromptResources::enter`] starts them
/// and returns the guard that closes them; `get` resolves them while the
/// scope is active and is an error otherwise.
pub struct PromptResources<'p, O> {
    prompt: &'p Prompt<O>,
}

impl<O> fmt::Debug for PromptResources<'_, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptResources")
            .field("active", &self.is_active())
            .finish()
    }
}

impl<'p, O> PromptResources<'p, O> {
    /// Collects, builds and starts the resources; they close when the
    /// returned guard drops (also on early return or panic).
    pub fn enter(&self) -> Result<ResourceScope<'p>, ResourceError> {
        if self.prompt.lock_active().is_some() {
            return Err(ResourceError::AlreadyActive);
        }
        // Start without holding the lock: factories may look at the prompt.
        let context = Arc::new(ScopedResourceContext::new(
            self.prompt.collected_resources(),
        ));
        context.start()?;
        let mut active = self.prompt.lock_active();
        if active.is_some() {
            drop(active);
            context.close();
            return Err(ResourceError::AlreadyActive);
        }
        *active = Some(context.clone());
        Ok(ResourceScope::attached(context, &self.prompt.active))
    }

    /// Whether the scope is active.
    pub fn is_active(&self) -> bool {
        self.prompt.lock_active().is_some()
    }

    /// The active context (for snapshot/restore around tool calls).
    pub fn context(&self) -> Result<Arc<ScopedResourceContext>, ResourceError> {
        self.prompt
            .lock_active()
            .clone()
            .ok_or(ResourceError::OutsideScope)
    }

    /// The resource bound for `T`.
    pub fn get<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, ResourceError> {
        self.context()?.get::<T>()
    }

    /// The resource bound for `T`, or `None` when nothing binds it.
    pub fn get_optional<T: ?Sized + Send + Sync + 'static>(
        &self,
    ) -> Result<Option<Arc<T>>, ResourceError> {
        self.context()?.get_optional::<T>()
    }
}
