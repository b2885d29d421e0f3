//! Hooks: the user's own commands at North's lifecycle events, in Claude
//! Code's format so the same scripts work in both.
//!
//! A hook is configured in the `hooks` key of the user's `config.json`, of
//! a trusted project's `.north/project.json`, or of a trusted project's
//! `.claude/settings.json` / `.claude/settings.local.json`. It gets one JSON
//! object on standard input (`session_id`, `transcript_path`, `cwd`,
//! `hook_event_name` and the event's own fields) and `NORTH_PROJECT_DIR` /
//! `CLAUDE_PROJECT_DIR` in its environment. Exit 0 goes on (stdout becomes
//! context for `UserPromptSubmit` and `SessionStart`); exit 2 blocks with
//! stderr as the reason; other codes are reported and do not block; a JSON
//! object on stdout may decide instead (see [`HookVerdict`]).
//!
//! Main types: [`HookSet`] (configured hooks, with where each came from;
//! read by `north-config`), [`Hooks`] (a set bound to a project and its spawners, which runs them),
//! [`HookVerdict`] (what the hooks of one event decided).
//!
//! This module never decides whether a project is trusted (the caller
//! passes only hooks it may run) and never starts a process but through
//! [`north_tools::Spawner`].

mod run;
mod tool_call;

pub use north_config::hooks::{
    DEFAULT_TIMEOUT, HookDef, HookError, HookOrigin, HookSet, Matcher, PROJECT_HOOK_FILES,
    claude_names, hook_tool_input, project_blocks, project_hooks,
};

/// What hooks gave as context travels with the user's message, between
/// these tags; front ends show the user's own words without it.
pub(crate) const CONTEXT_TAGS: (&str, &str) = ("<hook-context>", "</hook-context>");

/// `text` (a user message as stored) without what hooks added to it.
pub fn without_context(text: &str) -> String {
    let (open, close) = CONTEXT_TAGS;
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find(close) {
            Some(end) => &rest[start + end + close.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out.trim_end().to_string()
}
pub use run::{MAX_OUTPUT, Ran, run as run_command};
pub use tool_call::HookGate;

use std::path::PathBuf;

use north_protocol::{Event, HookEvent, HookOutcome, PermissionMode};
use north_tools::Spawner;
use serde_json::{Map, Value, json};

/// Characters of hook output that reach the model as context or reason.
const MAX_FOR_MODEL: usize = 10_000;

/// A hook's permission decision on a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookPermission {
    /// Run it without asking (the command policy's refusals and the OS
    /// sandbox still hold).
    Allow(String),
    /// Ask the user even where North would not.
    Ask(String),
}

/// What the hooks of one event decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HookVerdict {
    /// A hook blocked it (exit 2, `"decision": "block"`, or
    /// `permissionDecision: "deny"`), with the reason.
    pub block: Option<String>,
    /// A hook said `"continue": false`: the turn stops, with this reason.
    pub halt: Option<String>,
    /// A `PreToolUse` hook's `allow` or `ask`.
    pub permission: Option<HookPermission>,
    /// Text for the model (stdout of `UserPromptSubmit` / `SessionStart`,
    /// `additionalContext`).
    pub context: Vec<String>,
    /// A `PreToolUse` hook's `updatedInput`: the fields of the call's
    /// input it replaces (a later hook's fields win).
    pub updated_input: Option<serde_json::Map<String, Value>>,
    /// A `PermissionRequest` hook's answer (`decision.behavior`): allow
    /// (`true`) or deny, with its message.
    pub answer: Option<(bool, String)>,
}

/// What a hook is told besides its event's own fields.
#[derive(Debug, Clone)]
pub struct HookSession {
    /// The session's id.
    pub session_id: String,
    /// The session's log (JSON lines).
    pub transcript_path: PathBuf,
    /// The permission mode.
    pub permission_mode: PermissionMode,
}

/// A hook set bound to a project: runs hooks through the spawners.
#[derive(Debug, Clone)]
pub struct Hooks {
    set: HookSet,
    root: PathBuf,
    spawner: Spawner,
    net_spawner: Spawner,
}

impl Hooks {
    /// Hooks of `set` running in `root`: through `spawner`, or through
    /// `net_spawner` for a hook the user let reach the network.
    pub fn new(set: HookSet, root: PathBuf, spawner: Spawner, net_spawner: Spawner) -> Hooks {
        Hooks {
            set,
            root,
            spawner,
            net_spawner,
        }
    }

    /// The configured hooks.
    pub fn set(&self) -> &HookSet {
        &self.set
    }

