//! Claude Code's permission rules — `permissions.allow`, `deny` and `ask`
//! in `.claude/settings.json` and `.claude/settings.local.json` — as North's
//! policy takes them: `Bash(npm test:*)` a command prefix, `Bash(make)` an
//! exact command, `Bash` every command, `WebFetch(domain:evil.example)` a
//! host commands never reach. Deny and ask rules narrow, so they always
//! apply; allow rules for commands widen, so only in a project the user
//! trusts; a project never opens the network (North's rule), so a
//! `WebFetch` allow is listed for the user to grant. A rule North has no equivalent for
//! (`Read(./secrets/**)`, `Edit(src/**)`, an MCP tool) is listed, never
//! silently dropped.

use std::path::Path;

use serde_json::Value;

/// The settings files read, in order.
pub const SETTINGS_FILES: &[&str] = &[".claude/settings.json", ".claude/settings.local.json"];

/// Command rules of one kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CommandRules {
    /// Exact command lines (`Bash(make build)`).
    pub exact: Vec<String>,
    /// Command prefixes, matched word by word (`Bash(npm test:*)`).
    pub prefixes: Vec<String>,
    /// Every command (`Bash`).
    pub all: bool,
}

impl CommandRules {
    /// No rule at all.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefixes.is_empty() && !self.all
    }
}

/// The rules North takes from Claude Code's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClaudeRules {
    /// Commands that run without asking (a trusted project only).
    pub allow: CommandRules,
    /// Commands that never run, whoever approves.
    pub deny: CommandRules,
    /// Commands that always wait for the user's word.
    pub ask: CommandRules,
    /// Hosts commands may never reach.
    pub deny_hosts: Vec<String>,
    /// Hosts North's web tools and commands may reach (`net:<host>`; a
    /// trusted project only).
    pub allow_hosts: Vec<String>,
    /// Project files North's read tools may not open (globs relative to
    /// the root); the literal ones are hidden from commands too.
    pub read_deny: Vec<String>,
    /// Project files edits may not touch.
    pub edit_deny: Vec<String>,
    /// Project files edits to which apply without asking (a trusted
    /// project only).
    pub edit_allow: Vec<String>,
    /// Rules North did not take, each with its file and why.
    pub unmapped: Vec<String>,
}

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Allow,
    Deny,
    Ask,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Allow => "allow",
            Kind::Deny => "deny",
            Kind::Ask => "ask",
        }
    }
}

