//! Approvals: shell commands through the project allowlist or the user,
//! edits as reviewed proposals applied atomically, capabilities asked for
//! and recorded in the session state.

use north_protocol::{
    ApprovalDecision, ApprovalKind, Capability, Event, PermissionMode, ToolCall, ToolOutcome,
    TraceKind,
};
use north_tools::describe::command_of;
use north_tools::policy::{AllowRules, AskReason, Consent, ProjectAllowlist, ShellPolicy, Verdict};
use serde_json::json;

use super::denial::{sandbox_denial, with_denial};

use super::dispatch::CallEnv;
use crate::approval::ApprovalRequest;
use crate::hooks::HookPermission;
use crate::notes::{deny_capability, grant_capability, request_capability};

impl CallEnv<'_> {
    pub(super) async fn ask(
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
        if self.approver.is_interactive() {
            super::hooked::notify(
                self.hooks,
                &self.hook_session,
                format!("North needs your permission: {subject}"),
            );
        }
        let decision = self.approver.decide(call_id, request).await;
        (self.emit)(Event::ApprovalDecided {
            call_id: call_id.into(),
            decision,
        });
        self.tracer.record(
            TraceKind::Approval,
            json!({"call_id": call_id, "kind": kind, "subject": subject, "decision": decision}),
        );
        tracing::info!(call_id, ?kind, %subject, ?decision, "approval");
        decision
    }

    /// Asks the user for `cap` (recording the request in State). Returns
    /// whether it is granted now.
    pub(crate) async fn capability(
        &mut self,
        call_id: &str,
        cap: &Capability,
        reason: &str,
    ) -> bool {
        match &self.hook_permission {
            // For this call only: a hook's word is never remembered.
            Some(HookPermission::Allow(_)) => return true,
            Some(HookPermission::Ask(_)) => {}
            None if self.state.capabilities_granted.contains(cap) => return true,
            None => {}
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
        if matches!(decision, ApprovalDecision::Grant | ApprovalDecision::Always) {
            grant_capability(self.state, cap);
            self.ctx.capabilities = self.state.capabilities_granted.clone();
            // "Always" for an MCP tool is a rule in the project's allowlist.
            if decision == ApprovalDecision::Always
                && let Capability::Tool(name) = cap
            {
                match ProjectAllowlist::load(&self.ctx.root).and_then(|mut a| a.add_tool(name)) {
                    Ok(_) => self.trust.after_own_write(&self.ctx.root),
                    Err(e) => tracing::warn!(error = %e, "cannot persist tool rule"),
                }
            }
            true
        } else {
            deny_capability(self.state, cap);
            false
        }
    }

    /// An external (MCP) tool: it runs code North cannot see, so every call
    /// is asked for unless a grant (`tool:<name>`, `--grant`, an earlier
    /// "grant" this session) or a trusted project's `allowedTools` rule
    /// covers it.
    pub(super) async fn external(
        &mut self,
        tool: &std::sync::Arc<dyn north_tools::Tool>,
        call: &ToolCall,
    ) -> ToolOutcome {
        let name = call.name.as_str();
        let granted = self
            .state
            .capabilities_granted
            .iter()
            .any(|c| c.covers_tool(name));
        let ruled = self.trust.applies()
            && ProjectAllowlist::load(&self.ctx.root).is_ok_and(|a| a.allows_tool(name));
        if (!granted && !ruled) || self.hook_asks() {
            let args = serde_json::to_string(&call.arguments).unwrap_or_default();
            let args: String = args.chars().take(300).collect();
            let cap = Capability::Tool(name.to_string());
            if !self
                .capability(&call.id, &cap, &format!("{name} {args}"))
                .await
            {
                return ToolOutcome::err(format!(
                    "the user did not allow `{name}` (capability `{cap}`); do not retry it without asking"
                ));
            }
        }
        tool.call(call.arguments.clone(), self.ctx).await
    }

    /// A shell command under the one command policy: run what it allows,
    /// put the rest to the approver, and remember an "Always".
    pub(super) async fn shell(&mut self, call: &ToolCall) -> ToolOutcome {
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
        let mut rules = if self.trust.applies() {
            AllowRules::from_allowlist(&allowlist)
        } else {
            AllowRules::default()
        };
        rules.exact.extend(self.session_rules.exact.iter().cloned());
        rules
            .prefixes
            .extend(self.session_rules.prefixes.iter().cloned());
        let root = self
            .ctx
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.ctx.root.clone());
        let policy = ShellPolicy::assistant(&root, rules, self.approver.auto_approves_shell());
        let cwd = call
            .arguments
            .get("cwd")
            .and_then(serde_json::Value::as_str)
            .map(|dir| north_tools::sandbox::physical_path(&root, std::path::Path::new(dir)))
            .transpose()
            .unwrap_or(None);
        let mut verdict = policy.decide(&command, cwd.as_deref());
        // A hook that asks makes even an allowed command wait for the user.
        if let (Some(HookPermission::Ask(why)), Verdict::Allow(_)) =
            (&self.hook_permission, &verdict)
        {
            verdict = Verdict::Ask(AskReason::Hook(why.clone()));
        }
        let hook_asks = self.hook_asks();
        let consent = match verdict {
            Verdict::Ask(reason) if self.hook_allows() => {
                self.tracer.record(
                    TraceKind::Approval,
                    json!({"call_id": call.id, "kind": ApprovalKind::Shell, "subject": command, "decision": "auto", "by": "a PreToolUse hook", "reason": reason.to_string()}),
                );
                Consent::Hook
            }
            // In `auto` the shell itself is inside the OS sandbox: what the
            // policy would ask about runs there without asking.
            Verdict::Ask(reason)
                if self.mode == PermissionMode::Auto && self.escalation.is_some() && !hook_asks =>
            {
                self.tracer.record(
                    TraceKind::Approval,
                    json!({"call_id": call.id, "kind": ApprovalKind::Shell, "subject": command, "decision": "auto", "by": "mode auto (sandboxed)", "reason": reason.to_string()}),
                );
                Consent::SandboxedMode
            }
            Verdict::Ask(reason) if self.typed_by_user && !hook_asks => {
                self.tracer.record(
                    TraceKind::Approval,
                    json!({"call_id": call.id, "kind": ApprovalKind::Shell, "subject": command, "decision": "auto", "by": "typed by the user", "reason": reason.to_string()}),
                );
                Consent::TypedByPerson
            }
            Verdict::Allow(by) => {
                self.tracer.record(
                    TraceKind::Approval,
                    json!({"call_id": call.id, "kind": ApprovalKind::Shell, "subject": command, "decision": "auto", "by": format!("{by:?}")}),
                );
                Consent::None
            }
            Verdict::Deny(denial) => return ToolOutcome::err(denial.to_string()),
            Verdict::Ask(reason) => {
                // Decided here, never taken from the front end: only what
                // the policy would offer can be stored.
                let prefix = north_tools::policy::suggested_prefix(&command);
                let decision = self
                    .ask(
                        &call.id,
                        ApprovalKind::Shell,
                        command.clone(),
                        ApprovalRequest::Shell {
                            command: &command,
                            reason: &reason,
                            prefix: prefix.as_deref(),
                        },
                    )
                    .await;
                match decision {
                    ApprovalDecision::RunOnce => Consent::Person,
                    ApprovalDecision::Always => {
                        self.session_rules.exact.push(command.clone());
                        match allowlist.add(&command) {
                            Ok(_) => self.trust.after_own_write(&self.ctx.root),
                            Err(e) => tracing::warn!(error = %e, "cannot persist allow rule"),
                        }
                        Consent::Person
                    }
                    ApprovalDecision::AlwaysPrefix => {
                        if let Some(prefix) = prefix {
                            self.session_rules.prefixes.push(prefix.clone());
                            match allowlist.add_prefix(&prefix) {
                                Ok(_) => self.trust.after_own_write(&self.ctx.root),
                                Err(e) => tracing::warn!(error = %e, "cannot persist prefix rule"),
                            }
                        }
                        Consent::Person
                    }
                    _ if self.approver.is_interactive() => {
                        return ToolOutcome::err(match self.approver.feedback(&call.id) {
                            Some(why) => {
                                format!("the user denied running `{command}` and said: {why}")
                            }
                            None => format!(
                                "the user denied running `{command}`; do not run it again this turn"
                            ),
                        });
                    }
                    _ => {
                        return ToolOutcome::err(format!(
                            "{}; do not retry it",
                            crate::approval::shell_refusal(
                                &command,
                                &reason,
                                self.approver.auto_approves_shell()
                            )
                        ));
                    }
                }
            }
        };
        // The one value the shell tool runs from; the policy makes it.
        let approved = match policy.approve(&command, cwd.as_deref(), consent) {
            Ok(approved) => approved,
            Err(Verdict::Deny(denial)) => return ToolOutcome::err(denial.to_string()),
            Err(verdict) => {
                return ToolOutcome::err(format!(
                    "`{command}` was not run: the command policy did not allow it ({verdict:?})"
                ));
            }
        };
        self.ctx.approved = Some(approved);
        let outcome = self
            .tools
            .call(&call.name, call.arguments.clone(), self.ctx)
            .await;
        // When the sandbox's policy is what stopped the command, the model
        // gets its output and the denial together; only a person at North's
        // own terminal is offered to leave the sandbox.
        let policy = self.ctx.shell.spawner().policy().cloned();
        let evidence = policy.and_then(|p| sandbox_denial(&outcome, &p));
        let outcome = match (self.escalation.clone(), evidence) {
            (Some(plain), Some(evidence)) if self.approver.may_leave_sandbox() => {
                self.escalate(call, &command, outcome, plain, evidence)
                    .await
            }
            (_, Some(evidence)) => with_denial(
                outcome,
                &evidence,
                "no run outside the sandbox is offered here (only a person at North's terminal may allow one)",
            ),
            (_, None) => outcome,
        };
        self.ctx.approved = None;
        outcome
    }

    /// A command the sandbox stopped: the user may let it run once outside
    /// the sandbox. Never without asking; never remembered.
    async fn escalate(
        &mut self,
        call: &ToolCall,
        command: &str,
        confined: ToolOutcome,
        plain: std::sync::Arc<north_tools::shell::ShellManager>,
        evidence: String,
    ) -> ToolOutcome {
        let reason = AskReason::SandboxDenied(evidence.clone());
        let decision = self
            .ask(
                &call.id,
                ApprovalKind::Shell,
                command.to_string(),
                ApprovalRequest::Shell {
                    command,
                    reason: &reason,
                    prefix: None,
                },
            )
            .await;
        if !matches!(
            decision,
            ApprovalDecision::RunOnce | ApprovalDecision::Always
        ) {
            return with_denial(
                confined,
                &evidence,
                "the user did not allow running it outside the sandbox; do not retry it unchanged",
            );
        }
        // The unconfined shell goes into a context of this call alone: the
        // session's context keeps the sandboxed one whatever happens during
        // the call (a panic included).
        let mut outside = self.ctx.clone();
        outside.shell = plain;
        let mut outcome = self
            .tools
            .call(&call.name, call.arguments.clone(), &outside)
            .await;
        if let Some(out) = outcome.output.as_object_mut() {
            out.insert("unsandboxed".into(), json!(true));
        }
        outcome
    }

    pub(super) async fn write(&mut self, call: &ToolCall) -> ToolOutcome {
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
        // What decides trust is never written unreviewed, whatever the mode.
        let touches_trust = paths.iter().any(|p| crate::trust::is_trust_file(p));
        let unasked = self.mode.applies_edits() || self.hook_allows();
        let decision = if unasked && !touches_trust && !self.hook_asks() {
            self.tracer.record(
                TraceKind::Approval,
                json!({"call_id": call.id, "kind": ApprovalKind::Edit, "subject": paths.join(", "), "decision": "auto", "by": format!("mode {}", self.mode)}),
            );
            ApprovalDecision::Accept
        } else {
            self.ask(
                &call.id,
                ApprovalKind::Edit,
                paths.join(", "),
                ApprovalRequest::Edit {
                    proposal: &proposal,
                    files: &proposal.file_diffs(),
                },
            )
            .await
        };
        if decision != ApprovalDecision::Accept {
            let error = match self.approver.feedback(&call.id) {
                Some(why) => {
                    format!("the user rejected these edits (nothing was written) and said: {why}")
                }
                None => "the user rejected these edits; nothing was written".into(),
            };
            return ToolOutcome {
                ok: false,
                output: json!({"rejected": true, "files": paths}),
                error: Some(error),
            };
        }
        if let Some(writer) = self.ctx.file_writer.clone() {
            return write_through(&*writer, &self.ctx.root, &proposal).await;
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
                    .and_then(|t| t.as_write().map(|w| w.applied_output(&proposal, &applied)))
                    .unwrap_or_else(|| applied.to_json());
                ToolOutcome::ok(output)
            }
            Err(e) => ToolOutcome::err(format!(
                "applying the edits failed, nothing was written: {e}"
            )),
        }
    }
}

