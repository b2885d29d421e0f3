//! Claude Code's permission rules (`.claude/settings.json`) as North's
//! command policy takes them, the same at every entry point that runs a
//! command: the agent (terminal, `exec`, editors, the server), `north tool`
//! and `north mcp serve`.

use std::path::Path;

use north_config::claude::{ClaudeRules, CommandRules};
use north_policy::{AllowRules, LimitRules};

/// The allow rules (already only in a trusted project) and the limits.
pub fn shell_rules(rules: &ClaudeRules) -> (AllowRules, LimitRules) {
    let plain = |r: &CommandRules| AllowRules {
        exact: r.exact.clone(),
        prefixes: r.prefixes.clone(),
    };
    (
        plain(&rules.allow),
        LimitRules {
            deny: plain(&rules.deny),
            confirm: plain(&rules.ask),
            deny_all: rules.deny.all,
            confirm_all: rules.ask.all,
        },
    )
}

/// The project's rules read from its files, allow rules only when
/// `trusted` (for entry points that do not load the whole configuration).
pub fn project_shell_rules(root: &Path, trusted: bool) -> (AllowRules, LimitRules) {
    let rules = ClaudeRules::of_project(root);
    shell_rules(&if trusted {
        rules
    } else {
        rules.narrowing_only()
    })
}
