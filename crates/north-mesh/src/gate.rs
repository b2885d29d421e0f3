//! The policy enforcement layer: every mesh tool is wrapped so the policy is
//! checked before the tool runs (and, for `bash`, before anyone is asked to
//! approve it), and every decision is audited in the session trace and the
//! log.
//!
//! Enforcement points (spec "Policy Engine", plus the closed security gaps):
//! - `bash`: the command line parses with the strict parser and every simple
//!   command starts with an allowed program (no first-word-only check: `;`,
//!   `&&`, `|`, `$()`, backticks, redirections are refused); arguments naming
//!   existing paths must resolve inside the working directory; then the
//!   command needs approval like `north exec` (`.north/allowlist.json`,
//!   `--allow-shell`/`--yes`). It runs with the policy's timeout, output cut
//!   and CPU/memory quotas, in a shell whose environment has no secrets.
//! - `write`: `write_enabled`, a sandboxed path, content within
//!   `max_file_size`; then the reviewed edit pipeline (`--approve-edits`).
//! - `read`: a sandboxed path and a size within `max_file_size`.
//! - custom tools: the [`ToolRule`] they were registered with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use north_policy::orchestrate::{self, Before, CallFacts, Decider, HookWord, PolicyWord, Reply};
use north_policy::{
    AllowRules, ApprovedCommand, AskReason, MeshPolicy, PolicyDenial, ShellPolicy,
    Verdict as ShellVerdict,
};
use north_protocol::{ApprovalDecision, ApprovalPolicy, ToolOutcome, ToolSpec, TraceKind};
use north_tools::allowlist::ProjectAllowlist;
use north_tools::edit::{Applied, Proposal};
use north_tools::{Tool, ToolContext, WriteTool};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use north_agent::approval::{ApprovalRequest, Approver};
use north_agent::intent::trace_args;
use north_agent::store::Tracer;

/// A custom tool's rule refused a call; the message is what the model sees
/// (and what the audit records).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RuleRefusal {
    /// Why the call was refused, e.g. "Command denied by policy: …".
    pub message: String,
}

impl RuleRefusal {
    /// A refusal with this message.
    pub fn new(message: impl Into<String>) -> Self {
        RuleRefusal {
            message: message.into(),
        }
    }
}

impl From<&str> for RuleRefusal {
    fn from(message: &str) -> Self {
        RuleRefusal::new(message)
    }
}

impl From<String> for RuleRefusal {
    fn from(message: String) -> Self {
        RuleRefusal::new(message)
    }
}

/// The policy check of a custom tool: `Err(refusal)` refuses the call.
///
/// Implemented for closures `Fn(&Value, &MeshPolicy, &ToolContext) ->
/// Result<(), RuleRefusal>`; see [`super`] for how to register a tool with one.
pub trait ToolRule: Send + Sync {
    /// Checks one call's arguments before the tool runs.
    fn check(
        &self,
        args: &Value,
        policy: &MeshPolicy,
        ctx: &ToolContext,
    ) -> Result<(), RuleRefusal>;
}

impl<F> ToolRule for F
where
    F: Fn(&Value, &MeshPolicy, &ToolContext) -> Result<(), RuleRefusal> + Send + Sync,
{
    fn check(
        &self,
        args: &Value,
        policy: &MeshPolicy,
        ctx: &ToolContext,
    ) -> Result<(), RuleRefusal> {
        self(args, policy, ctx)
    }
}

/// Allowed or denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The call went on to the tool.
    Allow,
    /// The call was refused; the tool did not run.
    Deny,
}

/// One audited decision about one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// The tool.
    pub tool: String,
    /// What the call was about: the command or the path.
    pub subject: String,
    /// The decision.
    pub verdict: Verdict,
    /// Which check decided: `command`, `paths`, `approval`, `write_enabled`,
    /// `max_file_size`, `sandbox` or `rule` (a custom tool's).
    pub check: String,
    /// Why it was refused (the message the model sees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The audit of one run: each decision goes to the session trace (kind
