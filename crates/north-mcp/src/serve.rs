//! `north mcp serve`: North's tools for any MCP client, over stdio.
//!
//! Read and search tools run as they are. Edit tools never write: they
//! return North's proposal (diffs by file) with a `proposal_id`, and
//! `apply_edit` applies it atomically, refusing if a file changed since the
//! proposal (stale check). `shell_run` runs only what North's command
//! policy allows without a person — an allow rule of a trusted project, or
//! a verified command under `--allow-shell` — inside the OS sandbox; the
//! rest is refused with the reason, since there is no one to ask.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use north_policy::orchestrate::{self, Before, PolicyWord};
use north_policy::{AllowRules, ShellPolicy, Verdict};
use north_protocol::{ApprovalPolicy, ToolOutcome};
use north_tools::edit::{self, Proposal};
use north_tools::{Registry, ToolContext};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The tool that applies a proposal.
pub(crate) const APPLY_TOOL: &str = "apply_edit";

/// How `north mcp serve` runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The canonical project root every tool is confined to.
    pub root: PathBuf,
    /// How commands start (the OS sandbox under the command policy, where
    /// the platform has one).
    pub spawner: north_tools::Spawner,
    /// What runs around every call (the user's hooks), if anything.
    pub gate: Option<std::sync::Arc<dyn north_tools::CallGate>>,
    /// Allow rules of a trusted project (empty otherwise).
    pub rules: AllowRules,
    /// Commands that never run and commands that always ask (nobody is
    /// asked here, so they do not run).
    pub limits: north_policy::LimitRules,
    /// Files the read tools may not open (the user's `Read(…)` rules).
    pub path_rules: north_policy::PathRules,
    /// `--allow-shell`: run commands North can verify stay in the project.
    pub allow_shell: bool,
}

/// Proposals waiting for `apply_edit`, oldest dropped past this many.
const MAX_PROPOSALS: usize = 64;

struct NorthServer {
    tools: Registry,
    ctx: ToolContext,
    policy: ShellPolicy,
    proposals: Mutex<HashMap<String, (String, Proposal)>>,
    next: AtomicU64,
    gate: Option<std::sync::Arc<dyn north_tools::CallGate>>,
    path_rules: north_policy::PathRules,
}

fn text_result(outcome: ToolOutcome) -> CallToolResult {
    let text = if outcome.ok {
        serde_json::to_string_pretty(&outcome.output).unwrap_or_default()
    } else {
        let mut text = outcome.error.clone().unwrap_or_else(|| "failed".into());
        if !outcome.output.is_null() {
            text.push('\n');
            text.push_str(&outcome.output.to_string());
        }
        text
    };
    let mut result = serde_json::from_value::<CallToolResult>(json!({
        "content": [{ "type": "text", "text": text }],
        "isError": !outcome.ok,
    }))
    .unwrap_or_else(|_| CallToolResult::success(Vec::new()));
    if outcome.ok && outcome.output.is_object() {
        result.structured_content = Some(outcome.output);
    }
    result
}

impl NorthServer {
    fn list(&self) -> Vec<Value> {
        let mut tools = Vec::new();
        for spec in self.tools.specs() {
            let description = match spec.approval {
                ApprovalPolicy::Write => format!(
                    "{} Nothing is written: the result is a proposal (diffs) with a `proposal_id`; call `{APPLY_TOOL}` with it to write the files atomically.",
                    spec.description
                ),
                ApprovalPolicy::Shell => format!(
                    "{} Runs inside North's OS sandbox, and only commands North's policy allows without a person (the project's allow rules, or verified commands when the server was started with --allow-shell); others are refused with the reason.",
                    spec.description
                ),
                _ => spec.description,
            };
            tools.push(json!({
                "name": spec.name,
                "description": description,
                "inputSchema": spec.input_schema,
            }));
        }
        tools.push(json!({
            "name": APPLY_TOOL,
            "description": "Writes a proposal returned by an edit tool: all its files at once, atomically, and only if none of them changed since the proposal was made.",
            "inputSchema": {
                "type": "object",
                "properties": { "proposal_id": { "type": "string" } },
                "required": ["proposal_id"]
            }
        }));
        tools
    }