    /// Runs the hooks of `event` matching `subject` (a tool name, or the
    /// event's source) with `fields` added to the common input, one after
    /// another in configuration order; each reports a [`Event::Hook`].
    pub(crate) async fn fire(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        session: &HookSession,
        fields: Map<String, Value>,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> HookVerdict {
        let mut verdict = HookVerdict::default();
        let defs = self.set.matching(event, subject);
        if defs.is_empty() {
            return verdict;
        }
        let mut input = Map::new();
        input.insert("session_id".into(), json!(session.session_id));
        input.insert(
            "transcript_path".into(),
            json!(session.transcript_path.display().to_string()),
        );
        input.insert("cwd".into(), json!(self.root.display().to_string()));
        input.insert("hook_event_name".into(), json!(event.name()));
        input.insert(
            "permission_mode".into(),
            json!(claude_mode(session.permission_mode)),
        );
        input.extend(fields);
        let input = serde_json::to_vec(&Value::Object(input)).unwrap_or_default();
        for def in defs {
            let spawner = if def.network {
                &self.net_spawner
            } else {
                &self.spawner
            };
            let ran = run::run(
                spawner,
                &self.root,
                &def.command,
                &input,
                def.timeout,
                def.origin.plugin_root(),
            )
            .await;
            let (outcome, message) = judge(event, def, ran, &mut verdict);
            tracing::info!(event = %event, command = %def.command, ?outcome, message = message.as_deref().unwrap_or(""), "hook");
            emit(Event::Hook {
                event,
                command: def.command.clone(),
                outcome,
                message,
            });
            if verdict.halt.is_some() {
                break;
            }
        }
        verdict
    }
}

/// A hook said no (exit 2, `"decision": "block"`, `"continue": false`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct HookBlocked {
    /// What the hook said.
    pub reason: String,
}

impl Hooks {
    /// Runs the hooks of an event that belongs to no turn (a worktree's
    /// `WorktreeCreate` or `WorktreeRemove`), for the session `session_id`
    /// names (empty: none yet), in `cwd`'s project. `Err` carries the
    /// reason a hook blocked it; each run is reported through `emit`.
    pub async fn fire_outside_turn(
        &self,
        event: HookEvent,
        session_id: &str,
        fields: Map<String, Value>,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> Result<(), HookBlocked> {
        let session = HookSession {
            session_id: session_id.to_string(),
            transcript_path: PathBuf::new(),
            permission_mode: PermissionMode::Ask,
        };
        let verdict = self.fire(event, None, &session, fields, emit).await;
        match verdict.block.or(verdict.halt) {
            Some(reason) => Err(HookBlocked { reason }),
            None => Ok(()),
        }
    }
}

/// Claude Code's word for a permission mode.
fn claude_mode(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Ask => "default",
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Plan => "plan",
        PermissionMode::Auto => "bypassPermissions",
    }
}

