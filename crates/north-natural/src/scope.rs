//! Where tools are registered and which a block sees: the global registry,
//! an environment's, and the call frames of the natural calls active on the
//! task, with the spec's visibility and name-conflict rules.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::env::{Environment, Frame, current_scope};
use crate::error::{Error, ToolOrigin};
use crate::sync::lock;
use crate::tools::{Registry, Tool, builtin_tools, check_registration};

fn global() -> &'static Mutex<Registry> {
    static GLOBAL: OnceLock<Mutex<Registry>> = OnceLock::new();
    GLOBAL.get_or_init(Default::default)
}

/// The scope a tool was registered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolScope {
    /// Visible everywhere, from the next block on.
    Global,
    /// Visible to blocks under the current environment.
    Environment,
    /// Visible to the rest of the current natural call and calls nested in it.
    Call,
}

/// The registries visible from one place, locked together: global, the
/// environment (if any), then the active natural calls outer to inner.
/// Locks are always taken in that order (nowhere else nests them), and the
/// check and the insert happen under the same locks, so two concurrent
/// registrations of one name cannot both pass the check.
struct Visible<'a> {
    global: MutexGuard<'a, Registry>,
    env: Option<MutexGuard<'a, Registry>>,
    frames: Vec<(&'a Frame, MutexGuard<'a, Registry>)>,
}

impl<'a> Visible<'a> {
    fn lock(env: Option<&'a Environment>, frames: &'a [Arc<Frame>]) -> Self {
        let global = lock(global());
        let env = env.map(Environment::tools);
        let frames = frames.iter().map(|f| (&**f, lock(&f.tools))).collect();
        Visible {
            global,
            env,
            frames,
        }
    }

    /// Fails when `tool` may not be added next to what is visible here.
    fn check(&self, tool: &Tool) -> Result<(), Error> {
        let scopes = std::iter::once((ToolOrigin::Global, &*self.global))
            .chain(self.env.as_deref().map(|r| (ToolOrigin::Environment, r)))
            .chain(self.frames.iter().map(|(frame, r)| {
                (
                    ToolOrigin::Call {
                        function: frame.function.to_owned(),
                    },
                    &**r,
                )
            }));
        check_registration(tool, scopes)?;
        Ok(())
    }
}

/// The natural calls active on the current task, outer to inner.
fn current_frames() -> Vec<Arc<Frame>> {
    current_scope()
        .map(|s| lock(&s.frames).clone())
        .unwrap_or_default()
}

impl Environment {
    /// Registers `tool` in this environment's scope: visible to every block
    /// run under this environment (and its overrides). Fails on a name
    /// visible from here: a built-in, a global tool, this environment's, or
    /// one registered by a natural call active on the current task (those
    /// stay visible to nested calls run under this environment).
    pub fn register_tool(&self, tool: Tool) -> Result<(), Error> {
        let frames = current_frames();
        let mut visible = Visible::lock(Some(self), &frames);
        visible.check(&tool)?;
        if let Some(registry) = visible.env.as_mut() {
            registry.insert(tool);
        }
        Ok(())
    }
}

/// Registers `tool` where the caller stands: in the current natural call
/// when inside one, else in the current environment when one is active,
/// else globally. A name already visible from there fails with
/// [`ToolRegistrationError::Conflict`](crate::ToolRegistrationError::Conflict)
/// unless the tool was built with `overwrite(true)`.
pub fn register_tool(tool: Tool) -> Result<ToolScope, Error> {
    let Some(scope) = current_scope() else {
        register_global_tool(tool)?;
        return Ok(ToolScope::Global);
    };
    let frames = lock(&scope.frames).clone();
    if !frames.is_empty() {
        let mut visible = Visible::lock(scope.env.as_ref(), &frames);
        visible.check(&tool)?;
        if let Some((_, registry)) = visible.frames.last_mut() {
            registry.insert(tool);
        }
        return Ok(ToolScope::Call);
    }
    match &scope.env {
        Some(env) => {
            env.register_tool(tool)?;
            Ok(ToolScope::Environment)
        }
        None => {
            register_global_tool(tool)?;
            Ok(ToolScope::Global)
        }
    }
}

/// Registers `tool` in the global scope. The global registry is live:
/// blocks started afterwards see it. Fails on a name visible from here: a
/// built-in, a global tool, the current environment's, or one registered
/// by a natural call active on the current task.
pub fn register_global_tool(tool: Tool) -> Result<(), Error> {
    let scope = current_scope();
    let env = scope.as_ref().and_then(|s| s.env.as_ref());
    let frames = current_frames();
    let mut visible = Visible::lock(env, &frames);
    visible.check(&tool)?;
    visible.global.insert(tool);
    Ok(())
}

/// Removes a global tool; returns whether one was there.
pub fn remove_global_tool(name: &str) -> bool {
    lock(global()).remove(name)
}

/// The tools a block sees, by name: built-ins, then global, environment and
/// call scopes (outer to inner); a later scope's tool replaces an earlier one.
pub(crate) fn visible_tools(env: &Environment, frames: &[Arc<Frame>]) -> Vec<Tool> {
    let mut reg = Registry::default();
    for t in builtin_tools() {
        reg.insert(t.clone());
    }
    for t in &lock(global()).tools {
        reg.insert(t.clone());
    }
    for t in &env.tools().tools {
        reg.insert(t.clone());
    }
    for frame in frames {
        for t in &lock(&frame.tools).tools {
            reg.insert(t.clone());
        }
    }
    reg.tools
}
