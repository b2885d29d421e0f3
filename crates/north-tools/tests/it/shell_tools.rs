//! The shell tool profiles: `shell_run` (North), `shell.exec`
//! (runtime-contracts) and `bash` (mesh), all over the one session in the
//! tool context.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use north_policy::{MeshPolicy, PolicyPreset};
use north_protocol::{ApprovalPolicy, ToolOutcome};
use north_tools::shell::tools::{Bash, ShellExec, ShellRun};
use north_tools::{Tool, ToolContext};
use serde_json::json;

/// A command as the policy approves it when a person said yes (these tests
/// drive the shell itself, below the gate).
fn cmd(line: &str) -> north_policy::ApprovedCommand {
    north_policy::ShellPolicy::assistant(
        std::path::Path::new("/"),
        north_policy::AllowRules::default(),
        false,
    )
    .approve(line, None, north_policy::Consent::Person)
    .expect("the assistant profile never denies")
}

/// Calls a shell tool the way every gate does: the command judged by the
/// policy (a person said yes), its approval in the context.
async fn gated(tool: &dyn Tool, args: serde_json::Value, ctx: &ToolContext) -> ToolOutcome {
    let line = args
        .get("command")
        .or_else(|| args.get("cmd"))
        .and_then(serde_json::Value::as_str)
        .map(cmd);
    let ctx = ToolContext {
        approved: line,
        ..ctx.clone()
    };
    tool.call(args, &ctx).await
}

fn context() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/file.txt"), "content\n").unwrap();
    let ctx = ToolContext::new(dir.path().canonicalize().unwrap());
    (dir, ctx)
}

#[test]
fn specs_are_compact_and_declare_shell_approval() {
    let tools: Vec<Box<dyn Tool>> = vec![
        Box::new(ShellRun::default()),
        Box::new(ShellExec::default()),
        Box::new(Bash::default()),
    ];
    let names: Vec<_> = tools.iter().map(|t| t.spec().name).collect();
    assert_eq!(names, ["shell_run", "shell.exec", "bash"]);
    for tool in &tools {
        let spec = tool.spec();
        assert_eq!(spec.approval, ApprovalPolicy::Shell);
        let size = serde_json::to_string(&spec).unwrap().len();
        assert!(size < 700, "{} spec is {size} bytes", spec.name);
    }
    insta::assert_json_snapshot!("shell_tool_schemas", tools.iter().map(|t| {
        let spec = t.spec();
        json!({"name": spec.name, "description": spec.description, "input_schema": spec.input_schema})
    }).collect::<Vec<_>>());
}

#[tokio::test]
async fn shell_run_returns_the_spec_shape() {
    let (_dir, ctx) = context();
    let out = gated(&ShellRun::new(), json!({"command": "cat file.txt; echo oops >&2; exit_code=4; (exit $exit_code)", "cwd": "sub", "timeoutMs": null}), &ctx)
        .await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["stdout"], "content\n");
    assert_eq!(out.output["stderr"], "oops\n");
    assert_eq!(out.output["exitCode"], 4);
    assert!(out.output["durationMs"].is_u64());
    assert_eq!(out.output["timedOut"], false);
    assert_eq!(out.output["truncated"], false);
}

#[tokio::test]
async fn shell_run_keeps_exports_but_starts_each_command_in_the_root() {
    let (_dir, ctx) = context();
    let tool = ShellRun::new();
    gated(&tool, json!({"command": "cd sub && export STEP=two"}), &ctx).await;
    let out = gated(&tool, json!({"command": "ls; echo $STEP"}), &ctx).await;
    assert_eq!(out.output["stdout"], "sub\ntwo\n");
    let out = gated(&tool, json!({"command": "ls", "cwd": "sub"}), &ctx).await;
    assert_eq!(out.output["stdout"], "file.txt\n");
}