impl CallEnv<'_> {
    /// Whether a `PreToolUse` hook allowed this call.
    pub(super) fn hook_allows(&self) -> bool {
        matches!(self.hook_permission, Some(HookPermission::Allow(_)))
    }

    /// Whether a `PreToolUse` hook asked for the user's word on this call.
    pub(super) fn hook_asks(&self) -> bool {
        matches!(self.hook_permission, Some(HookPermission::Ask(_)))
    }
}

/// Accepted edits written through a front end's [`FileWriter`] (an
/// editor's buffers), file by file, in the proposal's order.
async fn write_through(
    writer: &dyn north_tools::FileWriter,
    root: &std::path::Path,
    proposal: &north_tools::edit::Proposal,
) -> ToolOutcome {
    let mut written = Vec::new();
    for f in &proposal.files {
        if let Err(e) = writer.write(&root.join(&f.path), &f.new_content).await {
            return ToolOutcome::err(format!(
                "the editor did not write {}: {e}; written before it: {}",
                f.path,
                if written.is_empty() {
                    "nothing".to_string()
                } else {
                    written.join(", ")
                }
            ));
        }
        written.push(f.path.clone());
    }
    tracing::info!(files = ?written, "edits written through the editor");
    ToolOutcome::ok(json!({"applied": true, "files": written, "through": "editor"}))
}
