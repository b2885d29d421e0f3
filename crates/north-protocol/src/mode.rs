//! Permission modes: how much North does without asking.

use serde::{Deserialize, Serialize};

/// How much North does without asking: one concept for the TUI (Shift+Tab
/// cycles), `north exec --mode` and the config key `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Edits and commands outside the allow rules ask.
    #[default]
    Ask,
    /// Edits are applied without review; commands still ask.
    AcceptEdits,
    /// Read-only: no edit or command tools; the model ends with a plan.
    Plan,
    /// Edits applied, and commands run inside the OS sandbox without
    /// asking; a command the sandbox stopped may run once outside it, only
    /// when the user says so.
    Auto,
}

impl PermissionMode {
    /// Every mode, in Shift+Tab order.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Ask,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Auto,
    ];

    /// The mode's name (`accept-edits`), as flags and config files spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Ask => "ask",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::Auto => "auto",
        }
    }

    /// The next mode in Shift+Tab order.
    pub fn next(self) -> PermissionMode {
        let i = PermissionMode::ALL
            .iter()
            .position(|m| *m == self)
            .unwrap_or(0);
        PermissionMode::ALL[(i + 1) % PermissionMode::ALL.len()]
    }

    /// Whether edits are applied without asking.
    pub fn applies_edits(self) -> bool {
        matches!(self, PermissionMode::AcceptEdits | PermissionMode::Auto)
    }

    /// Whether this mode lets North do more unasked than `ask` — what an
    /// untrusted project may not choose for itself.
    pub fn widens(self) -> bool {
        self.applies_edits()
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown mode `{s}` (ask, accept-edits, plan, auto)"))
    }
}