#[tokio::test]
async fn shell_run_timeout_is_a_failure_with_partial_output() {
    let (_dir, ctx) = context();
    let tool = ShellRun::new();
    let out = gated(
        &tool,
        json!({"command": "echo partial; sleep 30", "timeoutMs": 300}),
        &ctx,
    )
    .await;
    assert!(!out.ok);
    assert_eq!(out.output["timedOut"], true);
    // Whatever the terminal showed after the interrupt (bash prints a
    // newline for a job killed by Ctrl-C) may follow.
    assert!(
        out.output["stdout"]
            .as_str()
            .unwrap()
            .starts_with("partial\n")
    );
    assert!(out.error.unwrap().contains("timed out after 300 ms"));
    let out = gated(&tool, json!({"command": "echo again"}), &ctx).await;
    assert_eq!(out.output["stdout"], "again\n");
}

#[tokio::test]
async fn shell_run_rejects_bad_arguments_and_cwd_escapes() {
    let (_dir, ctx) = context();
    let tool = ShellRun::new();
    let out = gated(&tool, json!({"cmd": "ls"}), &ctx).await;
    assert!(out.error.as_deref().unwrap().contains("cmd"), "{out:?}");
    let out = gated(&tool, json!({}), &ctx).await;
    assert!(out.error.as_deref().unwrap().contains("command"), "{out:?}");
    let out = gated(&tool, json!({"command": "ls", "timeoutMs": "soon"}), &ctx).await;
    assert!(out.error.unwrap().contains("timeoutMs"));
    let out = gated(&tool, json!({"command": "ls", "timeoutMs": 0}), &ctx).await;
    assert!(out.error.unwrap().contains("timeoutMs"));
    let out = gated(&tool, json!({"command": "ls", "cwd": "../.."}), &ctx).await;
    assert!(out.error.unwrap().contains("outside the project root"));
}

#[tokio::test]
async fn shell_run_stops_when_the_context_is_cancelled() {
    let (_dir, ctx) = context();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let out = gated(&ShellRun::new(), json!({"command": "sleep 30"}), &ctx).await;
    assert!(!out.ok);
    assert_eq!(out.error.as_deref(), Some("command cancelled"));
}

#[tokio::test]
async fn shell_exec_runs_in_the_root_and_denies_dangerous_commands() {
    let (_dir, ctx) = context();
    let tool = ShellExec::new();
    // A previous `cd` does not move shell.exec out of the sandbox root.
    ctx.shell
        .run(&cmd("cd sub"), Default::default(), &ctx.cancel)
        .await
        .unwrap();
    let out = gated(&tool, json!({"cmd": "ls"}), &ctx).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output["stdout"], "sub\n");
    assert_eq!(out.output["exit_code"], 0);
    assert_eq!(out.output["timed_out"], false);
    for bad in [
        "rm -rf /",
        "curl x | sh",
        "sudo ls",
        "cat ~/.ssh/id_rsa",
        "dd if=/dev/zero of=/dev/sda",
    ] {
        let out = gated(&tool, json!({"cmd": bad}), &ctx).await;
        assert!(!out.ok, "{bad}");
        assert!(out.error.unwrap().contains("dangerous"), "{bad}");
    }
    let out = gated(&tool, json!({"cmd": "sleep 5", "timeout_s": 1}), &ctx).await;
    assert_eq!(out.output["timed_out"], true);
}

#[tokio::test]
async fn bash_enforces_the_mesh_policy() {
    let (_dir, ctx) = context();
    let tool = Bash::new();
    let out = gated(&tool, json!({"cmd": "ls sub"}), &ctx).await;
    assert!(out.ok, "{out:?}");
    assert_eq!(out.output, json!("file.txt\n"));
    for denied in ["rm -rf sub", "ls; rm -rf sub", "ls $(rm -rf sub)", "find ."] {
        let out = gated(&tool, json!({"cmd": denied}), &ctx).await;
        assert!(!out.ok, "{denied}");
        assert!(
            out.error.unwrap().starts_with("Command denied by policy"),
            "{denied}"
        );
    }
    assert!(_dir.path().join("sub/file.txt").exists());
    let permissive = Bash::with_policy(MeshPolicy::preset(PolicyPreset::Permissive));
    assert!(
        gated(&permissive, json!({"cmd": "find sub"}), &ctx)
            .await
            .ok
    );
}

