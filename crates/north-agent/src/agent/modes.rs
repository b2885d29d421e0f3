//! Permission modes on a running agent: which tools the model is offered
//! and which shell commands run in (see [`PermissionMode`]).

use std::sync::Arc;

use north_protocol::{PermissionMode, TraceKind};
use north_tools::Registry;
use north_tools::services::Shell;
use serde_json::json;

use super::Agent;

/// What the modes need besides the agent's own tools and shell: the
/// read-only tools of `plan`, and a shell inside the OS sandbox for `auto`.
#[derive(Clone)]
pub struct ModeKit {
    /// The tools `plan` offers (reading and searching only).
    pub plan_tools: Registry,
    /// A shell whose commands run inside the OS sandbox (None: the sandbox
    /// is unavailable here, so `auto` is too).
    pub sandboxed_shell: Option<Arc<dyn Shell>>,
    /// A shell outside the sandbox, for the one-time escalation the user
    /// may allow when the sandbox stopped a command (None: no escalation;
    /// the denial is reported).
    pub outside_shell: Option<Arc<dyn Shell>>,
    /// A shell in a sandbox where the project is read-only and there is no
    /// network: a line the policy verified as only reading (`ls`, `git
    /// status`) runs there without asking (None: such lines ask as others).
    pub read_only_shell: Option<Arc<dyn Shell>>,
}

/// Why a mode could not be entered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// The front end gave the agent no [`ModeKit`].
    #[error("the {0} mode is not available in this front end")]
    NoKit(PermissionMode),
    /// `auto` needs the OS sandbox.
    #[error(
        "the auto mode needs the OS sandbox, which is not available here: this kernel or platform cannot confine commands"
    )]
    NoSandbox,
}

/// The agent's mode and what it switches between.
pub(super) struct Modes {
    pub mode: PermissionMode,
    pub kit: Option<ModeKit>,
    /// The tools and shell the agent was built with (modes `ask`,
    /// `accept-edits`); the shell is confined unless the user turned the
    /// sandbox off.
    pub full_tools: Registry,
    pub plain_shell: Arc<dyn Shell>,
}

impl Agent {
    /// Gives the agent what `plan` and `auto` need, and the shell a
    /// sandboxed command may escalate to.
    pub fn set_mode_kit(&mut self, kit: ModeKit) {
        self.modes.kit = Some(kit);
    }

    /// The session's background commands, one line each (`/ps`).
    pub fn background_jobs(&self) -> Vec<north_tools::shell::background::JobSummary> {
        let mut jobs = self.modes.plain_shell.jobs().list();
        if !north_tools::services::same(&self.services.ctx.shell, &self.modes.plain_shell) {
            jobs.extend(self.services.ctx.shell.jobs().list());
        }
        jobs
    }

    /// How many of the session's background commands run now.
    pub fn background_running(&self) -> usize {
        let mut n = self.modes.plain_shell.jobs().running();
        if !north_tools::services::same(&self.services.ctx.shell, &self.modes.plain_shell) {
            n += self.services.ctx.shell.jobs().running();
        }
        n
    }

    /// Kills background command `id`; whether there was one.
    pub fn kill_background(&self, id: &str) -> bool {
        self.modes.plain_shell.jobs().kill(id).is_some()
            || self.services.ctx.shell.jobs().kill(id).is_some()
    }

    /// Writes accepted edits through `writer` (an editor's buffers) instead
    /// of North's own atomic apply.
    pub fn set_file_writer(&mut self, writer: Arc<dyn north_tools::FileWriter>) {
        self.services.ctx.file_writer = Some(writer);
    }

    /// The current permission mode.
    pub fn mode(&self) -> PermissionMode {
        self.modes.mode
    }

    /// Whether `mode` can be entered here.
    pub fn mode_available(&self, mode: PermissionMode) -> Result<(), ModeError> {
        match (mode, &self.modes.kit) {
            (PermissionMode::Ask | PermissionMode::AcceptEdits, _) => Ok(()),
            (_, None) => Err(ModeError::NoKit(mode)),
            (PermissionMode::Auto, Some(kit)) if kit.sandboxed_shell.is_none() => {
                Err(ModeError::NoSandbox)
            }
            _ => Ok(()),
        }
    }

    /// Switches to `mode` (between turns): `plan` offers only reading
    /// tools, `auto` runs commands in the sandboxed shell, the others the
    /// agent's own tools and shell. Edits are applied unasked in
    /// `accept-edits` and `auto`.
    pub fn set_mode(&mut self, mode: PermissionMode) -> Result<(), ModeError> {
        self.mode_available(mode)?;
        let kit = self.modes.kit.clone();
        self.services.tools = match (mode, &kit) {
            (PermissionMode::Plan, Some(kit)) => kit.plan_tools.clone(),
            _ => self.modes.full_tools.clone(),
        };
        // The built-in shell is already confined unless the user turned
        // the sandbox off; only then does `auto` switch to the kit's.
        self.services.ctx.shell = match (mode, kit.and_then(|k| k.sandboxed_shell)) {
            (PermissionMode::Auto, Some(shell))
                if !self.modes.plain_shell.spawner().is_confined() =>
            {
                shell
            }
            _ => self.modes.plain_shell.clone(),
        };
        if self.modes.mode != mode {
            self.services.tracer.record(
                TraceKind::Other("mode".into()),
                json!({"from": self.modes.mode, "to": mode}),
            );
        }
        self.modes.mode = mode;
        Ok(())
    }

    /// The shell outside the sandbox, when commands run inside it: the
    /// one a user may let a stopped command run in once, in every mode.
    /// The shell a verified read-only line runs in unasked, while commands
    /// are confined at all (the user's `--sandbox off` makes them ask).
    pub(super) fn read_only_shell(&self) -> Option<Arc<dyn Shell>> {
        if !self.services.ctx.shell.spawner().is_confined() {
            return None;
        }
        self.modes
            .kit
            .as_ref()
            .and_then(|k| k.read_only_shell.clone())
    }

    pub(super) fn escalation_shell(&self) -> Option<Arc<dyn Shell>> {
        if !self.services.ctx.shell.spawner().is_confined() {
            return None;
        }
        let outside = self
            .modes
            .kit
            .as_ref()
            .and_then(|k| k.outside_shell.clone());
        match outside {
            Some(shell) => Some(shell),
            // `auto` entered with a confined shell from the kit over an
            // unconfined built-in one: that one is the way out.
            None => (!self.modes.plain_shell.spawner().is_confined())
                .then(|| self.modes.plain_shell.clone()),
        }
    }
}
