//! Tool dispatch: one call under the approval its tool's policy needs.

use north_policy::net::NetAccess;
use north_protocol::{ApprovalPolicy, Capability, GrantRequest, State, ToolCall, ToolOutcome};
use north_tools::{Registry, ToolContext};
use serde_json::Value;

use super::Emit;
use crate::approval::Approver;
use crate::store::Tracer;

/// Everything a call needs from the agent, borrowed for its duration.
pub(crate) struct CallEnv<'a> {
    pub tools: &'a Registry,
    /// This call's own context (by value): what the call sets on it ends
    /// with the call.
    pub ctx: ToolContext,
    pub approver: &'a dyn Approver,
    pub state: &'a mut State,
    pub tracer: &'a Tracer,
    pub trust: &'a crate::trust::ProjectTrust,
    /// Command rules from the project's other settings (Claude Code's
    /// `allow`, trust-filtered already).
    pub shell_allow: &'a north_policy::AllowRules,
    /// What never runs and what always asks.
    pub shell_limits: &'a north_policy::LimitRules,
    /// What the read tools may not open, and what edits may not touch or
    /// apply to unasked.
    pub path_rules: &'a north_policy::PathRules,
    pub session_rules: &'a mut north_policy::AllowRules,
    pub emit: &'a Emit<'a>,
    /// The permission mode.
    pub mode: north_protocol::PermissionMode,
    /// The shell outside the OS sandbox, when commands run inside it: a
    /// command the sandbox stopped may run there once, if the user says so.
    pub escalation: Option<std::sync::Arc<dyn north_tools::services::Shell>>,
    /// The shell a line the policy verified as only reading runs in,
    /// unasked (None: such lines ask as others do).
    pub read_only_shell: Option<std::sync::Arc<dyn north_tools::services::Shell>>,
    /// The user typed this command (`!cmd`): it is approved line by line
    /// already. The policy's refusals and the OS sandbox still apply.
    pub typed_by_user: bool,
    /// A `PreToolUse` hook's `allow` or `ask` for this call.
    pub hook_permission: Option<crate::hooks::HookPermission>,
    /// The user's hooks, for `Notification` while North waits.
    pub hooks: Option<&'a std::sync::Arc<crate::hooks::Hooks>>,
    /// What a hook is told about the session.
    pub hook_session: crate::hooks::HookSession,
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
        match tool.spec().approval {
            ApprovalPolicy::None => {
                if let Some(refused) = self
                    .path_rules
                    .read_refusal(&self.ctx.root, &call.arguments)
                {
                    return ToolOutcome::err(refused);
                }
                let mut outcome = tool.call(call.arguments.clone(), &self.ctx).await;
                self.path_rules
                    .filter_reads(&self.ctx.root, &mut outcome.output);
                outcome
            }
            ApprovalPolicy::Shell => self.shell(call).await,
            ApprovalPolicy::Write => self.write(call).await,
            ApprovalPolicy::External => self.external(&tool, call).await,
            ApprovalPolicy::Net => {
                if let Some(url) = call.arguments.get("url").and_then(Value::as_str)
                    && let Err(refused) = self.net(call, url).await
                {
                    return refused;
                }
                // A tool that meets a host no grant covers (a redirect to
                // another domain, a private address, a search backend) says
                // which; the user is asked about it and the call runs again.
                let mut asked = Vec::new();
                loop {
                    let outcome = tool.call(call.arguments.clone(), &self.ctx).await;
                    let wanted = GrantRequest::of(&outcome)
                        .filter(|g| matches!(g.capability, Capability::NetHost(_)));
                    let Some(request) =
                        wanted.filter(|g| !asked.contains(&g.capability) && asked.len() < 3)
                    else {
                        return outcome;
                    };
                    asked.push(request.capability.clone());
                    let cap = request.capability;
                    let reason = request.why;
                    if !self.capability(&call.id, &cap, &reason).await {
                        return ToolOutcome::err(format!(
                            "{reason}; the user did not grant `{cap}`{}",
                            if self.approver.is_interactive() {
                                String::new()
                            } else {
                                format!(" (a headless run allows it with --grant {cap})")
                            }
                        ));
                    }
                }
            }
        }
    }
}