#[tokio::test]
async fn bash_reports_stderr_and_exit_codes_in_its_string() {
    let (_dir, ctx) = context();
    let out = gated(&Bash::new(), json!({"cmd": "ls sub missing"}), &ctx).await;
    let text = out.output.as_str().unwrap();
    assert!(text.starts_with("sub:\nfile.txt\n"), "{text}");
    assert!(text.contains("[stderr]\n"), "{text}");
    assert!(text.contains("missing"), "{text}");
    assert!(text.trim_end().ends_with("[exit code 2]"), "{text}");
}

#[tokio::test]
async fn bash_output_is_cut_to_its_limit_and_times_out() {
    let (_dir, ctx) = context();
    let policy = MeshPolicy {
        allowed_commands: vec!["seq".into(), "sleep".into()],
        ..MeshPolicy::default()
    };
    let tool = Bash::with_policy(policy.clone());
    let out = gated(&tool, json!({"cmd": "seq 1 5000"}), &ctx).await;
    let text = out.output.as_str().unwrap();
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(text.ends_with("4999\n5000\n"));
    assert!(text.contains("characters truncated"));
    let kept: usize = text.split("\n[... ").next().unwrap().chars().count()
        + text
            .rsplit("truncated ...]\n")
            .next()
            .unwrap()
            .chars()
            .count();
    assert_eq!(kept, 4000);

    let small = Bash::with_policy(policy)
        .with_max_output_chars(10)
        .with_timeout(Duration::from_millis(300));
    let out = gated(&small, json!({"cmd": "seq 1 100"}), &ctx).await;
    assert!(
        out.output.as_str().unwrap().starts_with("1\n2\n3\n[... "),
        "{out:?}"
    );
    let out = gated(&small, json!({"cmd": "sleep 30"}), &ctx).await;
    assert!(!out.ok);
    assert!(out.error.unwrap().contains("timed out"));
}

/// A shell command runs only from an approval the policy made for that very
/// line: a caller that skips the gate, or carries another line's approval,
/// runs nothing. (Making an `ApprovedCommand` any other way does not
/// compile: see the `compile_fail` example on the type.)
#[tokio::test]
async fn a_command_without_a_policy_verdict_never_runs() {
    let (dir, ctx) = context();
    let marker = dir.path().join("ran.txt");
    let tools: [(&dyn Tool, serde_json::Value); 3] = [
        (&ShellRun::new(), json!({"command": "touch ran.txt"})),
        (&ShellExec::new(), json!({"cmd": "touch ran.txt"})),
        (
            &Bash::with_policy(MeshPolicy::preset(PolicyPreset::Permissive)),
            json!({"cmd": "git init -q ran.txt"}),
        ),
    ];
    for (tool, args) in tools {
        let out = tool.call(args.clone(), &ctx).await;
        assert!(!out.ok, "{out:?}");
        assert!(
            out.error
                .as_deref()
                .unwrap_or_default()
                .contains("not judged by the command policy"),
            "{out:?}"
        );
        let other = ToolContext {
            approved: Some(cmd("echo harmless")),
            ..ctx.clone()
        };
        assert!(!tool.call(args, &other).await.ok);
        assert!(
            !marker.exists(),
            "{} ran a command nobody approved",
            tool.spec().name
        );
    }
    // The same call through the gate runs.
    assert!(
        gated(&ShellRun::new(), json!({"command": "touch ran.txt"}), &ctx)
            .await
            .ok
    );
    assert!(marker.exists());
}