impl ClaudeRules {
    /// The rules of the project at `root` (its settings files that exist
    /// and parse; a file that does not parse is listed as unmapped).
    pub fn of_project(root: &Path) -> ClaudeRules {
        let mut rules = ClaudeRules::default();
        for rel in SETTINGS_FILES {
            let text = match crate::read_settings(&root.join(rel)) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => {
                    rules.unmapped.push(format!(
                        "{rel}: not read ({e}); its permission rules were not taken"
                    ));
                    continue;
                }
            };
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => rules.add(&value, rel),
                Err(e) => rules.unmapped.push(format!(
                    "{rel}: not JSON ({e}); its permission rules were not read"
                )),
            }
        }
        rules
    }

    /// Adds the `permissions` of one settings file's `value`.
    pub fn add(&mut self, value: &Value, file: &str) {
        let Some(perms) = value.get("permissions") else {
            return;
        };
        for kind in [Kind::Allow, Kind::Deny, Kind::Ask] {
            let Some(list) = perms.get(kind.key()) else {
                continue;
            };
            let Some(list) = list.as_array() else {
                self.unmapped
                    .push(format!("{file}: permissions.{} is not a list", kind.key()));
                continue;
            };
            for rule in list {
                match rule.as_str() {
                    Some(rule) => self.rule(rule, kind, file),
                    None => self.unmapped.push(format!(
                        "{file}: permissions.{}: {rule} is not a rule",
                        kind.key()
                    )),
                }
            }
        }
        for key in ["additionalDirectories", "defaultMode"] {
            if perms.get(key).is_some() {
                self.unmapped.push(format!(
                    "{file}: permissions.{key}: North has no such setting (its modes and sandbox decide)"
                ));
            }
        }
    }

    fn rule(&mut self, rule: &str, kind: Kind, file: &str) {
        let rule = rule.trim();
        let (tool, spec) = match rule.split_once('(') {
            Some((tool, rest)) => match rest.strip_suffix(')') {
                Some(spec) => (tool.trim(), Some(spec.trim())),
                None => {
                    self.unmapped.push(format!(
                        "{file}: `{rule}` (deny/allow/ask): not a rule (no closing parenthesis)"
                    ));
                    return;
                }
            },
            None => (rule, None),
        };
        let mapped = match (tool, spec) {
            ("Bash", None | Some("*" | "")) => {
                self.commands(kind).all = true;
                Ok(())
            }
            ("Bash", Some(spec)) => self.command(kind, spec),
            ("WebFetch", Some(spec)) => match spec.strip_prefix("domain:") {
                Some(host) if !host.trim().is_empty() => {
                    let host = host.trim().to_string();
                    match kind {
                        Kind::Allow => self.allow_hosts.push(host),
                        Kind::Deny => self.deny_hosts.push(host),
                        Kind::Ask => {
                            return self.unmapped.push(format!(
                                "{file}: `{rule}` (ask): North asks about a host no grant covers already"
                            ));
                        }
                    }
                    Ok(())
                }
                _ => Err("North's host rules name a domain (`WebFetch(domain:docs.rs)`)"),
            },
            ("Read", Some(spec)) => self.path(kind, spec, true),
            ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", Some(spec)) => {
                self.path(kind, spec, false)
            }
            ("Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit", None) => {
                Err("North takes path rules (`Read(./secrets/**)`), not a whole tool")
            }
            (t, _) if t.starts_with("mcp__") => Err(
                "North has no per-tool rules for MCP tools (they ask, or run under an \"Always\")",
            ),
            _ => Err("North has no rule for this tool"),
        };
        if let Err(why) = mapped {
            self.unmapped
                .push(format!("{file}: `{rule}` ({}): {why}", kind.key()));
        }
    }

    fn commands(&mut self, kind: Kind) -> &mut CommandRules {
        match kind {
            Kind::Allow => &mut self.allow,
            Kind::Deny => &mut self.deny,
            Kind::Ask => &mut self.ask,
        }
    }

    /// A `Read(…)` or `Edit(…)` specifier: a glob relative to the project
    /// (`./x`, `x`, or `/x` — Claude Code's "relative to the settings
    /// file"); `//abs` and `~/` paths are outside the project.
    fn path(&mut self, kind: Kind, spec: &str, read: bool) -> Result<(), &'static str> {
        if spec.starts_with("//") || spec.starts_with('~') {
            return Err(
                "North's path rules are inside the project (your secret stores outside it are hidden from commands already; `sandbox.deny_read` in your own config hides more)",
            );
        }
        let glob = spec
            .trim_start_matches("./")
            .trim_start_matches('/')
            .to_string();
        if glob.is_empty() || glob.split('/').any(|p| p == "..") {
            return Err("not a path inside the project");
        }
        match (kind, read) {
            (Kind::Deny, true) => self.read_deny.push(glob),
            (Kind::Deny, false) => self.edit_deny.push(glob),
            (Kind::Allow, false) => self.edit_allow.push(glob),
            // North reads project files without asking already.
            (Kind::Allow, true) => {}
            (Kind::Ask, true) => return Err("North does not ask before reading a project file"),
            (Kind::Ask, false) => {
                return Err("North asks about edits unless a mode or an allow rule says otherwise");
            }
        }
        Ok(())
    }

    /// A `Bash(…)` specifier: `cmd:*` or `cmd *` a prefix, else exact.
    fn command(&mut self, kind: Kind, spec: &str) -> Result<(), &'static str> {
        let prefix = spec
            .strip_suffix(":*")
            .or_else(|| spec.strip_suffix(" *"))
            .map(str::trim);
        let rules = self.commands(kind);
        match prefix {
            Some("") => {
                rules.all = true;
                Ok(())
            }
            Some(p) if !p.contains('*') => {
                rules.prefixes.push(p.to_string());
                Ok(())
            }
            None if !spec.contains('*') => {
                rules.exact.push(spec.to_string());
                Ok(())
            }
            _ => Err(
                "North matches a command exactly or by its first words (`cmd:*`); a `*` elsewhere is not taken",
            ),
        }
    }

    /// The same rules without those that widen (the project is not
    /// trusted): they are listed as waiting for trust.
    pub fn narrowing_only(mut self) -> ClaudeRules {
        let allow = std::mem::take(&mut self.allow);
        let hosts = std::mem::take(&mut self.allow_hosts);
        let edits = std::mem::take(&mut self.edit_allow);
        let waiting = allow.exact.len()
            + allow.prefixes.len()
            + usize::from(allow.all)
            + hosts.len()
            + edits.len();
        if waiting > 0 {
            self.unmapped.push(format!(
                ".claude/settings.json: {waiting} allow rule(s) apply once you trust the project (`north trust`); its deny and ask rules apply now"
            ));
        }
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_code_rules_map_onto_commands_and_hosts() {
        let mut r = ClaudeRules::default();
        r.add(
            &json!({"permissions": {
                "allow": ["Bash(npm test:*)", "Bash(make build)", "Bash(git diff *)", "WebFetch(domain:docs.rs)", "Read(./src/**)"],
                "deny": ["Bash(git push:*)", "Bash(curl *)", "WebFetch(domain:evil.example)", "Read(./.env)"],
                "ask": ["Bash(git commit:*)", "Bash", "mcp__github__create_issue"],
                "defaultMode": "acceptEdits"
            }}),
            ".claude/settings.json",
        );
        assert_eq!(r.allow.prefixes, vec!["npm test", "git diff"]);
        assert_eq!(r.allow.exact, vec!["make build"]);
        assert_eq!(r.deny.prefixes, vec!["git push", "curl"]);
        assert_eq!(r.ask.prefixes, vec!["git commit"]);
        assert!(r.ask.all && !r.deny.all && !r.allow.all);
        assert_eq!(r.deny_hosts, vec!["evil.example"]);
        assert_eq!(r.allow_hosts, vec!["docs.rs"]);
        assert_eq!(r.read_deny, vec![".env"]);
        // `Read(./src/**)` allow: North reads without asking already.
        assert_eq!(r.unmapped.len(), 2, "{:?}", r.unmapped);
        assert!(r.unmapped.iter().any(|u| u.contains("defaultMode")));
        assert!(r.unmapped.iter().any(|u| u.contains("mcp__github")));
    }

    #[test]
    fn odd_rules_are_listed_not_guessed() {
        let mut r = ClaudeRules::default();
        r.add(
            &json!({"permissions": {"allow": ["Bash(npm * test)", "Bash(oops", 7, "WebFetch(docs.rs)"], "deny": "Bash"}}),
            "x",
        );
        assert!(r.allow.is_empty());
        assert_eq!(r.unmapped.len(), 5, "{:?}", r.unmapped);
        let untrusted = ClaudeRules {
            allow: CommandRules {
                prefixes: vec!["npm test".into()],
                ..CommandRules::default()
            },
            ..ClaudeRules::default()
        }
        .narrowing_only();
        assert!(untrusted.allow.is_empty());
        assert!(untrusted.unmapped[0].contains("once you trust"));
    }
}
