//! Typed views of tool results, where callers read them: what a shell tool
//! returns — `shell_run` (camelCase keys, spec §6.4) and `shell.exec`
//! (snake_case, runtime-contracts) serialise the one [`ShellResult`], and
//! whoever reads a command's result back (the agent's escalation, the TUI,
//! ACP, `north exec`) parses it through [`ShellResult::read`] instead of
//! looking keys up by name — and a tool's request for a grant
//! ([`GrantRequest`]). The `{ok, output, error}` wire format stays as the
//! serialisation.

use serde_json::{Map, Value, json};

use crate::{Capability, ToolOutcome};

/// The key names of a tool's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// `exitCode`, `durationMs`, `timedOut` (`shell_run`).
    Camel,
    /// `exit_code`, `duration_ms`, `timed_out` (`shell.exec`).
    Snake,
}

/// One command's result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellResult {
    /// What it wrote to stdout.
    pub stdout: String,
    /// What it wrote to stderr.
    pub stderr: String,
    /// Its exit status (None: interrupted before it reported one).
    pub exit_code: Option<i32>,
    /// Wall-clock milliseconds.
    pub duration_ms: u64,
    /// The timeout fired.
    pub timed_out: bool,
    /// Output was cut.
    pub truncated: bool,
    /// A sentence about restarts and interruptions.
    pub notice: Option<String>,
    /// The sandbox stopped it: what it refused, with the error line that
    /// shows it.
    pub sandbox_denied: Option<String>,
    /// North's network proxy refused a host no grant covers (a grant, not
    /// a run outside the sandbox, is what allows it).
    pub network_refused: Option<String>,
    /// The hosts its connections went to through North's proxy, allowed
    /// or refused.
    pub hosts: Vec<HostReached>,
}

/// A host a command connected to through North's network proxy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostReached {
    /// The host.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// Whether the proxy let the connection through.
    pub allowed: bool,
}

/// What the caller is told of a host North's proxy refused.
pub const REFUSED_NOTE: &str = "North's network proxy refused a host no grant covers; ask the user to grant `net:<host>` (a headless run needs --grant net:<host>) rather than working around it";

/// What the caller is told follows from a denial when nobody may let the
/// command out.
pub const DENIED_NOTE: &str = "the OS sandbox stopped this command; it was not run outside the sandbox (only a person at North's terminal may allow that)";

impl ShellResult {
    /// The JSON a tool returns, with `naming`'s keys; a denial adds
    /// `sandboxDenied` (its evidence) and a `note` for the model.
    pub fn to_json(&self, naming: Naming) -> Value {
        let (exit, duration, timed) = keys(naming);
        let mut out = Map::new();
        out.insert("stdout".into(), json!(self.stdout));
        out.insert("stderr".into(), json!(self.stderr));
        out.insert(exit.into(), json!(self.exit_code));
        out.insert(duration.into(), json!(self.duration_ms));
        out.insert(timed.into(), json!(self.timed_out));
        out.insert("truncated".into(), json!(self.truncated));
        if let Some(notice) = &self.notice {
            out.insert("notice".into(), json!(notice));
        }
        if let Some(denied) = &self.sandbox_denied {
            out.insert("sandboxDenied".into(), json!(denied));
            out.insert("note".into(), json!(DENIED_NOTE));
        } else if let Some(refused) = &self.network_refused {
            out.insert("networkRefused".into(), json!(refused));
            out.insert("note".into(), json!(REFUSED_NOTE));
        }
        if !self.hosts.is_empty() {
            out.insert("hosts".into(), json!(self.hosts));
        }
        Value::Object(out)
    }

    /// A shell tool's result read back, whichever naming it used; None when
    /// `output` is not one.
    pub fn read(output: &Value) -> Option<ShellResult> {
        let out = output.as_object()?;
        let naming = if out.contains_key("exitCode") {
            Naming::Camel
        } else if out.contains_key("exit_code") {
            Naming::Snake
        } else {
            return None;
        };
        let (exit, duration, timed) = keys(naming);
        let text = |k: &str| out.get(k).and_then(Value::as_str).map(str::to_string);
        let flag = |k: &str| out.get(k).and_then(Value::as_bool).unwrap_or(false);
        Some(ShellResult {
            stdout: text("stdout").unwrap_or_default(),
            stderr: text("stderr").unwrap_or_default(),
            exit_code: out
                .get(exit)
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok()),
            duration_ms: out.get(duration).and_then(Value::as_u64).unwrap_or(0),
            timed_out: flag(timed),
            truncated: flag("truncated"),
            notice: text("notice"),
            sandbox_denied: text("sandboxDenied"),
            network_refused: text("networkRefused"),
            hosts: out
                .get("hosts")
                .and_then(|h| serde_json::from_value(h.clone()).ok())
                .unwrap_or_default(),
        })
    }
}

fn keys(naming: Naming) -> (&'static str, &'static str, &'static str) {
    match naming {
        Naming::Camel => ("exitCode", "durationMs", "timedOut"),
        Naming::Snake => ("exit_code", "duration_ms", "timed_out"),
    }
}

/// A tool met a host no grant covers (a redirect to another domain, a
/// private address, a search backend): the caller asks for the capability
/// (or says which grant a headless run needs), then calls again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRequest {
    /// What is asked for (`net:<host>`).
    pub capability: Capability,
    /// Why, for the person and the model.
    pub why: String,
}

impl GrantRequest {
    /// Asks for `net:<host>`.
    pub fn net(host: &str, why: String) -> GrantRequest {
        GrantRequest {
            capability: Capability::NetHost(host.to_string()),
            why,
        }
    }

    /// The outcome a tool returns to ask.
    pub fn outcome(&self) -> ToolOutcome {
        ToolOutcome {
            ok: false,
            output: json!({"needs_grant": self.capability.to_string()}),
            error: Some(self.why.clone()),
        }
    }

    /// The request in a tool's outcome, if it is one.
    pub fn of(outcome: &ToolOutcome) -> Option<GrantRequest> {
        let asked = outcome.output.get("needs_grant")?.as_str()?;
        Some(GrantRequest {
            capability: asked.parse().ok()?,
            why: outcome.error.clone().unwrap_or_default(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_naming_reads_back_what_it_wrote() {
        let result = ShellResult {
            stdout: "out".into(),
            stderr: "err".into(),
            exit_code: Some(2),
            duration_ms: 7,
            timed_out: true,
            truncated: false,
            notice: Some("restarted".into()),
            sandbox_denied: Some("the sandbox refuses writes to /x (…)".into()),
            network_refused: None,
            hosts: vec![HostReached {
                host: "registry.npmjs.org".into(),
                port: 443,
                allowed: true,
            }],
        };
        for naming in [Naming::Camel, Naming::Snake] {
            let json = result.to_json(naming);
            assert_eq!(ShellResult::read(&json).unwrap(), result, "{json}");
            assert!(json.get("note").is_some());
        }
        assert!(result.to_json(Naming::Camel).get("exitCode").is_some());
        assert!(result.to_json(Naming::Snake).get("exit_code").is_some());
        assert_eq!(ShellResult::read(&json!({"applied": true})), None);
    }

    #[test]
    fn a_grant_request_reads_back() {
        let asked = GrantRequest::net("example.org", "redirected".into());
        assert_eq!(GrantRequest::of(&asked.outcome()), Some(asked));
        assert_eq!(GrantRequest::of(&ToolOutcome::err("no")), None);
    }
}