/// `policy`) and the log (target `north::audit`) as it is made.
pub struct Audit {
    tracer: Option<Tracer>,
    entries: Mutex<Vec<AuditEntry>>,
    /// Not yet handed to the event stream.
    pending: Mutex<Vec<AuditEntry>>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("entries", &self.entries())
            .finish_non_exhaustive()
    }
}

impl Audit {
    /// An audit writing to `tracer` (or only to the log when `None`).
    pub fn new(tracer: Option<Tracer>) -> Self {
        Audit {
            tracer,
            entries: Mutex::default(),
            pending: Mutex::default(),
        }
    }

    /// Records one decision.
    pub fn record(&self, entry: AuditEntry) {
        match entry.verdict {
            Verdict::Allow => tracing::info!(
                target: "north::audit",
                tool = %entry.tool, subject = %entry.subject, check = %entry.check,
                "policy decision: allow"
            ),
            Verdict::Deny => tracing::info!(
                target: "north::audit",
                tool = %entry.tool, subject = %entry.subject, check = %entry.check,
                reason = entry.reason.as_deref().unwrap_or(""),
                "policy decision: deny"
            ),
        }
        if let Some(t) = &self.tracer {
            t.record(
                TraceKind::Policy,
                serde_json::to_value(&entry).unwrap_or(Value::Null),
            );
        }
        if let Ok(mut p) = self.pending.lock() {
            p.push(entry.clone());
        }
        if let Ok(mut e) = self.entries.lock() {
            e.push(entry);
        }
    }

