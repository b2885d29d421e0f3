//! The one run outside the sandbox a person allows stays that one run: a
//! tool that panics while running unconfined leaves the session's shell
//! confined, so the next command runs in the sandbox again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use north_agent::{AgentOptions, ApprovalRequest, Approver, ModeKit};
use north_protocol::{ApprovalDecision, ApprovalPolicy, PermissionMode, ToolOutcome, ToolSpec};
use north_tools::os_sandbox::SandboxPolicy;
use north_tools::shell::{Naming, ShellManager, ShellResult, sandbox_denial};
use north_tools::{Registry, Spawner, Tool, ToolContext};
use serde_json::{Value, json};
use support::{agent_with_tools, scripted};

/// A person at North's terminal who allows every run outside the sandbox.
struct Person;

impl Approver for Person {
    fn decide<'a>(
        &'a self,
        _call_id: &'a str,
        _request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async { ApprovalDecision::RunOnce })
    }

    fn may_leave_sandbox(&self) -> bool {
        true
    }
}

/// A stand-in for `shell_run`: inside the sandbox its command is stopped
/// writing `outside`; outside the sandbox it has a bug and panics. It
/// records, call by call, whether its shell was confined.
struct Shell {
    outside: std::path::PathBuf,
    confined: Arc<Mutex<Vec<bool>>>,
}

impl Tool for Shell {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "shell_run".into(),
            description: "Run a command.".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
            approval: ApprovalPolicy::Shell,
        }
    }

    fn call<'a>(&'a self, _args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let confined = ctx.shell.spawner().is_confined();
            self.confined.lock().unwrap().push(confined);
            assert!(confined, "a bug in the tool, only when unconfined");
            // As the real shell tools do: the result typed, the denial judged
            // against the policy the shell runs under.
            let stderr = format!(
                "touch: cannot touch '{}': Permission denied\n",
                self.outside.display()
            );
            let denied = ctx
                .shell
                .spawner()
                .policy()
                .and_then(|p| sandbox_denial(Some(1), &stderr, p));
            let result = ShellResult {
                stdout: "OUTPUT-BEFORE-THE-DENIAL\n".into(),
                stderr,
                exit_code: Some(1),
                sandbox_denied: denied.map(|d| d.to_string()),
                ..ShellResult::default()
            };
            ToolOutcome::ok(result.to_json(Naming::Camel))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_an_escalated_run_leaves_the_next_command_confined() {
    let project = support::project();
    let root = project.path().canonicalize().unwrap();
    // Outside the project and the temp dir: a write the sandbox refuses
    // and the user could make.
    let tmp = std::env::temp_dir();
    let base = [
        Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(std::path::PathBuf::from),
    ]
    .into_iter()
    .flatten()
    .find(|p| !p.starts_with(&tmp) && std::fs::create_dir_all(p).is_ok())
    .expect("a writable directory outside the temp dir");
    let scratch = tempfile::tempdir_in(base).unwrap();
    let outside = scratch.path().join("outside.txt");
    let confined = Arc::new(Mutex::new(Vec::new()));
    let mut tools = Registry::new();
    tools.register(Arc::new(Shell {
        outside: outside.clone(),
        confined: confined.clone(),
    }));
    let rec = root.join("requests.jsonl");
    let backend = scripted(
        json!([
            {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "touch it"}}]},
            {"tool_calls": [{"id": "c2", "name": "shell_run", "args": {"command": "touch it again"}}]},
            {"text": "done"}
        ]),
        &rec,
    );
    let mut run = agent_with_tools(
        &root,
        backend,
        Arc::new(Person),
        AgentOptions::default(),
        None,
        tools,
    );
    // `auto`: commands run in a sandboxed shell (never started here: the
    // stand-in only looks at which shell it was given).
    let sandboxed = Spawner::sandboxed("north".into(), SandboxPolicy::new(root.clone()));
    run.agent.set_mode_kit(ModeKit {
        plan_tools: Registry::new(),
        sandboxed_shell: Some(Arc::new(ShellManager::with_spawner(
            root.clone(),
            sandboxed,
        ))),
        outside_shell: Some(Arc::new(ShellManager::new(root.clone()))),
        read_only_shell: None,
    });
    run.agent.set_mode(PermissionMode::Auto).unwrap();
    run.turn("go").await;
    let seen = confined.lock().unwrap().clone();
    // Confined, escalated (the panic), confined again, escalated again.
    assert_eq!(seen.first(), Some(&true), "{seen:?}");
    assert_eq!(
        seen.get(1),
        Some(&false),
        "the person's one run outside: {seen:?}"
    );
    assert_eq!(
        seen.get(2),
        Some(&true),
        "after the panic the next command ran outside the sandbox: {seen:?}"
    );
    // The model was told the call failed, not left waiting.
    let sent = std::fs::read_to_string(&rec).unwrap();
    assert!(sent.contains("failed unexpectedly"), "{sent}");
}
