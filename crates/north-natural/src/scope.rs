//! Where tools are registered and which a block sees: the global registry,
//! an environment's, and the call frames of the natural calls active on the
//! task, with the spec's visibility and name-conflict rules.

use std::sync::{Arc, Mutex, OnceLock};

use crate::env::{Environment, Frame, current_scope};
use crate::error::Error;
use crate::sync::lock;
use crate::tools::{BUILTIN_NAMES, Registry, Tool, builtin_tools, check_registration};

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

/// Names visible from a place, with the scope each comes from.
pub(crate) fn visible_names(
    env: Option<&Environment>,
    frames: &[Arc<Frame>],
) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = BUILTIN_NAMES
        .iter()
        .map(|n| ((*n).to_owned(), "built-in"))
        .collect();
    out.extend(lock(global()).names().map(|n| (n.to_owned(), "global")));
    if let Some(env) = env {
        out.extend(env.tools().names().map(|n| (n.to_owned(), "environment")));
    }
    for frame in frames {
        out.extend(lock(&frame.tools).names().map(|n| (n.to_owned(), "call")));
    }
    out
}

impl Environment {
    /// Registers `tool` in this environment's scope: visible to every block
    /// run under this environment (and its overrides).
    pub fn register_tool(&self, tool: Tool) -> Result<(), Error> {
        let visible = visible_names(Some(self), &[]);
        check_registration(&tool, &visible)?;
        self.tools().insert(tool);
        Ok(())
    }
}

/// Registers `tool` where the caller stands: in the current natural call
/// when inside one, else in the current environment when one is active,
/// else globally. A name already visible fails unless the tool was built
/// with `overwrite(true)`.
pub fn register_tool(tool: Tool) -> Result<ToolScope, Error> {
    let Some(scope) = current_scope() else {
        register_global_tool(tool)?;
        return Ok(ToolScope::Global);
    };
    let frames = lock(&scope.frames).clone();
    if let Some(top) = frames.last() {
        let visible = visible_names(scope.env.as_ref(), &frames);
        check_registration(&tool, &visible)?;
        lock(&top.tools).insert(tool);
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
/// blocks started afterwards see it.
pub fn register_global_tool(tool: Tool) -> Result<(), Error> {
    let visible = visible_names(None, &[]);
    check_registration(&tool, &visible)?;
    lock(global()).insert(tool);
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
