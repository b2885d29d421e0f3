//! Reading a `hooks` block in Claude Code's schema:
//! `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
//! "command": "…", "timeout": 30}]}]}`.
//!
//! North's own files are read strictly (an unknown event or a bad field is
//! an error naming it); Claude Code's files leniently (its events and hook
//! types North does not have are skipped and listed), so a real
//! `.claude/settings.json` never stops North from starting.

use std::time::Duration;

use north_protocol::HookEvent;
use serde_json::{Map, Value};

use super::{HookDef, HookOrigin, Matcher};

/// A hook's timeout when its entry gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest timeout an entry may ask for.
const MAX_TIMEOUT_SECS: f64 = 24.0 * 3600.0;

/// What a `hooks` block holds: the hooks, and what was skipped (lenient
/// reading only) or ignored, one line each.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The hooks, in the block's order.
    pub defs: Vec<HookDef>,
    /// What was not taken, and why.
    pub skipped: Vec<String>,
}

/// A `hooks` block North cannot run: the field (`hooks.PreToolUse[0].type`)
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {problem}")]
pub struct HookError {
    /// Where in the block, as a JSON path.
    pub field: String,
    /// What is wrong there, and what to write instead.
    pub problem: String,
}

fn field(at: impl Into<String>, problem: impl Into<String>) -> HookError {
    HookError {
        field: at.into(),
        problem: problem.into(),
    }
}

/// Reads `value` (the `hooks` object) from `origin`. `strict` makes
/// anything North cannot run an error (`field …: what is wrong`).
pub fn parse(value: &Value, origin: &HookOrigin, strict: bool) -> Result<Parsed, HookError> {
    let mut out = Parsed::default();
    let Value::Object(events) = value else {
        return Err(field(
            "hooks",
            format!(
                "expected an object of events (`{{\"PreToolUse\": [...]}}`), found {}",
                north_protocol::json_kind(value)
            ),
        ));
    };
    for (name, entries) in events {
        let Some(event) = HookEvent::parse(name) else {
            let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
            let message = field(
                format!("hooks.{name}"),
                format!(
                    "North has no hook event `{name}`; known events: {}",
                    known.join(", ")
                ),
            );
            if strict {
                return Err(message);
            }
            out.skipped.push(message.to_string());
            continue;
        };
        let Value::Array(entries) = entries else {
            return Err(field(
                format!("hooks.{name}"),
                format!(
                    "expected a list of matcher entries, found {}",
                    north_protocol::json_kind(entries)
                ),
            ));
        };
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("hooks.{name}[{i}]");
            parse_entry(entry, event, &at, origin, strict, &mut out)?;
        }
    }
    Ok(out)
}

fn parse_entry(
    entry: &Value,
    event: HookEvent,
    at: &str,
    origin: &HookOrigin,
    strict: bool,
    out: &mut Parsed,
) -> Result<(), HookError> {
    let Value::Object(entry) = entry else {
        return Err(field(at, "expected an object with `matcher` and `hooks`"));
    };
    let Some(matcher) = matcher_of(entry, at, strict, out)? else {
        return Ok(());
    };
    let Some(Value::Array(hooks)) = entry.get("hooks") else {
        return Err(field(
            format!("{at}.hooks"),
            "expected a list of hooks (`[{\"type\": \"command\", \"command\": \"…\"}]`)",
        ));
    };
    for (j, hook) in hooks.iter().enumerate() {
        let at = format!("{at}.hooks[{j}]");
        let Value::Object(hook) = hook else {
            return Err(field(at, "expected an object with `type` and `command`"));
        };
        if !is_command_hook(hook, &at, strict, out)? {
            continue;
        }
        let command = match hook.get("command").and_then(Value::as_str) {
            Some(c) if !c.trim().is_empty() => c.to_string(),
            _ => {
                return Err(field(
                    format!("{at}.command"),
                    "expected the shell command to run",
                ));
            }
        };
        let timeout = timeout_of(hook, &at)?;
        let network = network_of(hook, &at, origin, out)?;
        out.defs.push(HookDef {
            event,
            matcher: matcher.clone(),
            command,
            timeout,
            network,
            origin: origin.clone(),
        });
    }
    Ok(())
}

/// The entry's matcher; `None` when a lenient read skips the entry.
fn matcher_of(
    entry: &Map<String, Value>,
    at: &str,
    strict: bool,
    out: &mut Parsed,
) -> Result<Option<Matcher>, HookError> {
    let pattern = match entry.get("matcher") {
        None | Some(Value::Null) => "",
        Some(Value::String(m)) => m.as_str(),
        Some(other) => {
            return Err(field(
                format!("{at}.matcher"),
                format!(
                    "expected a string (a regular expression on tool names), found {}",
                    north_protocol::json_kind(other)
                ),
            ));
        }
    };
    match Matcher::new(pattern) {
        Ok(m) => Ok(Some(m)),
        Err(e) => {
            let problem = field(
                format!("{at}.matcher"),
                format!("`{}` is not a regular expression: {e}", pattern.trim()),
            );
            if strict {
                return Err(problem);
            }
            out.skipped.push(problem.to_string());
            Ok(None)
        }
    }
}

