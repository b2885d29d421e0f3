//! Approvals: shell commands through the project allowlist or the user,
//! edits as reviewed proposals applied atomically, capabilities asked for
//! and recorded in the session state.

use north_policy::orchestrate::{
    self, After, Attempt, Before, CallFacts, Decider, HookWord, PolicyWord, Reply,
};
use north_policy::{AllowRules, AskReason, Consent, ShellPolicy, Verdict};
use north_protocol::{
    ApprovalDecision, ApprovalKind, Capability, Event, ToolCall, ToolOutcome, TraceKind,
};
use north_tools::allowlist::ProjectAllowlist;
use north_tools::describe::command_of;
use north_tools::shell::ShellResult;
use serde_json::json;

use super::denial::with_denial;

use super::dispatch::CallEnv;
use crate::approval::ApprovalRequest;
use crate::hooks::HookPermission;
use north_protocol::notes::{deny_capability, grant_capability, request_capability};

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
        let decision = match self.permission_hooks(call_id, &request).await {
            Some(decision) => decision,
            None => {
                if self.approver.is_interactive() {
                    super::hooked::notify(
                        self.hooks,
                        &self.hook_session,
                        format!("North needs your permission: {subject}"),
                    );
                }
                self.approver.decide(call_id, request).await
            }
        };
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

    /// `PermissionRequest`: the user's hooks may answer a question before
    /// the user is asked (never a run outside the sandbox).
    async fn permission_hooks(
        &self,
        call_id: &str,
        request: &ApprovalRequest<'_>,
    ) -> Option<ApprovalDecision> {
        let hooks = self
            .hooks
            .filter(|h| h.set().has(north_protocol::HookEvent::PermissionRequest))?;
        let (tool, input, allow, deny) = match request {
            ApprovalRequest::Shell {
                reason: AskReason::SandboxDenied(_),
                ..
            } => {
                return None;
            }
            ApprovalRequest::Shell { command, .. } => (
                "shell_run",
                json!({"command": command}),
                ApprovalDecision::RunOnce,
                ApprovalDecision::Deny,
            ),
            ApprovalRequest::Edit { files, .. } => (
                "edit_replace_exact",
                json!({
                    "file_path": files.first().map(|f| f.path.clone()).unwrap_or_default(),
                    "paths": files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
                }),
                ApprovalDecision::Accept,
                ApprovalDecision::Reject,
            ),
            ApprovalRequest::Capability { capability, reason } => (
                "capability",
                json!({"capability": capability.to_string(), "reason": reason}),
                ApprovalDecision::Grant,
                ApprovalDecision::Deny,
            ),
            ApprovalRequest::Host { host, port } => (
                "network",
                json!({"host": host, "port": port}),
                ApprovalDecision::RunOnce,
                ApprovalDecision::Deny,
            ),
        };
        let mut fields = serde_json::Map::new();
        fields.insert("tool_name".into(), json!(tool));
        fields.insert("tool_input".into(), input);
        fields.insert("tool_use_id".into(), json!(call_id));
        let verdict = hooks
            .fire(
                north_protocol::HookEvent::PermissionRequest,
                Some(tool),
                &self.hook_session,
                fields,
                self.emit,
            )
            .await;
        let (allowed, message) = verdict.answer?;
        tracing::info!(call_id, allowed, %message, "a PermissionRequest hook answered");
        Some(if allowed { allow } else { deny })
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
        tool.call(call.arguments.clone(), &self.ctx).await
    }

    /// A shell command through the one sequence
    /// ([`north_policy::orchestrate`]): the hook's word, the command
    /// policy, the mode, then whoever decides; the attempt inside the
    /// sandbox; a run outside it only when a person at the terminal says so.
    pub(super) async fn shell(&mut self, call: &ToolCall) -> ToolOutcome {
        let Some(command) = command_of(&call.arguments).map(str::to_string) else {
            // Let the tool report the missing field in its own words.
            return self
                .tools
                .call(&call.name, call.arguments.clone(), &self.ctx)
                .await;
        };
        let (policy, mut allowlist) = match self.shell_policy() {
            Ok(p) => p,
            Err(outcome) => return outcome,
        };
        let cwd = call
            .arguments
            .get("cwd")
            .and_then(serde_json::Value::as_str)
            .map(|dir| {
                north_tools::sandbox::physical_path(policy.root(), std::path::Path::new(dir))
            })
            .transpose()
            .unwrap_or(None);
        let verdict = policy.decide(&command, cwd.as_deref());
        let facts = self.facts(call, &command, cwd.as_deref(), &policy, &verdict);
        let consent = match (orchestrate::before(&facts), verdict) {
            (Before::Run(consent), verdict) => {
                self.record_unasked(&call.id, &command, consent, &verdict);
                consent
            }
            (_, Verdict::Deny(denial)) => return ToolOutcome::err(denial.to_string()),
            (_, verdict) => {
                let reason = match verdict {
                    Verdict::Ask(reason) => reason,
                    _ => AskReason::Hook("a PreToolUse hook asked".into()),
                };
                match self
                    .ask_shell(call, &command, &reason, &mut allowlist)
                    .await
                {
                    Ok(consent) => consent,
                    Err(refused) => return refused,
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
        // On this call's own context: the approval (and, for a line that
        // only reads, the read-only shell) ends with the call.
        if consent == Consent::ReadOnly
            && let Some(shell) = self.read_only_shell.clone()
        {
            self.ctx.shell = shell;
        }
        self.ctx.approved = Some(approved);
        let outcome = self
            .tools
            .call(&call.name, call.arguments.clone(), &self.ctx)
            .await;
        self.after_attempt(call, &command, facts.decider, outcome)
            .await
    }

    /// What follows a command's attempt: its result, or — the sandbox's
    /// typed denial in it — its output and the denial together, or (a
    /// person at North's own terminal) the offer to run it once outside.
    async fn after_attempt(
        &mut self,
        call: &ToolCall,
        command: &str,
        decider: Decider,
        outcome: ToolOutcome,
    ) -> ToolOutcome {
        let evidence = ShellResult::read(&outcome.output).and_then(|r| r.sandbox_denied);
        let attempt = match evidence {
            Some(_) => Attempt::Stopped,
            None => Attempt::Ran,
        };
        match (
            orchestrate::after(decider, attempt, self.escalation.is_some()),
            self.escalation.clone(),
            evidence,
        ) {
            (After::OfferOutside, Some(plain), Some(evidence)) => {
                self.escalate(call, command, outcome, plain, evidence).await
            }
            (After::Done, ..) | (_, _, None) => outcome,
            (_, _, Some(evidence)) => with_denial(
                outcome,
                &evidence,
                "no run outside the sandbox is offered here (only a person at North's terminal may allow one)",
            ),
        }
    }

    /// The assistant's command policy for this project (the trusted
    /// project's rules and this session's), and the allowlist "Always"
    /// answers are kept in.
    fn shell_policy(&self) -> Result<(ShellPolicy, ProjectAllowlist), ToolOutcome> {
        let allowlist = ProjectAllowlist::load(&self.ctx.root)
            .map_err(|e| ToolOutcome::err(format!("cannot read the allowlist: {e}")))?;
        let mut rules = if self.trust.applies() {
            allowlist.rules()
        } else {
            AllowRules::default()
        };
        rules.exact.extend(self.shell_allow.exact.iter().cloned());
        rules
            .prefixes
            .extend(self.shell_allow.prefixes.iter().cloned());
        rules.exact.extend(self.session_rules.exact.iter().cloned());
        rules
            .prefixes
            .extend(self.session_rules.prefixes.iter().cloned());
        let root = self
            .ctx
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.ctx.root.clone());
        let policy = ShellPolicy::assistant(&root, rules, self.approver.auto_approves_shell())
            .limited(self.shell_limits.clone());
        Ok((policy, allowlist))
    }

    /// What the orchestrator decides this call from.
    fn facts(
        &self,
        call: &ToolCall,
        command: &str,
        cwd: Option<&std::path::Path>,
        policy: &ShellPolicy,
        verdict: &Verdict,
    ) -> CallFacts {
        // A background job runs on in its shell after the call: it asks, so
        // every job lives where `/ps` and the session's end reach it.
        let background = call.arguments.get("background") == Some(&serde_json::Value::Bool(true));
        CallFacts {
            mode: self.mode,
            decider: self.decider(),
            hook: self.hook_word(),
            policy: PolicyWord::from(verdict),
            typed_by_user: self.typed_by_user,
            sandboxed: self.escalation.is_some(),
            read_only: self.read_only_shell.is_some()
                && matches!(verdict, Verdict::Ask(_))
                && !background
                && policy.read_only(command, cwd),
        }
    }

    /// Who decides here: a person at North's terminal, one in an editor, or
    /// nobody in person (flags).
    fn decider(&self) -> Decider {
        if self.approver.may_leave_sandbox() {
            Decider::Terminal
        } else if self.approver.is_interactive() {
            Decider::Editor
        } else {
            Decider::Unattended
        }
    }

    /// The hook's word on this call.
    fn hook_word(&self) -> HookWord {
        match self.hook_permission {
            Some(HookPermission::Allow(_)) => HookWord::Allow,
            Some(HookPermission::Ask(_)) => HookWord::Ask,
            None => HookWord::Silent,
        }
    }

    /// Records in the trace why a command ran without asking.
    fn record_unasked(&self, call_id: &str, command: &str, consent: Consent, verdict: &Verdict) {
        let by = match (consent, verdict) {
            (Consent::Hook, _) => "a PreToolUse hook".to_string(),
            (Consent::SandboxedMode, _) => "mode auto (sandboxed)".to_string(),
            (Consent::TypedByPerson, _) => "typed by the user".to_string(),
            (Consent::ReadOnly, _) => "read-only (the project read-only to it)".to_string(),
            (_, Verdict::Allow(by)) => format!("{by:?}"),
            (consent, _) => format!("{consent:?}"),
        };
        let mut entry = json!({"call_id": call_id, "kind": ApprovalKind::Shell, "subject": command, "decision": "auto", "by": by});
        if let Verdict::Ask(reason) = verdict {
            entry["reason"] = json!(reason.to_string());
        }
        self.tracer.record(TraceKind::Approval, entry);
    }

    /// Asks the decider about `command`; an "Always" is remembered as the
    /// policy offers it. The refusal is what the model is told.
    async fn ask_shell(
        &mut self,
        call: &ToolCall,
        command: &str,
        reason: &AskReason,
        allowlist: &mut ProjectAllowlist,
    ) -> Result<Consent, ToolOutcome> {
        // Decided here, never taken from the front end: only what the
        // policy would offer can be stored.
        let prefix = north_policy::suggested_prefix(command);
        let decision = self
            .ask(
                &call.id,
                ApprovalKind::Shell,
                command.to_string(),
                ApprovalRequest::Shell {
                    command,
                    reason,
                    prefix: prefix.as_deref(),
                },
            )
            .await;
        let reply = match decision {
            ApprovalDecision::RunOnce => Reply::Yes,
            ApprovalDecision::Always => {
                self.session_rules.exact.push(command.to_string());
                match allowlist.add(command) {
                    Ok(_) => self.trust.after_own_write(&self.ctx.root),
                    Err(e) => tracing::warn!(error = %e, "cannot persist allow rule"),
                }
                Reply::Yes
            }
            ApprovalDecision::AlwaysPrefix => {
                if let Some(prefix) = prefix {
                    self.session_rules.prefixes.push(prefix.clone());
                    match allowlist.add_prefix(&prefix) {
                        Ok(_) => self.trust.after_own_write(&self.ctx.root),
                        Err(e) => tracing::warn!(error = %e, "cannot persist prefix rule"),
                    }
                }
                Reply::Yes
            }
            _ => Reply::No,
        };
        match orchestrate::answered(reply) {
            Before::Run(consent) => Ok(consent),
            _ => Err(self.shell_refused(call, command, reason)),
        }
    }

    /// What the model is told when the decider said no.
    fn shell_refused(&self, call: &ToolCall, command: &str, reason: &AskReason) -> ToolOutcome {
        if self.approver.is_interactive() {
            return ToolOutcome::err(match self.approver.feedback(&call.id) {
                Some(why) => format!("the user denied running `{command}` and said: {why}"),
                None => {
                    format!("the user denied running `{command}`; do not run it again this turn")
                }
            });
        }
        ToolOutcome::err(format!(
            "{}; do not retry it",
            crate::approval::shell_refusal(command, reason, self.approver.auto_approves_shell())
        ))
    }

    /// A command the sandbox stopped: the user may let it run once outside
    /// the sandbox. Never without asking; never remembered.
    async fn escalate(
        &mut self,
        call: &ToolCall,
        command: &str,
        confined: ToolOutcome,
        plain: std::sync::Arc<dyn north_tools::services::Shell>,
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
            .propose(&call.name, call.arguments.clone(), &self.ctx)
        {
            Ok(p) => p,
            Err(outcome) => return outcome,
        };
        self.review_and_apply(call, proposal, false).await
    }

    /// Asks for `proposal` (its `files` as the reviewer sees them) where
    /// the mode, rules and hooks say (always when `always_ask`: conflict
    /// markers are never written unreviewed), and writes what the user
    /// kept. The diff was shown already.
    pub(super) async fn decide_and_apply(
        &mut self,
        call: &ToolCall,
        proposal: north_tools::edit::Proposal,
        files: Vec<north_protocol::FileDiff>,
        always_ask: bool,
    ) -> ToolOutcome {
        let paths: Vec<String> = proposal.files.iter().map(|f| f.path.clone()).collect();
        if let Some((path, rule)) = paths.iter().find_map(|p| {
            self.path_rules
                .edit_denied(&self.ctx.root, p)
                .map(|r| (p.clone(), r.to_string()))
        }) {
            return ToolOutcome::err(format!(
                "not written: your rule `Edit({rule})` keeps North from editing `{path}`; nothing was written"
            ));
        }
        // What decides trust is never written unreviewed, whatever the mode.
        let touches_trust = paths.iter().any(|p| crate::trust::is_trust_file(p));
        let unasked = self.mode.applies_edits()
            || self.hook_allows()
            || self.path_rules.edits_allowed(&self.ctx.root, &paths);
        let decision = if unasked && !touches_trust && !self.hook_asks() && !always_ask {
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
                    files: &files,
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
        self.apply_accepted(call, proposal).await
    }

    /// Writes an accepted proposal, narrowed to the hunks the user kept,
    /// through the front end's writer or North's atomic apply; the model
    /// is told which hunks were refused.
    async fn apply_accepted(
        &mut self,
        call: &ToolCall,
        proposal: north_tools::edit::Proposal,
    ) -> ToolOutcome {
        let sandbox = match self.ctx.sandbox() {
            Ok(s) => s,
            Err(e) => return ToolOutcome::err(e.to_string()),
        };
        let (proposal, refused, changed) = match self.reviewed(call, proposal, &sandbox) {
            Ok(r) => r,
            Err(outcome) => return outcome,
        };
        if proposal.files.is_empty() {
            let why = if changed.is_empty() {
                "the user refused every hunk of these edits; nothing was written"
            } else {
                "the user edited these changes back to the files as they are; nothing was written"
            };
            return ToolOutcome {
                ok: false,
                output: json!({"rejected": true, "refusedHunks": refused, "userChanges": changed}),
                error: Some(why.into()),
            };
        }
        let mut outcome = if let Some(writer) = self.ctx.file_writer.clone() {
            write_through(&*writer, &self.ctx.root, &proposal).await
        } else {
            self.apply_here(call, &proposal, &sandbox)
        };
        if outcome.ok
            && !refused.is_empty()
            && let Some(out) = outcome.output.as_object_mut()
        {
            out.insert("refusedHunks".into(), json!(refused));
            out.insert(
                "note".into(),
                json!(format!(
                    "The user kept the other hunks and refused these, which were not applied: {}",
                    refused.join("; ")
                )),
            );
        }
        if outcome.ok
            && !changed.is_empty()
            && let Some(out) = outcome.output.as_object_mut()
        {
            out.insert("userChanges".into(), json!(changed));
            out.insert(
                "note".into(),
                json!("The user edited your changes before accepting: what was written differs from your proposal by `userChanges` (diffs from your version to theirs). Build on their version."),
            );
        }
        outcome
    }

    /// The proposal as the user left it: the files they edited by hand
    /// (which win), else without the hunks they refused; with the refused
    /// hunks' headers and the diffs of their edits, for the model.
    #[allow(clippy::type_complexity, reason = "a private step's three results")]
    fn reviewed(
        &self,
        call: &ToolCall,
        proposal: north_tools::edit::Proposal,
        sandbox: &north_tools::Sandbox,
    ) -> Result<(north_tools::edit::Proposal, Vec<String>, Vec<String>), ToolOutcome> {
        let failed = |e: north_tools::edit::ApplyError| {
            ToolOutcome::err(format!(
                "applying the edits as the user left them failed, nothing was written: {e}"
            ))
        };
        let edited = self.approver.edited(&call.id);
        let refused = self.approver.refused_hunks(&call.id);
        if !edited.is_empty() {
            let e =
                north_tools::edit::with_contents(&proposal, sandbox, &edited).map_err(failed)?;
            return Ok((e.proposal, Vec::new(), e.changes));
        }
        if refused.is_empty() {
            return Ok((proposal, Vec::new(), Vec::new()));
        }
        let n = north_tools::edit::keep_hunks(&proposal, sandbox, &refused).map_err(failed)?;
        Ok((n.proposal, n.refused, Vec::new()))
    }

    /// North's atomic apply of `proposal`, reported as the tool reports it.
    fn apply_here(
        &self,
        call: &ToolCall,
        proposal: &north_tools::edit::Proposal,
        sandbox: &north_tools::Sandbox,
    ) -> ToolOutcome {
        match north_tools::edit::apply(proposal, sandbox) {
            Ok(applied) => {
                let paths: Vec<&str> = proposal.files.iter().map(|f| f.path.as_str()).collect();
                tracing::info!(files = ?paths, "edits applied");
                let output = self
                    .tools
                    .get(&call.name)
                    .and_then(|t| t.as_write().map(|w| w.applied_output(proposal, &applied)))
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
