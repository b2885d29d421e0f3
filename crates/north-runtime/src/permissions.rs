//! Claude Code's permission rules (`.claude/settings.json`) as North's
//! command policy takes them, the same at every entry point that runs a
//! command: the agent (terminal, `exec`, editors, the server), `north tool`
//! and `north mcp serve`.

use std::path::Path;

use north_config::claude::{ClaudeRules, CommandRules};
use north_policy::{AllowRules, LimitRules, PathRules};

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

/// The path rules for North's read and edit tools (edits allowed only as
/// the configuration took them: in a trusted project).
pub fn path_rules(rules: &ClaudeRules) -> PathRules {
    PathRules::new(&rules.read_deny, &rules.edit_deny, &rules.edit_allow)
}

/// The `net:<host>` grants the rules give (a trusted project's, already
/// filtered by the configuration).
pub fn host_grants(rules: &ClaudeRules) -> Vec<north_protocol::Capability> {
    rules
        .allow_hosts
        .iter()
        .filter_map(|h| format!("net:{h}").parse().ok())
        .collect()
}

/// The project's path rules read from its files (edit allow rules only
/// when `trusted`), for entry points that do not load the configuration.
pub fn project_path_rules(root: &Path, trusted: bool) -> PathRules {
    let rules = ClaudeRules::of_project(root);
    path_rules(&if trusted {
        rules
    } else {
        rules.narrowing_only()
    })
}
