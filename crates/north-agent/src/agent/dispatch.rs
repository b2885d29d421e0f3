//! Tool dispatch: one call under the approval its tool's policy needs.

use north_protocol::{ApprovalPolicy, Capability, State, ToolCall, ToolOutcome};
use north_tools::policy::net::NetAccess;
use north_tools::{Registry, ToolContext};
use serde_json::Value;

use super::Emit;
use crate::approval::Approver;
use crate::store::Tracer;

/// Everything a call needs from the agent, borrowed for its duration.
pub(crate) struct CallEnv<'a> {
    pub tools: &'a Registry,
    pub ctx: &'a mut ToolContext,
    pub approver: &'a dyn Approver,
    pub state: &'a mut State,
    pub tracer: &'a Tracer,
    pub trust: &'a crate::trust::ProjectTrust,
    pub session_rules: &'a mut north_tools::policy::AllowRules,
    pub emit: &'a Emit<'a>,
    /// The permission mode.
    pub mode: north_protocol::PermissionMode,
    /// The shell outside the OS sandbox, when commands run inside it: a
    /// command the sandbox stopped may run there once, if the user says so.
    pub escalation: Option<std::sync::Arc<north_tools::shell::ShellManager>>,
    /// The user typed this command (`!cmd`): it is approved line by line
    /// already. The policy's refusals and the OS sandbox still apply.
    pub typed_by_user: bool,
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
    /// Runs `call` with whatever approval its tool needs. A tool that
    /// panics (a bug) fails this call, with what is known, instead of
    /// ending the session: the loop, the checkpoint and the other tools
    /// carry on.
    pub(crate) async fn run(&mut self, call: &ToolCall) -> ToolOutcome {
        let name = call.name.clone();
        match crate::recovery::guarded(self.run_checked(call)).await {
            Ok(outcome) => outcome,
            Err(panic) => {
                let what = crate::recovery::panic_message(&*panic);
                tracing::error!(severity = "recoverable", tool = %name, panic = %what, "tool panicked; the call failed and the session goes on");
                ToolOutcome::err(format!(
                    "the tool `{name}` failed unexpectedly (a bug in North: {what}); what it did before failing is unknown, so check before retrying"
                ))
            }
        }
    }

    async fn run_checked(&mut self, call: &ToolCall) -> ToolOutcome {
        let Some(tool) = self.tools.get(&call.name) else {
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
            ApprovalPolicy::External => self.external(&tool, call).await,
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
                        let cap = Capability::NetHost(host.clone());
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