impl CallEnv<'_> {
    /// Asks for `url`'s host unless a grant covers it. The host asked about
    /// is the host fetched: both come from [`north_tools::net::url_host`].
    async fn net(&mut self, call: &ToolCall, url: &str) -> Result<(), ToolOutcome> {
        let host = north_tools::net::url_host(url).map_err(|e| ToolOutcome::err(e.to_string()))?;
        let access = NetAccess {
            capabilities: &self.ctx.capabilities,
            allowlist: self.ctx.net_allowlist.as_deref(),
            private_needs_grant: false,
        };
        if access.check(&host).is_ok() && !self.hook_asks() {
            return Ok(());
        }
        let cap = Capability::NetHost(host.clone());
        if self
            .capability(&call.id, &cap, &format!("{} {url}", call.name))
            .await
        {
            return Ok(());
        }
        Err(ToolOutcome::err(format!(
            "network access to {host} was not granted by the user (capability `{cap}`){}; do not retry without asking",
            if self.approver.is_interactive() {
                String::new()
            } else {
                format!("; a headless run allows it with --grant {cap} (or --grant net)")
            }
        )))
    }
}

impl super::Agent {
    /// The registry that has `name`: the mode's tools, else every tool of
    /// the session (a plan-mode session replays the edits of earlier turns).
    fn registry_of(&self, name: &str) -> &Registry {
        if self.services.tools.get(name).is_none() && self.modes.full_tools.get(name).is_some() {
            &self.modes.full_tools
        } else {
            &self.services.tools
        }
    }

    /// How `call` reads, as its tool describes it: kind and intent line.
    pub fn describe(&self, call: &ToolCall) -> (north_protocol::ToolKind, String) {
        if self.is_agent_call(call) {
            let agent = call
                .arguments
                .get("agent")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let prompt: String = call
                .arguments
                .get("prompt")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect();
            return (
                north_protocol::ToolKind::Other,
                format!("Agent `{agent}`: {prompt}"),
            );
        }
        if let Some(tool) = self.skill_tool.as_ref().filter(|_| call.name == "skill") {
            let line = tool
                .intent(&call.arguments)
                .unwrap_or_else(|| "Loading a skill".into());
            return (tool.kind(), line);
        }
        self.registry_of(&call.name)
            .describe(&call.name, &call.arguments)
    }

    /// Tells the front end a call is about to run: its kind and intent line.
    pub(super) fn announce(&self, call: &ToolCall, emit: &super::Emit<'_>) {
        let (kind, line) = self.describe(call);
        emit(north_protocol::Event::ToolIntent {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            line,
            kind,
        });
    }

    /// Every tool of the session, whatever the mode: what a replay of its
    /// history describes calls with.
    pub fn all_tools(&self) -> Registry {
        self.modes.full_tools.clone()
    }

    /// The session's tools as a front end needs them: to describe calls.
    pub fn describer(&self) -> Describer {
        Describer(self.all_tools())
    }

    /// One line about the result of a call of tool `name`.
    pub fn summarize(&self, name: &str, outcome: &ToolOutcome) -> String {
        self.registry_of(name).summary(name, outcome)
    }
}

/// Describes calls and results by their tools, for a front end that shows
/// a stored conversation (and must not know tools by name).
#[derive(Debug, Clone)]
pub struct Describer(Registry);

impl Describer {
    /// North's built-in tools of every profile.
    pub fn builtin() -> Describer {
        Describer(north_tools::all_tools())
    }

    /// The kind and intent line of `call`.
    pub fn describe(&self, call: &ToolCall) -> (north_protocol::ToolKind, String) {
        self.0.describe(&call.name, &call.arguments)
    }

    /// One line about the result of a call of tool `name`.
    pub fn summary(&self, name: &str, outcome: &ToolOutcome) -> String {
        self.0.summary(name, outcome)
    }
}