fn clip(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_FOR_MODEL {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(MAX_FOR_MODEL).collect();
    kept.push_str("\n[… hook output cut]");
    kept
}

/// Folds one hook's run into `verdict`; returns what to report.
fn judge(
    event: HookEvent,
    def: &HookDef,
    ran: Ran,
    verdict: &mut HookVerdict,
) -> (HookOutcome, Option<String>) {
    let (code, stdout, stderr) = match ran {
        Ran::TimedOut => {
            return (
                HookOutcome::TimedOut,
                Some(format!(
                    "killed after {}s (its timeout); raise `timeout` in its entry if it needs longer",
                    def.timeout.as_secs_f64()
                )),
            );
        }
        Ran::NotStarted(e) => return (HookOutcome::Failed, Some(e)),
        Ran::Exited {
            code,
            stdout,
            stderr,
        } => (code, stdout, stderr),
    };
    match code {
        Some(0) => {
            let decided = stdout
                .trim_start()
                .starts_with('{')
                .then(|| serde_json::from_str::<Value>(stdout.trim()).ok())
                .flatten();
            match decided {
                // A plugin's hook may refuse, ask or add context, never
                // approve or rewrite a call: what it answers was not part
                // of what the user reviewed.
                Some(json) if def.origin.plugin_root().is_some() => {
                    decide(event, &narrowed(json), verdict)
                }
                Some(json) => decide(event, &json, verdict),
                None => {
                    if matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
                        && !stdout.trim().is_empty()
                    {
                        verdict.context.push(clip(&stdout));
                    }
                    (HookOutcome::Ran, None)
                }
            }
        }
        Some(2) => {
            let reason = match clip(&stderr) {
                r if r.is_empty() => format!("blocked by the {event} hook `{}`", def.command),
                r => r,
            };
            verdict.block.get_or_insert(reason.clone());
            (HookOutcome::Blocked, Some(reason))
        }
        other => {
            let code = other.map_or("a signal".to_string(), |c| format!("code {c}"));
            let said = clip(&stderr);
            let message = if said.is_empty() {
                format!("exited with {code}")
            } else {
                format!("exited with {code}: {said}")
            };
            (HookOutcome::Failed, Some(message))
        }
    }
}

/// `json` without what would widen: an allow (`permissionDecision`,
/// `approve`, a permission request's `behavior`) and `updatedInput`.
fn narrowed(mut json: Value) -> Value {
    if json.get("decision").and_then(Value::as_str) == Some("approve")
        && let Some(map) = json.as_object_mut()
    {
        map.remove("decision");
    }
    if let Some(specific) = json
        .get_mut("hookSpecificOutput")
        .and_then(Value::as_object_mut)
    {
        specific.remove("updatedInput");
        if specific.get("permissionDecision").and_then(Value::as_str) == Some("allow") {
            specific.remove("permissionDecision");
        }
        let allows = specific
            .get("decision")
            .and_then(|d| d.get("behavior"))
            .and_then(Value::as_str)
            == Some("allow");
        if allows {
            specific.remove("decision");
        }
    }
    json
}

/// A hook's JSON answer (Claude Code's fields).
fn decide(
    event: HookEvent,
    json: &Value,
    verdict: &mut HookVerdict,
) -> (HookOutcome, Option<String>) {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(clip)
            .filter(|s| !s.is_empty())
    };
    let specific = json.get("hookSpecificOutput");
    if let Some(context) = text(specific.and_then(|s| s.get("additionalContext"))) {
        verdict.context.push(context);
    }
    if event == HookEvent::PreToolUse
        && let Some(fields) = specific
            .and_then(|s| s.get("updatedInput"))
            .and_then(Value::as_object)
    {
        verdict
            .updated_input
            .get_or_insert_with(Default::default)
            .extend(fields.clone());
    }
    if event == HookEvent::PermissionRequest
        && let Some(decision) = specific.and_then(|s| s.get("decision"))
    {
        let message =
            text(decision.get("message")).unwrap_or_else(|| format!("answered by a {event} hook"));
        match decision.get("behavior").and_then(Value::as_str) {
            // A deny from any hook stands.
            Some("deny") => verdict.answer = Some((false, message)),
            Some("allow") if verdict.answer.is_none() => verdict.answer = Some((true, message)),
            _ => {}
        }
    }
    if json.get("continue") == Some(&Value::Bool(false)) {
        let reason = text(json.get("stopReason"))
            .unwrap_or_else(|| format!("a {event} hook stopped the turn"));
        verdict.halt.get_or_insert(reason.clone());
        return (HookOutcome::Blocked, Some(reason));
    }
    let reason = text(json.get("reason"));
    if let Some(decision) = specific
        .and_then(|s| s.get("permissionDecision"))
        .and_then(Value::as_str)
    {
        let why = text(specific.and_then(|s| s.get("permissionDecisionReason")))
            .or(reason.clone())
            .unwrap_or_else(|| format!("the {event} hook decided `{decision}`"));
        match decision {
            "deny" => {
                verdict.block.get_or_insert(why.clone());
                return (HookOutcome::Blocked, Some(why));
            }
            // An earlier hook's `ask` stands: an allow never overrides it.
            "allow" if !matches!(verdict.permission, Some(HookPermission::Ask(_))) => {
                verdict.permission = Some(HookPermission::Allow(why));
            }
            "ask" => verdict.permission = Some(HookPermission::Ask(why)),
            _ => {}
        }
    }
    match json.get("decision").and_then(Value::as_str) {
        Some("block") => {
            let why = reason.unwrap_or_else(|| format!("blocked by a {event} hook"));
            verdict.block.get_or_insert(why.clone());
            (HookOutcome::Blocked, Some(why))
        }
        // The older word for a PreToolUse allow.
        Some("approve") if event == HookEvent::PreToolUse => {
            if verdict.permission.is_none() {
                verdict.permission = Some(HookPermission::Allow(
                    reason.unwrap_or_else(|| "approved by a hook".into()),
                ));
            }
            (HookOutcome::Ran, None)
        }
        _ => (HookOutcome::Ran, text(json.get("systemMessage"))),
    }
}

#[cfg(test)]
mod tests;