    /// Every decision so far.
    pub fn entries(&self) -> Vec<AuditEntry> {
        self.entries.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Decisions not taken yet (for the event stream).
    pub(crate) fn take_pending(&self) -> Vec<AuditEntry> {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// How many calls were refused.
    pub fn denied(&self) -> usize {
        self.entries
            .lock()
            .map(|e| e.iter().filter(|e| e.verdict == Verdict::Deny).count())
            .unwrap_or(0)
    }
}

/// Which checks a gated tool gets.
#[derive(Clone)]
pub(crate) enum Kind {
    Read,
    Write,
    Bash,
    Custom(Arc<dyn ToolRule>),
}

/// What every gated tool of a run shares.
pub(crate) struct Shared {
    pub policy: MeshPolicy,
    pub trust: north_agent::trust::ProjectTrust,
    pub audit: Arc<Audit>,
    pub approver: Arc<dyn Approver>,
    pub calls: AtomicU64,
}

/// A tool behind the policy.
pub(crate) struct Gated {
    pub inner: Arc<dyn Tool>,
    pub kind: Kind,
    pub shared: Arc<Shared>,
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A refusal: which check and the message the model sees.
type Denied = (&'static str, String);

impl Gated {
    fn name(&self) -> String {
        self.inner.spec().name
    }

    /// Audits the outcome of a call's checks (one entry per call).
    fn audit(&self, subject: &str, result: Result<&'static str, Denied>) -> Result<(), String> {
        let (verdict, check, reason) = match result {
            Ok(check) => (Verdict::Allow, check, None),
            Err((check, reason)) => (Verdict::Deny, check, Some(reason)),
        };
        self.shared.audit.record(AuditEntry {
            tool: self.name(),
            subject: subject.chars().take(300).collect(),
            verdict,
            check: check.to_owned(),
            reason: reason.clone(),
        });
        match reason {
            None => Ok(()),
            Some(r) => Err(r),
        }
    }

    fn check_read(&self, args: &Value, ctx: &ToolContext) -> Result<&'static str, Denied> {
        // Missing or mistyped arguments are the tool's to report.
        let Some(path) = str_arg(args, "path") else {
            return Ok("sandbox");
        };
        let resolved = ctx
            .sandbox()
            .and_then(|s| s.resolve_existing(path))
            .map_err(|e| ("sandbox", e.to_string()))?;
        let size = std::fs::metadata(&resolved.abs)
            .map(|m| m.len())
            .unwrap_or(0);
        self.shared
            .policy
            .check_file_size(size)
            .map_err(|e| ("max_file_size", e.to_string()))?;
        Ok("max_file_size")
    }

    fn check_write(&self, args: &Value, ctx: &ToolContext) -> Result<&'static str, Denied> {
        let policy = &self.shared.policy;
        policy
            .check_write()
            .map_err(|e| ("write_enabled", e.to_string()))?;
        if let Some(path) = str_arg(args, "path") {
            ctx.sandbox()
                .and_then(|s| s.resolve_for_write(path))
                .map_err(|e| ("sandbox", e.to_string()))?;
        }
        if let Some(content) = str_arg(args, "content") {
            policy
                .check_file_size(content.len() as u64)
                .map_err(|e| ("max_file_size", e.to_string()))?;
        }
        Ok("write_enabled")
    }

    /// `bash` under the one command policy (mesh profile): programs from
    /// `policy.json`, shell syntax and paths checked, then the approval.
    async fn check_bash(
        &self,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<(&'static str, Option<ApprovedCommand>), Denied> {
        let Some(cmd) = str_arg(args, "cmd") else {
            // The tool reports the missing field; nothing can run.
            return Ok(("command", None));
        };
        let mut allowlist = ProjectAllowlist::load(&ctx.root)
            .map_err(|e| ("approval", format!("cannot read the allowlist: {e}")))?;
        let mut rules = if self.shared.trust.applies() {
            allowlist.rules()
        } else {
            AllowRules::default()
        };
        // Claude Code's rules apply here as everywhere: its deny and ask
        // always, its allow in a trusted project.
        let (allow, limits) =
            north_runtime::permissions::project_shell_rules(&ctx.root, self.shared.trust.applies());
        rules.exact.extend(allow.exact);
        rules.prefixes.extend(allow.prefixes);
        let root = ctx.root.canonicalize().unwrap_or_else(|_| ctx.root.clone());
        let policy = ShellPolicy::mesh(
            &root,
            &self.shared.policy,
            rules,
            self.shared.approver.auto_approves_shell(),
        )
        .limited(limits);
        // The one sequence: the mesh has no modes and no one in person; its
        // approver (flags) answers what the policy asks about.
        let verdict = policy.decide(cmd, None);
        let facts = CallFacts {
            mode: north_protocol::PermissionMode::Ask,
            decider: Decider::Unattended,
            hook: HookWord::Silent,
            policy: PolicyWord::from(&verdict),
            typed_by_user: false,
            sandboxed: false,
            read_only: false,
        };
        let reason = match (orchestrate::before(&facts), verdict) {
            (Before::Run(consent), _) => {
                return Ok(("approval", policy.approve(cmd, None, consent).ok()));
            }
            (_, ShellVerdict::Deny(denial @ PolicyDenial::Paths(_))) => {
                return Err(("paths", denial.to_string()));
            }
            (_, ShellVerdict::Deny(denial)) => return Err(("command", denial.to_string())),
            (_, ShellVerdict::Ask(reason)) => reason,
            (_, ShellVerdict::Allow(_)) => AskReason::Hook("asked".into()),
        };
        let n = self.shared.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("mesh-bash-{n}");
        let decision = self
            .shared
            .approver
            .decide(
                &id,
                ApprovalRequest::Shell {
                    command: cmd,
                    reason: &reason,
                    prefix: None,
                },
            )
            .await;
        let reply = match decision {
            ApprovalDecision::RunOnce => Reply::Yes,
            ApprovalDecision::Always => {
                match allowlist.add(cmd) {
                    Ok(_) => self.shared.trust.after_own_write(&ctx.root),
                    Err(e) => tracing::warn!(error = %e, "cannot persist allow rule"),
                }
                Reply::Yes
            }
            _ => Reply::No,
        };
        match orchestrate::answered(reply) {
            Before::Run(consent) => Ok(("approval", policy.approve(cmd, None, consent).ok())),
            _ => Err((
                "approval",
                format!(
                    "Command not approved: `{cmd}` passes the policy but was not approved (pass --allow-shell or --yes, or add it to .north/allowlist.json in a trusted project); do not run it again"
                ),
            )),
        }
    }

    fn subject(&self, args: &Value) -> String {
        match &self.kind {
            Kind::Bash => str_arg(args, "cmd").unwrap_or_default().to_owned(),
            Kind::Read | Kind::Write => str_arg(args, "path").unwrap_or_default().to_owned(),
            Kind::Custom(_) => trace_args(args).to_string(),
        }
    }

    fn check_custom(
        &self,
        rule: &Arc<dyn ToolRule>,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<&'static str, Denied> {
        rule.check(args, &self.shared.policy, ctx)
            .map(|()| "rule")
            .map_err(|e| ("rule", e.message))
    }
}

fn denied(reason: String) -> ToolOutcome {
    ToolOutcome {
        ok: false,
        output: json!({"denied": true}),
        error: Some(reason),
    }
}

impl Tool for Gated {
    fn spec(&self) -> ToolSpec {
        let mut spec = self.inner.spec();
        if matches!(self.kind, Kind::Bash) {
            // The gate asks for approval itself, after the policy: a
            // command the policy refuses is never put to anyone.
            spec.approval = ApprovalPolicy::None;
        }
        spec
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let mut approved = None;
            let checked = match &self.kind {
                Kind::Read => self.check_read(&args, ctx),
                Kind::Write => self.check_write(&args, ctx),
                Kind::Bash => self.check_bash(&args, ctx).await.map(|(what, a)| {
                    approved = a;
                    what
                }),
                Kind::Custom(rule) => self.check_custom(rule, &args, ctx),
            };
            match (self.audit(&self.subject(&args), checked), approved) {
                // The command runs from the approval the policy made.
                (Ok(()), Some(approved)) => {
                    let mut ctx = ctx.clone();
                    ctx.approved = Some(approved);
                    self.inner.call(args, &ctx).await
                }
                (Ok(()), None) => self.inner.call(args, ctx).await,
                (Err(reason), _) => denied(reason),
            }
        })
    }

    fn kind(&self) -> north_protocol::ToolKind {
        self.inner.kind()
    }

    fn intent(&self, args: &Value) -> Option<String> {
        self.inner.intent(args)
    }

    fn summary(&self, outcome: &ToolOutcome) -> Option<String> {
        self.inner.summary(outcome)
    }

    fn as_write(&self) -> Option<&dyn WriteTool> {
        match self.kind {
            Kind::Write | Kind::Custom(_) if self.inner.as_write().is_some() => Some(self),
            _ => None,
        }
    }
}

impl WriteTool for Gated {
    fn propose(&self, args: Value, ctx: &ToolContext) -> Result<Proposal, ToolOutcome> {
        let checked = match &self.kind {
            Kind::Custom(rule) => self.check_custom(rule, &args, ctx),
            _ => self.check_write(&args, ctx),
        };
        self.audit(&self.subject(&args), checked).map_err(denied)?;
        match self.inner.as_write() {
            Some(w) => w.propose(args, ctx),
            None => Err(ToolOutcome::err(format!(
                "tool `{}` is not a write tool",
                self.name()
            ))),
        }
    }

    fn applied_output(&self, proposal: &Proposal, applied: &Applied) -> Value {
        self.inner
            .as_write()
            .map(|w| w.applied_output(proposal, applied))
            .unwrap_or_else(|| applied.to_json())
    }
}

/// A source of tools found at run time (an MCP hub's servers), each tool
/// behind the policy's audit like every mesh tool. Such tools carry their
/// own approval policy (the approver decides, as in every front end).
pub(crate) struct GatedSource {
    pub inner: Arc<dyn north_tools::ToolSource>,
    pub shared: Arc<Shared>,
}

impl north_tools::ToolSource for GatedSource {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.specs()
    }

    fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let inner = self.inner.get(name)?;
        let audited_only: Arc<dyn ToolRule> =
            Arc::new(|_: &Value, _: &MeshPolicy, _: &ToolContext| Ok(()));
        Some(Arc::new(Gated {
            inner,
            kind: Kind::Custom(audited_only),
            shared: self.shared.clone(),
        }))
    }
}
