//! Running one tool call under approval: shell commands through the
//! allowlist or the user, edits as reviewed proposals applied atomically,
//! network tools behind capabilities.

use north_protocol::{
    ApprovalDecision, ApprovalKind, ApprovalPolicy, Event, State, ToolCall, ToolOutcome,
};
use north_tools::policy::ProjectAllowlist;
use north_tools::policy::net::NetAccess;
use north_tools::{Registry, ToolContext};
use serde_json::{Value, json};

use crate::agent::Emit;
use crate::approval::{ApprovalRequest, Approver};
use crate::intent::command_of;
use crate::notes::{deny_capability, grant_capability, request_capability};
use crate::store::Tracer;

/// Everything a call needs from the agent, borrowed for its duration.
pub(crate) struct CallEnv<'a> {
    pub tools: &'a Registry,
    pub ctx: &'a mut ToolContext,
    pub approver: &'a dyn Approver,
    pub state: &'a mut State,
    pub tracer: &'a Tracer,
    pub emit: &'a Emit<'a>,
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if let Some(stripped) = host.strip_prefix('[') {
        stripped.split(']').next()?.to_string()
    } else {
        host.split(':').next()?.to_string()
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

impl CallEnv<'_> {
    async fn ask(
        &mut self,
        call_id: &str,
        kind: ApprovalKind,
        subject: String,
        request: ApprovalRequest<'_>,
    ) -> ApprovalDecision {
        (self.emit)(Event::ApprovalRequested {
            call_id: call_id.into(),
            kind,
            subject: subject.clone(),
        });
        let decision = self.approver.decide(call_id, request).await;
        (self.emit)(Event::ApprovalDecided {
            call_id: call_id.into(),
            decision,
        });
        self.tracer.record(
            "approval",
            json!({"call_id": call_id, "kind": kind, "subject": subject, "decision": decision}),
        );
        tracing::info!(call_id, ?kind, %subject, ?decision, "approval");
        decision
    }

    /// Asks the user for `cap` (recording the request in State). Returns
    /// whether it is granted now.
    pub(crate) async fn capability(&mut self, call_id: &str, cap: &str, reason: &str) -> bool {
        if self.state.capabilities_granted.iter().any(|c| c == cap) {
            return true;
        }
        request_capability(self.state, cap);
        let decision = self
            .ask(
                call_id,
                ApprovalKind::Capability,
                cap.to_string(),
                ApprovalRequest::Capability {
                    capability: cap,
                    reason,
                },
            )
            .await;
        if decision == ApprovalDecision::Grant {
            grant_capability(self.state, cap);
            self.ctx.capabilities = self.state.capabilities_granted.clone();
            true
        } else {
            deny_capability(self.state, cap);
            false
        }
    }

    /// Runs `call` with whatever approval its tool needs.
    pub(crate) async fn run(&mut self, call: &ToolCall) -> ToolOutcome {
        let Some(tool) = self.tools.get(&call.name).cloned() else {
            return ToolOutcome::err(format!(
                "unknown tool `{}`; available tools: {}",
                call.name,
                self.tools.names().join(", ")
            ));
        };
        if let Value::String(raw) = &call.arguments {
            return ToolOutcome::err(format!("arguments are not a valid JSON object: {raw}"));
        }
        self.ctx.capabilities = self.state.capabilities_granted.clone();
        match tool.spec().approval {
            ApprovalPolicy::None => tool.call(call.arguments.clone(), self.ctx).await,
            ApprovalPolicy::Shell => self.shell(call).await,
            ApprovalPolicy::Write => self.write(call).await,
            ApprovalPolicy::Net => {
                let url = call
                    .arguments
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(host) = host_of(url) {
                    let access = NetAccess {
                        capabilities: &self.ctx.capabilities,
                        allowlist: self.ctx.net_allowlist.as_deref(),
                    };
                    if access.check(&host).is_err() {
                        let cap = format!("net:{host}");
                        if !self
                            .capability(&call.id, &cap, &format!("{} {url}", call.name))
                            .await
                        {
                            return ToolOutcome::err(format!(
                                "network access to {host} was not granted by the user (capability `{cap}`); do not retry without asking"
                            ));
                        }
                    }
                }
                tool.call(call.arguments.clone(), self.ctx).await
            }
        }
    }

    async fn shell(&mut self, call: &ToolCall) -> ToolOutcome {
        let Some(command) = command_of(&call.arguments).map(str::to_string) else {
            // Let the tool report the missing field in its own words.
            return self
                .tools
                .call(&call.name, call.arguments.clone(), self.ctx)
                .await;
        };
        let mut allowlist = match ProjectAllowlist::load(&self.ctx.root) {
            Ok(a) => a,
            Err(e) => return ToolOutcome::err(format!("cannot read the allowlist: {e}")),
        };
        if !allowlist.contains(&command) {
            let decision = self
                .ask(
                    &call.id,
                    ApprovalKind::Shell,
                    command.clone(),
                    ApprovalRequest::Shell { command: &command },
                )
                .await;
            match decision {
                ApprovalDecision::RunOnce => {}
                ApprovalDecision::Always => {
                    if let Err(e) = allowlist.add(&command) {
                        tracing::warn!(error = %e, "cannot persist allow rule");
                    }
                }
                _ => {
                    return ToolOutcome::err(format!(
                        "the user denied running `{command}`; do not run it again this turn"
                    ));
                }
            }
        }
        self.tools
            .call(&call.name, call.arguments.clone(), self.ctx)
            .await
    }

    async fn write(&mut self, call: &ToolCall) -> ToolOutcome {
        let proposal = match self
            .tools
            .propose(&call.name, call.arguments.clone(), self.ctx)
        {
            Ok(p) => p,
            Err(outcome) => return outcome,
        };
        let paths: Vec<String> = proposal.files.iter().map(|f| f.path.clone()).collect();
        (self.emit)(Event::Diff {
            call_id: call.id.clone(),
            diff: proposal.full_diff(),
        });
        let decision = self
            .ask(
                &call.id,
                ApprovalKind::Edit,
                paths.join(", "),
                ApprovalRequest::Edit {
                    proposal: &proposal,
                },
            )
            .await;
        if decision != ApprovalDecision::Accept {
            return ToolOutcome {
                ok: false,
                output: json!({"rejected": true, "files": paths}),
                error: Some("the user rejected these edits; nothing was written".into()),
            };
        }
        let sandbox = match self.ctx.sandbox() {
            Ok(s) => s,
            Err(e) => return ToolOutcome::err(e.to_string()),
        };
        match north_tools::edit::apply(&proposal, &sandbox) {
            Ok(applied) => {
                tracing::info!(files = ?paths, "edits applied");
                let output = self
                    .tools
                    .get(&call.name)
                    .and_then(|t| t.as_write().map(|w| w.applied_output(&applied)))
                    .unwrap_or_else(|| applied.to_json());
                ToolOutcome::ok(output)
            }
            Err(e) => ToolOutcome::err(format!(
                "applying the edits failed, nothing was written: {e}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::host_of;

    #[test]
    fn hosts_are_extracted_strictly() {
        assert_eq!(
            host_of("https://Example.com/a?b").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            host_of("http://user:pw@evil.com:8080/x").as_deref(),
            Some("evil.com")
        );
        assert_eq!(host_of("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(host_of("no-scheme"), None);
    }
}