/// Whether the hook is a `command` hook (the only kind North runs); another
/// kind is an error in North's files and skipped in Claude Code's.
fn is_command_hook(
    hook: &Map<String, Value>,
    at: &str,
    strict: bool,
    out: &mut Parsed,
) -> Result<bool, HookError> {
    match hook.get("type").and_then(Value::as_str) {
        Some("command") => Ok(true),
        Some(other) => {
            let problem = field(
                format!("{at}.type"),
                format!("North runs only `command` hooks, not `{other}`"),
            );
            if strict {
                return Err(problem);
            }
            out.skipped.push(problem.to_string());
            Ok(false)
        }
        None => Err(field(
            format!("{at}.type"),
            "missing; write `\"type\": \"command\"`",
        )),
    }
}

fn timeout_of(hook: &Map<String, Value>, at: &str) -> Result<Duration, HookError> {
    match hook.get("timeout") {
        None | Some(Value::Null) => Ok(DEFAULT_TIMEOUT),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(secs) if secs > 0.0 && secs <= MAX_TIMEOUT_SECS => {
                Ok(Duration::from_secs_f64(secs))
            }
            _ => Err(field(
                format!("{at}.timeout"),
                format!("{n} is not a number of seconds between 0 and {MAX_TIMEOUT_SECS}"),
            )),
        },
        Some(other) => Err(field(
            format!("{at}.timeout"),
            format!(
                "expected seconds, found {}",
                north_protocol::json_kind(other)
            ),
        )),
    }
}

/// Whether the hook may reach the network. Only the user opens it: a
/// project's hook runs without it whatever its entry says.
fn network_of(
    hook: &Map<String, Value>,
    at: &str,
    origin: &HookOrigin,
    out: &mut Parsed,
) -> Result<bool, HookError> {
    let network = match hook.get("network") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(field(
                format!("{at}.network"),
                format!(
                    "expected true or false, found {}",
                    north_protocol::json_kind(other)
                ),
            ));
        }
    };
    Ok(match origin {
        HookOrigin::User(_) => network,
        HookOrigin::Project(path) => {
            if network {
                out.skipped.push(format!(
                    "{}: `{at}.network` ignored: only your own config lets a hook reach the network",
                    path.display()
                ));
            }
            false
        }
        HookOrigin::Plugin { name, .. } => {
            if network {
                out.skipped.push(format!(
                    "plugin {name}: `{at}.network` ignored: only your own config lets a hook reach the network"
                ));
            }
            false
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn user() -> HookOrigin {
        HookOrigin::User(PathBuf::from("config.json"))
    }

    #[test]
    fn claude_codes_schema_reads_as_is() {
        let v = json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "timeout": 30}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "make test"}]}]
        });
        let p = parse(&v, &user(), true).unwrap();
        assert_eq!(p.defs.len(), 2);
        let pre = p
            .defs
            .iter()
            .find(|d| d.event == HookEvent::PreToolUse)
            .unwrap();
        assert_eq!(pre.timeout, Duration::from_secs(30));
        assert!(pre.matcher.matches("shell_run"));
        assert!(!pre.matcher.matches("read_file"));
        let stop = p.defs.iter().find(|d| d.event == HookEvent::Stop).unwrap();
        assert_eq!(stop.timeout, DEFAULT_TIMEOUT);
        assert!(stop.matcher.matches("anything"));
    }

    #[test]
    fn north_files_name_what_is_wrong_and_claude_files_skip_it() {
        let v = json!({"TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}]});
        let e = parse(&v, &user(), true).unwrap_err();
        assert_eq!(e.field, "hooks.TeammateIdle");
        assert!(e.problem.contains("PreToolUse"), "{e}");
        let p = parse(&v, &user(), false).unwrap();
        assert!(p.defs.is_empty());
        assert_eq!(p.skipped.len(), 1);

        let v = json!({"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]});
        assert_eq!(
            parse(&v, &user(), true).unwrap_err().field,
            "hooks.Stop[0].hooks[0].type"
        );
        assert!(parse(&v, &user(), false).unwrap().defs.is_empty());

        for (v, field) in [
            (
                json!({"Stop": [{"hooks": [{"type": "command"}]}]}),
                "command",
            ),
            (
                json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}),
                "timeout",
            ),
            (json!({"Stop": [{"matcher": "(", "hooks": []}]}), "matcher"),
            (json!({"Stop": {}}), "hooks.Stop"),
            (json!([]), "hooks"),
        ] {
            let e = parse(&v, &user(), true).unwrap_err();
            assert!(e.field.ends_with(field), "{field}: {e}");
        }
    }

    #[test]
    fn only_the_users_config_opens_the_network() {
        let v = json!({"Stop": [{"hooks": [{"type": "command", "command": "curl x", "network": true}]}]});
        assert!(parse(&v, &user(), true).unwrap().defs[0].network);
        let project = HookOrigin::Project(PathBuf::from(".north/project.json"));
        let p = parse(&v, &project, true).unwrap();
        assert!(!p.defs[0].network);
        assert!(p.skipped[0].contains("network"), "{:?}", p.skipped);
    }
}