    async fn call(&self, name: &str, args: Value, ctx: &ToolContext) -> ToolOutcome {
        if name == APPLY_TOOL {
            return self.apply(&args, ctx);
        }
        let Some(tool) = self.tools.get(name) else {
            return ToolOutcome::err(format!(
                "unknown tool `{name}`; tools: {}, {APPLY_TOOL}",
                self.tools.names().join(", ")
            ));
        };
        match tool.spec().approval {
            ApprovalPolicy::Write => match self.tools.propose(name, args, ctx) {
                Err(failed) => failed,
                Ok(proposal) => {
                    let id = format!("p{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
                    let mut out = proposal.to_model_json();
                    if let Value::Object(map) = &mut out {
                        map.insert("proposal_id".into(), Value::String(id.clone()));
                    }
                    if let Ok(mut proposals) = self.proposals.lock() {
                        if proposals.len() >= MAX_PROPOSALS
                            && let Some(oldest) = proposals
                                .keys()
                                .min_by_key(|k| k[1..].parse::<u64>().unwrap_or(0))
                                .cloned()
                        {
                            proposals.remove(&oldest);
                        }
                        proposals.insert(id, (name.to_string(), proposal));
                    }
                    ToolOutcome::ok(out)
                }
            },
            ApprovalPolicy::Shell => {
                let Some(command) = north_tools::describe::command_of(&args) else {
                    return tool.call(args, ctx).await;
                };
                let cwd = args
                    .get("cwd")
                    .and_then(Value::as_str)
                    .map(|c| ctx.root.join(c));
                // Nobody to ask: the one sequence, unattended.
                let verdict = self.policy.decide(command, cwd.as_deref());
                let step = orchestrate::unattended(PolicyWord::from(&verdict));
                let approved = match step {
                    Before::Run(consent) => self.policy.approve(command, cwd.as_deref(), consent),
                    Before::Ask | Before::Refuse(_) => Err(verdict),
                };
                match approved {
                    Ok(approved) => {
                        let mut ctx = ctx.for_call(ctx.capabilities.clone());
                        ctx.approved = Some(approved);
                        tool.call(args, &ctx).await
                    }
                    Err(Verdict::Ask(reason)) => ToolOutcome::err(format!(
                        "not run: `{command}`: {reason}. `north mcp serve` has no one to ask: add the command to .north/allowlist.json in a trusted project, or start the server with --allow-shell (which runs only commands North can verify stay in the project)"
                    )),
                    Err(Verdict::Deny(denial)) => {
                        ToolOutcome::err(format!("not run: `{command}`: {denial}"))
                    }
                    Err(Verdict::Allow(_)) => ToolOutcome::err(format!("not run: `{command}`")),
                }
            }
            ApprovalPolicy::None | ApprovalPolicy::Net | ApprovalPolicy::External => {
                // The user's read rules hold here as in a session.
                if let Some(refused) = self.path_rules.read_refusal(&ctx.root, &args) {
                    return ToolOutcome::err(refused);
                }
                let mut outcome = tool.call(args, ctx).await;
                self.path_rules.filter_reads(&ctx.root, &mut outcome.output);
                outcome
            }
        }
    }

    fn apply(&self, args: &Value, ctx: &ToolContext) -> ToolOutcome {
        let Some(id) = args.get("proposal_id").and_then(Value::as_str) else {
            return ToolOutcome::err(
                "`proposal_id` (a string from an edit tool's result) is required",
            );
        };
        let entry = self.proposals.lock().ok().and_then(|mut p| p.remove(id));
        let Some((tool, proposal)) = entry else {
            return ToolOutcome::err(format!(
                "no proposal `{id}`: it was applied already, or never made (proposals live as long as this server)"
            ));
        };
        let sandbox = match ctx.sandbox() {
            Ok(s) => s,
            Err(e) => return ToolOutcome::err(e.to_string()),
        };
        match edit::apply(&proposal, &sandbox) {
            Ok(applied) => match self
                .tools
                .get(&tool)
                .and_then(|t| t.as_write().map(|w| w.applied_output(&proposal, &applied)))
            {
                Some(out) => ToolOutcome::ok(out),
                None => ToolOutcome::ok(applied.to_json()),
            },
            Err(e) => ToolOutcome::err(format!(
                "not applied: {e}; nothing was written (propose the edit again)"
            )),
        }
    }
}

impl ServerHandler for NorthServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({ "tools": {} })).unwrap_or_default();
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new("north", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(format!(
            "North's tools for the project at {}: search and read freely; edit tools return proposals that {APPLY_TOOL} writes atomically; shell_run runs sandboxed under North's command policy.",
            self.ctx.root.display()
        ));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({ "tools": self.list() }))
            .map_err(|e| ErrorData::internal_error(format!("cannot list tools: {e}"), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        let mut ctx = self.ctx.clone();
        ctx.cancel = context.ct.clone();
        let id = format!("mcp-{}", self.next.fetch_add(1, Ordering::Relaxed));
        if let Some(gate) = &self.gate
            && let Err(reason) = gate.before(&request.name, &args, &id).await
        {
            return Ok(text_result(ToolOutcome::err(format!(
                "a PreToolUse hook blocked this call, so it did not run: {reason}"
            )))
            .into());
        }
        let mut outcome = self.call(&request.name, args.clone(), &ctx).await;
        if let Some(gate) = &self.gate {
            gate.after(&request.name, &args, &id, &mut outcome).await;
        }
        Ok(text_result(outcome).into())
    }
}

/// Serves North's tools on stdin/stdout until the client disconnects.
pub async fn serve(opts: ServeOptions) -> std::io::Result<()> {
    let mut ctx = ToolContext::for_project(opts.root.clone());
    if opts.spawner.is_confined() {
        ctx.shell = std::sync::Arc::new(north_tools::shell::ShellManager::with_spawner(
            opts.root.clone(),
            opts.spawner.clone(),
        ));
    }
    let server = NorthServer {
        tools: north_tools::north_tools(),
        policy: ShellPolicy::assistant(&opts.root, opts.rules.clone(), opts.allow_shell)
            .limited(opts.limits.clone()),
        ctx,
        proposals: Mutex::new(HashMap::new()),
        next: AtomicU64::new(0),
        gate: opts.gate.clone(),
        path_rules: opts.path_rules.clone(),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialize failed: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("MCP server stopped: {e}")))?;
    Ok(())
}
